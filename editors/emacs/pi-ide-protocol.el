;;; pi-ide-protocol.el --- pi's files as pi-ide reads them, and the protocol's limits -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The pi-ide-context authors
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; The protocol's side of the Emacs client: the limits (PROTOCOL.md, "Limits"; the same numbers as
;; src/protocol/limits.ts, checked by test/emacs/limits-agree.test.ts), the names of the state
;; directory's files, and the validation of pi's files (the message, the approval request, the change
;; set): depth scan, caps, hunk and request checks.  Pure like pi-ide-state.el: nothing here reads a
;; buffer, a window or the file system (the readers are in pi-ide-inbox.el).  The names keep the
;; `pi-ide-state-' prefix they had when this lived in pi-ide-state.el.

;;; Code:

(require 'cl-lib)

;;;; Limits


(defconst pi-ide-state-max-file-bytes (* 1024 1024)
  "The largest state file pi reads (PROTOCOL.md, \"Limits\").")

(defconst pi-ide-state-max-selection-bytes (* 256 1024)
  "Cap on the selection text once JSON-encoded (PROTOCOL.md, \"Limits\").")

(defconst pi-ide-state-max-message-bytes (* 64 1024)
  "Largest pi message file an editor reads (PROTOCOL.md, v0.3).")

(defconst pi-ide-state-max-changed 50
  "Most `changed' entries a pi message may hold.")

(defconst pi-ide-state-max-last-turn 50
  "Most `last_turn' paths a pi message may hold.")

(defconst pi-ide-state-max-reports 200
  "Most `files' reports a state file holds.
pi reads no more (PROTOCOL.md, \"Limits\").")

(defconst pi-ide-state-kept-reports 20
  "Each pi's newest reports, kept at all times.
Older ones stay while that pi's newest message lists their change
\(PROTOCOL.md `files', v0.5): no clock.")

(defconst pi-ide-state-max-diagnostics 100
  "Most diagnostics listed per buffer.")

(defconst pi-ide-state-max-diagnostic-message 500
  "Longest diagnostic message, in characters.")

(defconst pi-ide-state-max-approval-bytes (* 1024 1024)
  "Largest approval request an editor reads (PROTOCOL.md, \"Approval\").")

(defconst pi-ide-state-max-decisions 20
  "Most decisions the state file lists, newest last (PROTOCOL.md, \"Approval\").")

(defconst pi-ide-state-max-review-bytes (* 8 1024 1024)
  "Largest change set an editor reads (PROTOCOL.md, \"v0.4\").")

(defconst pi-ide-state-max-reverted 50
  "Most reverts the state file lists, newest last (PROTOCOL.md, \"reverted\").")

(defconst pi-ide-state-max-id-bytes 64
  "Most bytes (UTF-8) of an id in pi's files: a hunk's, a request's.
PROTOCOL.md, `hunks[].id' and `request.id'; an id has at least one byte.")

(defconst pi-ide-state-max-depth 16
  "Most levels of lists and objects in pi's files (PROTOCOL.md, \"Limits\").
A deeper file is refused before it is decoded.")

(defconst pi-ide-state-max-hunks 500
  "Most hunks of a change set's file or of a request (PROTOCOL.md, \"Limits\").
More is refused whole, by the count, before any work per hunk.")

(defconst pi-ide-state-max-runs 3
  "Most runs of a change set (PROTOCOL.md, \"Limits\"); more is refused whole.")

(defconst pi-ide-state-max-line (1- (expt 2 31))
  "The largest line number or line count taken from pi's hunks.")

(defconst pi-ide-state-max-pid (1- (expt 2 31))
  "Largest pid a file name may carry (pid_t is a signed 32-bit integer).")

(defconst pi-ide-state-max-unsaved-bytes (* 2 1024 1024)
  "Cap on the unsaved buffers' texts, in all, once JSON-encoded (v0.5).")

(defconst pi-ide-state-max-unsaved-buffers 32
  "Most unsaved buffers listed in <pid>.buffers.json (v0.5).")

;;;; File names

(defun pi-ide-state-pid-of-name (name &optional prefix)
  "The pid the file NAME stands for: \"<pid>.json\" (after PREFIX), else nil.
Only the canonical spelling counts: decimal, no sign, no leading zero, at most
2^31-1, so \"0123.json\" cannot alias \"123.json\" (parseStateFileName in
src/protocol/state-dir.ts)."
  (let ((rest (and (stringp name)
                   (if prefix (and (string-prefix-p prefix name) (substring name (length prefix))) name))))
    (when (and rest (let ((case-fold-search nil))
                      (string-match "\\`\\([1-9][0-9]\\{0,9\\}\\)\\.json\\'" rest)))
      (let ((pid (string-to-number (match-string 1 rest))))
        (and (<= pid pi-ide-state-max-pid) pid)))))

(defun pi-ide-state-pid-of-approval-name (name)
  "The pid of pi's approval request NAME, \"pi-<pid>.approval.json\", else nil.
The pid is spelled as in every state file name (`pi-ide-state-pid-of-name')."
  (when (and (stringp name)
             (let ((case-fold-search nil))
               (string-match "\\`pi-\\([0-9]+\\)\\.approval\\.json\\'" name)))
    (pi-ide-state-pid-of-name (concat (match-string 1 name) ".json"))))

(defun pi-ide-state-buffers-name (pid)
  "The name of editor PID's unsaved buffers file, \"<pid>.buffers.json\" (v0.5)."
  (format "%d.buffers.json" pid))

(defun pi-ide-state-review-name (pid)
  "The name of pi PID's change set in the state directory.
PID may be an identity (`pi-ide-state-pi-key-of-name')."
  (format "pi-%s.review.json" pid))

;;;; pi's identity across pid namespaces (protocol v0.5)

(defconst pi-ide-state-initial-pid-ns "pid:[4026531836]"
  "The initial (host) pid namespace, as readlink of /proc/self/ns/pid names it.")

(defvar pi-ide-state--pi-keys (obarray-make)
  "The symbols that name pis of another namespace than the initial one.")

(defun pi-ide-state-pi-key-of-name (name)
  "The identity of the pi whose file NAME is, else nil.
NAME is pi-<pid>.json, pi-<pid>-<ns digits>.json, or either with .review,
.approval or (v0.5) .ask before .json.  A pi is the pair (pid, pid
namespace): its pid (an integer) for a pi of the initial namespace (or not
knowing its own), a symbol <pid>-<ns digits> (compared with `eq', as pids
are) for any other.  Both numbers canonical decimal; a suffix naming the
initial namespace is no name pi writes."
  (when (and (stringp name)
             (let ((case-fold-search nil))
               (string-match (concat "\\`pi-\\([1-9][0-9]\\{0,9\\}\\)\\(?:-\\([1-9][0-9]\\{0,19\\}\\)\\)?"
                                     "\\(?:\\.review\\|\\.approval\\|\\.ask\\)?\\.json\\'")
                             name)))
    (let ((pid (string-to-number (match-string 1 name)))
          (ns (match-string 2 name)))
      (and (<= pid pi-ide-state-max-pid)
           (not (equal ns "4026531836"))
           (if ns (intern (format "%d-%s" pid ns) pi-ide-state--pi-keys) pid)))))

(defun pi-ide-state-key-pid (key)
  "The pid of pi identity KEY."
  (if (integerp key) key (string-to-number (symbol-name key))))

(defun pi-ide-state-key-ns (key)
  "The pid namespace of pi identity KEY, as `pid_ns' spells it."
  (if (integerp key)
      pi-ide-state-initial-pid-ns
    (format "pid:[%s]" (substring (symbol-name key) (1+ (string-match "-" (symbol-name key)))))))

(defun pi-ide-state-ns-disagrees (msg key)
  "Why MSG, a file of pi identity KEY, names another namespace than its name.
Else nil: `pid_ns' is the name's namespace, and may be left out only in a
name without one (a pi before v0.5, or not knowing its own)."
  (let ((ns (alist-get 'pid_ns msg :absent)))
    (unless (or (and (eq ns :absent) (integerp key))
                (and (stringp ns) (equal ns (pi-ide-state-key-ns key))))
      (format "pid_ns %s does not match the file name" (if (eq ns :absent) "(none)" (format "%S" ns))))))

(defun pi-ide-state-pi-fields (key msg)
  "The fields that name pi KEY in what this Emacs writes back, from MSG.
`pi_pid', and `pi_ns' exactly as pi's file MSG said (left out when it said
none): in reports, decisions and reverts."
  (let ((ns (alist-get 'pid_ns msg)))
    `((pi_pid . ,(pi-ide-state-key-pid key)) ,@(and (stringp ns) `((pi_ns . ,ns))))))

(defun pi-ide-state-key-of-record (r)
  "The pi identity that record R written back names: `pi_pid' and `pi_ns'.
A `pi_ns' left out is the initial namespace."
  (let ((pid (alist-get 'pi_pid r)) (ns (alist-get 'pi_ns r)))
    (if (and (stringp ns) (not (equal ns pi-ide-state-initial-pid-ns))
             (string-match "\\`pid:\\[\\([0-9]+\\)\\]\\'" ns))
        (intern (format "%s-%s" pid (match-string 1 ns)) pi-ide-state--pi-keys)
      pid)))

(defvar pi-ide-state--own-pid-ns :unread "This Emacs's pid namespace, read once.")

(defun pi-ide-state-own-pid-ns ()
  "Return this Emacs's pid namespace: readlink of /proc/self/ns/pid.
Nil where /proc does not say."
  (when (eq pi-ide-state--own-pid-ns :unread)
    (setq pi-ide-state--own-pid-ns
          (let ((link (ignore-errors (let ((file-name-handler-alist nil)) (file-symlink-p "/proc/self/ns/pid")))))
            (and (stringp link) (string-match-p "\\`pid:\\[[0-9]+\\]\\'" link) link))))
  pi-ide-state--own-pid-ns)

(defun pi-ide-state-judges-key-p (key)
  "May this Emacs judge pi KEY's pid by its process (liveness)?
Only in its own pid namespace: elsewhere the pid names another process or
none.  An Emacs not knowing its own counts itself in the initial namespace."
  (equal (pi-ide-state-key-ns key) (or (pi-ide-state-own-pid-ns) pi-ide-state-initial-pid-ns)))

;;;; pi's files (protocol v0.3 and v0.4)

(defun pi-ide-state--id-p (v)
  "Is V an id of pi's: a string of 1 to `pi-ide-state-max-id-bytes' bytes?
Counted in bytes of UTF-8, not characters."
  (and (stringp v) (<= 1 (length (encode-coding-string v 'utf-8)) pi-ide-state-max-id-bytes)))

(defun pi-ide-state--line-p (v)
  "Is V a line number or count of pi's: an integer 0 to `pi-ide-state-max-line'?"
  (and (integerp v) (<= 0 v pi-ide-state-max-line)))

(defun pi-ide-state--integer-p (v &optional min)
  "Is V an integer of at least MIN (default 0)?"
  (and (integerp v) (>= v (or min 0)) (< v (expt 2 53))))

(defun pi-ide-state--lines-p (v)
  "Is V a list of strings (a JSON array of lines)?"
  (and (listp v) (cl-every #'stringp v)))

(defun pi-ide-state--hunk-p (h)
  "Is H a hunk of the change set's shape (PROTOCOL.md, v0.4)?
Its id is 1 to `pi-ide-state-max-id-bytes' bytes of UTF-8 (counted in
bytes, not characters); `old_start' and `new_start' are line numbers from 1."
  (and (consp h) (consp (car h))
       (pi-ide-state--id-p (alist-get 'id h))
       (pi-ide-state--line-p (alist-get 'old_start h)) (>= (alist-get 'old_start h) 1)
       (pi-ide-state--line-p (alist-get 'new_start h)) (>= (alist-get 'new_start h) 1)
       (pi-ide-state--lines-p (alist-get 'old_text h))
       (pi-ide-state--lines-p (alist-get 'new_text h))))

(defun pi-ide-state-over-cap (what hunks)
  "Why the list HUNKS (of WHAT) is over `pi-ide-state-max-hunks', or nil."
  (let ((n (length hunks)))
    (and (> n pi-ide-state-max-hunks)
         (format "%s: %d, over the cap of %d: refused" what n pi-ide-state-max-hunks))))

(defun pi-ide-state-too-deep (text)
  "Why TEXT, one of pi's files, is refused for its nesting, or nil.
Counts `[' and `{' outside strings, without decoding: nesting deeper
than `pi-ide-state-max-depth' is refused.  Malformed text is the
decoder's to refuse.  In a buffer: `skip-chars-forward' passes the
text between brackets and quotes at C speed (8 MiB in a fraction of a
second)."
  (with-temp-buffer
    (insert text)
    (goto-char (point-min))
    (let ((depth 0) (deep nil))
      (while (and (not deep) (progn (skip-chars-forward "^][{}\"") (not (eobp))))
        (let ((c (char-after)))
          (forward-char 1)
          (cond
           ((eq c ?\")
            ;; To the string's closing quote, over its escapes.
            (while (progn (skip-chars-forward "^\"\\\\") (eq (char-after) ?\\))
              (goto-char (min (point-max) (+ (point) 2))))
            (unless (eobp) (forward-char 1)))
           ((memq c '(?\[ ?{))
            (setq depth (1+ depth))
            (when (> depth pi-ide-state-max-depth) (setq deep t)))
           (t (setq depth (1- depth))))))
      (and deep (format "nested deeper than %d levels: refused unread" pi-ide-state-max-depth)))))

(defun pi-ide-state-validate-message (msg name-pid)
  "Why MSG (parsed JSON) is not a message of the pi NAME-PID, or nil.
NAME-PID is the identity its name spells (`pi-ide-state-pi-key-of-name'):
the pid of pi-<pid>.json, or a pi of another namespace."
  (cond
   ((not (and (consp msg) (consp (car msg)))) "not a JSON object")
   ((not (equal (alist-get 'kind msg) "pi")) "kind is not \"pi\"")
   ((not (stringp (alist-get 'protocol msg))) "no protocol version")
   ((not (eql (alist-get 'pid msg) (pi-ide-state-key-pid name-pid)))
    (format "pid field %S does not match the file name" (alist-get 'pid msg)))
   ((pi-ide-state-ns-disagrees msg name-pid))
   ((let ((e (alist-get 'editor_pid msg :absent)))
      (not (or (memq e '(:absent :null)) (pi-ide-state--integer-p e 1))))
    "editor_pid is not a pid")
   ((not (pi-ide-state--integer-p (alist-get 'seq msg))) "seq is not an integer")
   ((let ((c (alist-get 'changed msg :absent)))
      (not (and (listp c) (not (eq c :absent)) (<= (length c) pi-ide-state-max-changed))))
    "changed is not a list of at most 50 entries")
   ((cl-some (lambda (c)
               (not (and (consp c) (consp (car c))
                         (stringp (alist-get 'file c)) (string-prefix-p "/" (alist-get 'file c))
                         (pi-ide-state--integer-p (alist-get 'seq c) 1))))
             (alist-get 'changed msg))
    "a changed entry is not {file: absolute path, seq: integer}")
   ((let ((l (alist-get 'last_turn msg :absent)))
      (not (or (eq l :absent) (and (listp l) (<= (length l) pi-ide-state-max-last-turn) (cl-every #'stringp l)))))
    "last_turn is not a list of at most 50 paths")))

(defun pi-ide-state-validate-approval (msg name-pid now)
  "MSG (parsed JSON) as pi NAME-PID's request for approval at NOW.
Returns (REQUEST . nil), or (nil . WHY) when it is not one or has run out.
REQUEST is a plist :pi-pid :pi-key (the identity NAME-PID) :pi-fields (see
`pi-ide-state-pi-fields') :editor-pid :id :tool :file :created :note :hunks
:hunks-total :timeout :expires; malformed hunks are dropped (the request
still counts: the user is asked all the same, as for a proposal too large
to carry)."
  (let* ((obj (and (consp msg) (consp (car msg))))
         (r (and obj (alist-get 'request msg)))
         (id (and (consp r) (alist-get 'id r)))
         (file (and (consp r) (alist-get 'file r))))
    (cond
     ((not (and obj (equal (alist-get 'kind msg) "pi-approval"))) '(nil . "not a pi approval request"))
     ((not (eql (alist-get 'pid msg) (pi-ide-state-key-pid name-pid)))
      (cons nil (format "pid field %S does not match the file name" (alist-get 'pid msg))))
     ((pi-ide-state-ns-disagrees msg name-pid) (cons nil (pi-ide-state-ns-disagrees msg name-pid)))
     ((not (pi-ide-state--integer-p (alist-get 'editor_pid msg) 1)) '(nil . "editor_pid is not a pid"))
     ((not (and (consp r) (consp (car r)))) '(nil . "request is not an object"))
     ((not (pi-ide-state--id-p id))
      (cons nil (format "request.id is not a string of 1 to %d bytes" pi-ide-state-max-id-bytes)))
     ((not (and (stringp file) (string-prefix-p "/" file))) '(nil . "request.file is not an absolute path"))
     ((not (and (stringp (alist-get 'tool r)) (pi-ide-state--integer-p (alist-get 'timeout_s r) 1)
                (numberp (alist-get 'expires r))))
      '(nil . "request.tool, timeout_s or expires is missing"))
     ((not (listp (alist-get 'hunks r))) '(nil . "request.hunks is not a list"))
     ((pi-ide-state-over-cap "request.hunks" (alist-get 'hunks r))
      (cons nil (pi-ide-state-over-cap "request.hunks" (alist-get 'hunks r))))
     ((< (alist-get 'expires r) now) '(nil . "its request ran out: pi no longer waits for it"))
     (t
      (let ((hunks (cl-remove-if-not #'pi-ide-state--hunk-p (alist-get 'hunks r)))
            (total (alist-get 'hunks_total r)))
        (cons (list :pi-pid (pi-ide-state-key-pid name-pid) :pi-key name-pid
                    :pi-fields (pi-ide-state-pi-fields name-pid msg) :editor-pid (alist-get 'editor_pid msg) :id id :tool (alist-get 'tool r)
                    :file file :created (eq (alist-get 'created r) t)
                    :note (and (stringp (alist-get 'note r)) (alist-get 'note r))
                    :hunks hunks :hunks-total (if (pi-ide-state--line-p total) total (length hunks))
                    :timeout (alist-get 'timeout_s r) :expires (alist-get 'expires r))
              nil))))))

(defun pi-ide-state-validate-review (msg name-pid)
  "MSG (parsed JSON) as pi NAME-PID's change set.
Returns (RUNS . nil), or (nil . WHY) when it is not one.  RUNS is a list of
plists :run :files, oldest first; each file a plist :file :baseline :hunks.
Malformed runs, files and hunks are dropped (the rest still counts)."
  (let ((obj (and (consp msg) (consp (car msg)))) (over nil))
    (cond
     ((not (and obj (equal (alist-get 'kind msg) "pi-review"))) '(nil . "not a pi change set"))
     ((not (eql (alist-get 'pid msg) (pi-ide-state-key-pid name-pid)))
      (cons nil (format "pid field %S does not match the file name" (alist-get 'pid msg))))
     ((pi-ide-state-ns-disagrees msg name-pid) (cons nil (pi-ide-state-ns-disagrees msg name-pid)))
     ((not (listp (alist-get 'runs msg))) '(nil . "runs is not a list"))
     ((> (length (alist-get 'runs msg)) pi-ide-state-max-runs)
      (cons nil (format "runs: %d, over the cap of %d: refused"
                        (length (alist-get 'runs msg)) pi-ide-state-max-runs)))
     ;; The caps by the counts alone, before any work per hunk.
     ((setq over
            (cl-some (lambda (run)
                       (let ((files (and (consp run) (consp (car run)) (alist-get 'files run))))
                         (cl-some (lambda (f)
                                    (and (consp f) (consp (car f)) (listp (alist-get 'hunks f))
                                         (pi-ide-state-over-cap "hunks of a file" (alist-get 'hunks f))))
                                  (and (listp files) files))))
                     (alist-get 'runs msg)))
      (cons nil over))
     (t
      (cons (cl-loop
             for run in (alist-get 'runs msg)
             when (and (consp run) (consp (car run)) (pi-ide-state--integer-p (alist-get 'run run))
                       (listp (alist-get 'files run)))
             collect (list :run (alist-get 'run run)
                           :files (cl-loop
                                   for f in (alist-get 'files run)
                                   for file = (and (consp f) (consp (car f)) (alist-get 'file f))
                                   when (and (stringp file) (string-prefix-p "/" file)
                                             (listp (alist-get 'hunks f)))
                                   collect (list :file file
                                                 :baseline (let ((b (alist-get 'baseline f))) (and (stringp b) b))
                                                 :hunks (cl-remove-if-not #'pi-ide-state--hunk-p
                                                                          (alist-get 'hunks f))))))
            nil)))))

;;;; pi's text, shown

(defun pi-ide-state-inert (s)
  "S with control characters (a newline in a file name) shown as \"?\".
A path or line from pi's file then takes one line of the echo area or buffer."
  (if (string-match-p "[\0-\37\177]" s) (replace-regexp-in-string "[\0-\37\177]" "?" s t t) s))

(provide 'pi-ide-protocol)
;;; pi-ide-protocol.el ends here
