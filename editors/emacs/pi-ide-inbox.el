;;; pi-ide-inbox.el --- pi's messages to pi-ide: reloads and reports -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The pi-ide-context authors
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Protocol v0.3, pi -> editor.  pi writes <state dir>/pi-<pid>.json naming the editor it is connected to
;; and the files its tools changed.  This watches the state directory (`file-notify-add-watch'; a timer
;; that looks every `pi-ide-inbox-poll-interval' seconds where file notification is unavailable), reads
;; those files through the same checks pi applies to ours, and for a live pi of ours that names this Emacs
;; reloads the changed files this Emacs already visits:
;;
;; - unmodified buffer: the bytes of one verified read (`pi-ide-inbox-read-script') put in as changes (no
;;   file read, no revert hook: nothing else the path points at ever enters it), point and window start of
;;   every window showing it kept;
;; - buffer with unsaved changes, pi's change carrying its hunks (v0.5, issue 26): merged into the buffer
;;   (pi-ide-merge.el), one undo step of its own, the buffer left modified and unsaved: `merged', or
;;   `conflict' where pi's hunks touch the user's unsaved lines (those keep the user's text; one message
;;   naming the lines and how to compare);
;; - otherwise a buffer with unsaved changes is never touched; one message naming the file (no prompt), once
;;   per conflict (until the buffer is saved or reverted), and `pi-ide-status' says how to compare or reload;
;; - the buffer's file gone, or no longer what the buffer was read from: not reloaded.
;;
;; It never opens, creates, runs or deletes anything because a message said so.  Each outcome becomes a
;; `files' report in our state file, and `pi' says which message was handled last.  Malformed, oversized
;; or foreign messages are ignored with one message each, never an error.
;;
;; Protocol v0.4: pi's requests for approval, pi-<pid>.approval.json, are read here through the same checks
;; (with their own size cap) and handed to pi-ide-approval.el; so is pi's change set, pi-<pid>.review.json,
;; read after each message of a pi connected to this Emacs (pi writes it before the message that announces
;; the change) and handed to pi-ide-review.el.

;;; Code:

(require 'cl-lib)
(require 'filenotify)
(require 'pi-ide-state)
(require 'pi-ide-inbox-rules)
(require 'pi-ide-writer)
(require 'pi-ide-diagnostics)
(require 'pi-ide-approval)
(require 'pi-ide-review)
(require 'pi-ide-merge)
(require 'pi-ide-ask)

(defvar pi-ide-inbox-poll-interval)
(declare-function pi-ide-send-answered "pi-ide-send" (msg))
(defvar pi-ide-inbox-use-file-notify)

(defvar pi-ide-inbox-report-function #'ignore
  "Called with no argument when a message was handled.
pi-ide.el asks for a prompt write.")

(defvar pi-ide-inbox--dir nil "The state directory watched.")
(defvar pi-ide-inbox--watch nil "The `file-notify' descriptor, or nil.")
(defvar pi-ide-inbox--poll-timer nil "The fallback timer, or nil.")
(defvar pi-ide-inbox--polled nil "Alist: file name -> (mtime size inode) last seen by the fallback.")
(defvar pi-ide-inbox--queued nil "File names waiting to be read.")
(defvar pi-ide-inbox--flush-timer nil "The timer that reads the queued names.")
(defvar pi-ide-inbox--pis nil
  "Alist: pi identity -> plist :message :handled :at.
A pi is its pid and pid namespace: see `pi-ide-state-pi-key-of-name'.")
(defvar pi-ide-inbox--reports nil
  "Reports on pi's changes, newest last (alists with a `buffer' key).")
(defvar pi-ide-inbox--last nil "(PID . SEQ) of the last pi message handled.")
(defvar pi-ide-inbox--problems nil "Alist: file name -> why it was ignored (each said once).")
(defvar pi-ide-inbox--told nil "Alist: buffer -> file name, for the \"unsaved, not reloaded\" said.")
(defvar pi-ide-inbox--alive-at nil "Alist: pi identity -> when it was last seen alive.")
(defvar pi-ide-inbox--review-read nil
  "Alist: pi identity -> the identity of the change set last loaded.
See `pi-ide-inbox--file-key'.")

(defvar pi-ide-inbox--alive-timer nil
  "While any pi is recorded, looks every 2 s whether it still runs, or nil.")
(defvar pi-ide-inbox--was-connected nil "A pi was connected at the last look.")

(defvar-local pi-ide-inbox--read-as nil
  "What this buffer's path was when it was read: a plist :name :type :real, or nil.")

(defconst pi-ide-inbox-how-to-resolve
  "Compare: M-x diff-buffer-with-file   Take pi's version: M-x revert-buffer"
  "What a user with unsaved changes can do about pi's version.")

(defun pi-ide-inbox--say (fmt &rest args)
  "Show FMT with ARGS in the echo area, logged, never a prompt."
  (let ((message-log-max (if (integerp message-log-max) message-log-max 1000)))
    (message "%s" (apply #'format fmt args))))

(defun pi-ide-inbox--problem (name why)
  "Say once per file NAME that it was ignored and WHY; keep it for `pi-ide-status'."
  (unless (equal (cdr (assoc name pi-ide-inbox--problems)) why)
    (setf (alist-get name pi-ide-inbox--problems nil nil #'equal) why)
    (pi-ide-inbox--say "(pi-ide) ignoring %s: %s" name why)))

(defun pi-ide-inbox-liveness (key)
  "Whether pi KEY's pid is `alive' (a process of ours), `foreign' or `dead'.
KEY is a pi identity (`pi-ide-state-pi-key-of-name').  A pi of another pid
namespace (a sandbox, a container) counts as `alive': its pid names another
process here, or none, so it is not judged at all (PROTOCOL.md v0.5)."
  (let ((attrs (and (pi-ide-state-judges-key-p key)
                    (ignore-errors (process-attributes (pi-ide-state-key-pid key))))))
    (cond ((not (pi-ide-state-judges-key-p key)) 'alive)
          ((null attrs) 'dead)
          ((eql (alist-get 'euid attrs) (user-uid)) 'alive)
          (t 'foreign))))

(defun pi-ide-inbox--path-identity (path)
  "What PATH is on disk: a plist :type :real :resolves-to, or nil when absent."
  (let ((info (pi-ide-writer-inspect path)))
    (when info
      (let* ((type (plist-get info :type))
             (real (ignore-errors (let ((file-name-handler-alist nil)) (file-truename path))))
             (target (if (eq type 'link) (and real (pi-ide-writer-inspect real)) info)))
        (list :type type :real real :resolves-to (plist-get target :type))))))

(defun pi-ide-inbox-buffer-read ()
  "Record what the current buffer's path is, now that it was read.
At read time, not when pi's message comes: by then the path may already have
been swapped."
  (pi-ide-inbox-buffer-synced)
  (let* ((path (and buffer-file-name (expand-file-name buffer-file-name)))
         (now (and path (pi-ide-inbox--path-identity path))))
    (setq pi-ide-inbox--read-as
          (and now (plist-get now :real) (eq (plist-get now :resolves-to) 'file)
               (list :name path :type (plist-get now :type) :real (plist-get now :real))))))

(defvar-local pi-ide-inbox--conflicts nil
  "Issue 26: where merges' conflicts stand in this buffer, newest last.
Each a (START . END) of markers: the user's lines kept there, END nil when
the user had deleted them.  Listed with pi's hunks (`pi-ide-hunks') until
the buffer and its file agree again.")

(defun pi-ide-inbox--unlist-conflicts ()
  "Forget the current buffer's merge conflicts."
  (dolist (c pi-ide-inbox--conflicts)
    (set-marker (car c) nil)
    (when (cdr c) (set-marker (cdr c) nil)))
  (setq pi-ide-inbox--conflicts nil))

(defun pi-ide-inbox--list-conflicts (conflicts)
  "Remember where CONFLICTS (a merge's, alists line and lines) stand here.
Markers: they follow the user's edits."
  (save-excursion
    (save-restriction
      (widen)
      (dolist (c conflicts)
        (goto-char (point-min))
        (forward-line (1- (alist-get 'line c)))
        (let ((start (copy-marker (point))) (lines (alist-get 'lines c)))
          (setq pi-ide-inbox--conflicts
                (append pi-ide-inbox--conflicts
                        (list (cons start (and (> lines 0)
                                               (progn (forward-line (1- lines)) (copy-marker (point)))))))))))))

(defun pi-ide-inbox-conflict-lines ()
  "The merges' conflicts in buffers still modified, as `pi-ide-hunks' lists them.
Each line \"FILE:LINE: conflict: your unsaved lines N-M kept; ...\", where
the user's lines stand now."
  (cl-loop for buffer in (buffer-list)
           when (and (buffer-local-value 'pi-ide-inbox--conflicts buffer) (buffer-modified-p buffer)
                     (buffer-local-value 'buffer-file-name buffer))
           append (with-current-buffer buffer
                    (save-restriction
                      (widen)
                      (cl-loop for (start . end) in pi-ide-inbox--conflicts
                               when (marker-buffer start)
                               collect (let* ((first (line-number-at-pos start t))
                                              (last (if end (line-number-at-pos end t) first)))
                                         (format "%s:%d: conflict: your unsaved %s kept; pi's version is on disk (M-x diff-buffer-with-file)"
                                                 (pi-ide-state-inert (expand-file-name buffer-file-name)) first
                                                 (cond ((null end) (format "line %d (you deleted pi's lines there)" first))
                                                       ((= first last) (format "line %d" first))
                                                       (t (format "lines %d-%d" first last))))))))))

(defun pi-ide-inbox-buffer-synced ()
  "The current buffer and its file agree again: a later conflict is told again.
Its merges' conflicts are no longer listed."
  (pi-ide-inbox--unlist-conflicts)
  (setq pi-ide-inbox--told (assq-delete-all (current-buffer) pi-ide-inbox--told)))

(defun pi-ide-inbox--line-col (pos)
  "(LINE . COLUMN) of POS in the current buffer, both counted from the buffer start."
  (save-excursion
    (goto-char pos)
    (cons (line-number-at-pos pos t) (current-column))))

(defun pi-ide-inbox--goto-line-col (line-col)
  "The position of LINE-COL, a (LINE . COLUMN), clamped into the current buffer."
  (save-excursion
    (save-restriction
      (widen)
      (goto-char (point-min))
      (forward-line (1- (car line-col)))
      (move-to-column (cdr line-col))
      (point))))

;; The one read of a file pi changed, shared with the Vim client (editors/vim/autoload/pi_ide/inbox.vim,
;; READ_SCRIPT, the same script): Emacs Lisp cannot open a file without following a symlink, so perl does it.
(defconst pi-ide-inbox-read-script
  (concat "use Fcntl; my ($p, $max, $out) = @ARGV; my @l = lstat($p) or exit(10); (-f _ && $l[4] == $<) or "
          "exit(11); sysopen(my $f, $p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK) or exit($!{ENOENT} ? 10 : 11); "
          "my @s = stat($f); (-f _ && $s[0] == $l[0] && $s[1] == $l[1]) or exit(11); $s[7] <= $max or "
          "exit(12); my ($b, $n) = (\"\"); while ($n = sysread($f, $b, 65536, length $b)) { exit(12) if "
          "length($b) > $max } defined $n or exit(11); my $o; if (defined $out) { sysopen($o, $out, "
          "O_WRONLY | O_CREAT | O_EXCL, 0600) or exit(13) } else { $o = \\*STDOUT } binmode $o; print $o $b "
          "or exit(13); close $o or exit(13); exit(0)")
  "Perl that prints the bytes of the file ARGV[0], at most ARGV[1] of them.
Only when `lstat' sees a regular file of ours and the file opened
\(O_NOFOLLOW|O_NONBLOCK: a symlink swapped in after the check fails, a FIFO
never blocks) is the one `lstat' saw.  Exit 0: read; 10: gone; 11: refused;
12: too large.")

(defconst pi-ide-inbox-max-reload-bytes (* 32 1024 1024)
  "A file larger than this is not reloaded (`refused'): `revert-buffer' reads it.")

(defun pi-ide-inbox--read-verified (path)
  "Read PATH once with `pi-ide-inbox-read-script'.
The bytes as a unibyte string, or `gone' or `refused'."
  (condition-case nil
      (with-temp-buffer
        (set-buffer-multibyte nil)
        (let* ((default-directory "/")
               (file-name-handler-alist nil)
               (coding-system-for-read 'binary)
               (code (call-process "perl" nil (list t nil) nil "-e" pi-ide-inbox-read-script path
                                   (number-to-string pi-ide-inbox-max-reload-bytes))))
          (cond ((eql code 0) (buffer-string))
                ((eql code 10) 'gone)
                (t 'refused))))
    (error 'refused)))

(defun pi-ide-inbox--apply (buffer bytes path)
  "Put BYTES, PATH's content, into unmodified BUFFER, keeping every window's view.
Decoded with the buffer's coding system, put in as changes (no file is read,
no read hook runs: `after-change-functions' and language servers see only
these bytes), then the buffer is left unmodified and its record of PATH's
modification time brought up to date from `lstat' (no \"changed on disk\"
after).  Point and window start are kept as lines and columns, as Neovim's
`winsaveview' keeps them: pi's edit above them must not move the view.
Non-nil when its text changed."
  (with-current-buffer buffer
    (let* ((views (mapcar (lambda (w) (list w (pi-ide-inbox--line-col (window-point w))
                                            (pi-ide-inbox--line-col (window-start w))))
                          (get-buffer-window-list buffer nil t)))
           (point (pi-ide-inbox--line-col (point)))
           (before (buffer-chars-modified-tick))
           (coding (or buffer-file-coding-system 'undecided))
           (text (decode-coding-string bytes coding))
           (source (generate-new-buffer " *pi-ide-reload*" t)))
      (unwind-protect
          (save-restriction
            (widen)
            (unless (string= text (buffer-substring-no-properties (point-min) (point-max)))
              (with-current-buffer source (insert text))
              ;; No `buffer-file-truename' while it changes: Emacs would lock the file (a `.#' link beside it)
              ;; and ask about a supersession (the file changed on disk), a prompt.
              (let ((inhibit-read-only t)
                    (buffer-file-truename nil))
                (replace-buffer-contents source 0.5))))
        (kill-buffer source))
      (set-buffer-modified-p nil)
      (let ((attrs (let ((file-name-handler-alist nil)) (file-attributes path))))
        (when (and attrs (eq (aref (file-attribute-modes attrs) 0) ?-))
          (set-visited-file-modtime (file-attribute-modification-time attrs))))
      (goto-char (pi-ide-inbox--goto-line-col point))
      (dolist (v views)
        (let ((w (nth 0 v)))
          (when (and (window-live-p w) (eq (window-buffer w) buffer))
            (set-window-start w (save-excursion (goto-char (pi-ide-inbox--goto-line-col (nth 2 v)))
                                                (line-beginning-position))
                              t)
            (set-window-point w (pi-ide-inbox--goto-line-col (nth 1 v))))))
      (/= before (buffer-chars-modified-tick)))))

(defun pi-ide-inbox--reload (buffer path)
  "Reload unmodified BUFFER from PATH (its own, or a link's recorded real path).
One verified read, applied as it is: \"reloaded\", \"unchanged\", \"gone\" or
\"refused\".  What `pi-ide--file-read' does after a read follows, but the
record of the path: it stays as it was when the user read it."
  (let ((read (pi-ide-inbox--read-verified path)))
    (if (symbolp read)
        (symbol-name read)
      (prog1 (if (pi-ide-inbox--apply buffer read path) "reloaded" "unchanged")
        (with-current-buffer buffer
          (pi-ide-approval-buffer-read)
          (pi-ide-review-buffer-read))
        (pi-ide-diagnostics-reloaded buffer)))))

(defun pi-ide-inbox--tell-modified (buffer file &optional where)
  "Tell once per conflict that pi changed FILE, unsaved in BUFFER.
WHERE (issue 26): the lines of a merge's conflict (\"line 3\", \"lines 3-4\"),
pi's other hunks being in the buffer."
  (unless (assq buffer pi-ide-inbox--told)
    (let ((name (let ((file-name-handler-alist nil)) (abbreviate-file-name file))))
      (push (cons buffer name) pi-ide-inbox--told)
      (if where
          (pi-ide-inbox--say "(pi-ide) pi's change to %s touches your unsaved %s: kept yours. Compare: M-x diff-buffer-with-file"
                             name where)
        (pi-ide-inbox--say "(pi-ide) pi changed %s; unsaved buffer kept, see M-x pi-ide-status" name)))))

(defun pi-ide-inbox--merge (buffer file path chain handled)
  "Merge pi's CHAIN into the modified BUFFER visiting FILE read from PATH.
HANDLED: the seq of that pi handled before.  The report's status and its
`merge' field as a cons, or nil when nothing was merged (status `modified')."
  (let* ((bytes (pi-ide-inbox--read-verified path))
         (outcome (and (stringp bytes)
                       (condition-case err
                           (with-current-buffer buffer (pi-ide-merge-chain chain handled bytes))
                         (error (pi-ide-inbox--say "(pi-ide) merge of %s failed: %s" file
                                                   (error-message-string err))
                                nil)))))
    (when outcome
      (let ((conflicts (plist-get outcome :conflicts)))
        (if (equal (plist-get outcome :status) "merged")
            ;; The buffer has pi's change: a save must not ask whether to overwrite the changed file.
            (let ((attrs (let ((file-name-handler-alist nil)) (file-attributes path))))
              (when attrs
                (with-current-buffer buffer
                  (set-visited-file-modtime (file-attribute-modification-time attrs)))))
          (with-current-buffer buffer (pi-ide-inbox--list-conflicts conflicts))
          (pi-ide-inbox--tell-modified buffer file (pi-ide-merge-phrase (car conflicts))))
        (cons (plist-get outcome :status)
              `((hunks . ,(plist-get outcome :hunks)) (merged . ,(plist-get outcome :merged))
                (conflicts . ,(vconcat (mapcar (lambda (c)
                                                 `((line . ,(alist-get 'line c)) (lines . ,(alist-get 'lines c))
                                                   (text . ,(vconcat (alist-get 'text c)))))
                                               conflicts)))))))))

(defun pi-ide-inbox--handle-change (change pi-pid &optional chain handled)
  "Handle one CHANGE of PI-PID: find the buffer, decide, act; the report.
PI-PID is a pid, or the fields that name the pi (`pi-ide-state-pi-fields').
CHAIN: that pi's new changes of the file, oldest first (CHANGE last), and
HANDLED the seq it had before, for a merge into an unsaved buffer."
  (let* ((file (alist-get 'file change))
         ;; No file name handlers while a path from a message is looked up: "/ssh:host:..." must not make
         ;; TRAMP connect anywhere (and block on a password prompt), nor any other handler act on it.
         (buffer (let ((file-name-handler-alist nil)) (find-buffer-visiting file)))
         ;; Fresh conses (not a quoted constant): the fields are set in place below.
         (report (append
                  (list (cons 'file file) (cons 'seq (alist-get 'seq change)))
                  (if (consp pi-pid) (copy-alist pi-pid) (list (cons 'pi_pid pi-pid)))
                  (list (cons 'status "not-open") (cons 'version :null) (cons 'modified :false)
                        (cons 'diagnostics_expected :false)))))
    (when buffer
      (with-current-buffer buffer
        (let* ((path (expand-file-name buffer-file-name))
               (was (and pi-ide-inbox--read-as
                         (equal (plist-get pi-ide-inbox--read-as :name) path)
                         pi-ide-inbox--read-as))
               (now (pi-ide-inbox--path-identity path))
               (verdict (pi-ide-state-reload-verdict was now))
               (modified (buffer-modified-p))
               (merged (and modified (equal verdict "reload")
                            (pi-ide-inbox--merge buffer file
                                                 (if (eq (plist-get now :type) 'link) (plist-get now :real) path)
                                                 (or chain (list change)) (or handled 0))))
               (status (cond ((not (equal verdict "reload")) verdict)
                             (merged (car merged))
                             (modified (pi-ide-inbox--tell-modified buffer file) "modified")
                             (t (pi-ide-inbox-buffer-synced)
                                (pi-ide-inbox--reload
                                 buffer (if (eq (plist-get now :type) 'link) (plist-get now :real) path))))))
          (setf (alist-get 'status report) status
                (alist-get 'version report) (buffer-chars-modified-tick)
                (alist-get 'modified report) (if (buffer-modified-p) t :false)
                (alist-get 'diagnostics_expected report)
                (if (pi-ide-diagnostics-expected-p buffer) t :false))
          (when merged (nconc report (list (cons 'merge (cdr merged)))))
          (push (cons 'buffer buffer) report))))
    report))

(defun pi-ide-inbox--handle-message (msg &optional key)
  "Act on MSG, a validated message from a live pi, identity KEY.
KEY defaults to MSG's pid (a pi of the initial namespace).  Non-nil when it
names this Emacs."
  (let ((pid (or key (alist-get 'pid msg))))
    (if (not (eql (alist-get 'editor_pid msg) (emacs-pid)))
        ;; Not (or no longer) connected to us: forget it, act on nothing.
        (progn (pi-ide-inbox--forget-pi pid) nil)
      (let* ((handled (or (plist-get (alist-get pid pi-ide-inbox--pis) :handled) 0)))
        (setf (alist-get pid pi-ide-inbox--pis)
              (list :message msg :handled (max handled (alist-get 'seq msg)) :at (float-time)))
        ;; v0.5: what became of our send (pi-ide-send.el), if this message says.
        (when (fboundp 'pi-ide-send-answered)
          (condition-case nil (pi-ide-send-answered msg) (error nil)))
        (dolist (c (pi-ide-state-newest-changes (alist-get 'changed msg) handled))
          (let ((chain (sort (cl-remove-if-not (lambda (o) (and (equal (alist-get 'file o) (alist-get 'file c))
                                                                 (> (alist-get 'seq o) handled)))
                                               (copy-sequence (alist-get 'changed msg)))
                             (lambda (a b) (< (alist-get 'seq a) (alist-get 'seq b))))))
            (setq pi-ide-inbox--reports
                  (pi-ide-state-remember-report
                   pi-ide-inbox--reports
                   (pi-ide-inbox--handle-change c (pi-ide-state-pi-fields pid msg) chain handled)
                   (pi-ide-inbox--listed)))))
        (setq pi-ide-inbox--last (cons (alist-get 'pid msg) (alist-get 'seq msg)))
        t))))

(defun pi-ide-inbox--read (name max)
  "Read and parse NAME in the state directory, at most MAX bytes.
Returns (MSG . nil), (nil . WHY), or (nil . nil) when it is gone.  The one
reader of pi's files: `pi-ide-writer-read-trusted' (regular file, ours, no
group/other bits, never a link or a FIFO), then `pi-ide-state-too-deep',
then JSON."
  (pcase-let* ((`(,text . ,why) (pi-ide-writer-read-trusted (concat pi-ide-inbox--dir "/" name) max))
               ;; Before the decoder: it need not see a file pi would never write (PROTOCOL.md, "Limits").
               (deep (and text (pi-ide-state-too-deep text))))
    (cond
     ((null text) (cons nil why))
     (deep (cons nil deep))
     (t
      (condition-case nil
          (cons (json-parse-string text :object-type 'alist :array-type 'list
                                   :null-object :null :false-object :false)
                nil)
        (error (cons nil "not valid JSON")))))))

(defun pi-ide-inbox--listed ()
  "Return, per pi whose message names this Emacs, what its newest message lists.
An alist from the pi's identity to its `changed' entries: their reports stay
\(`pi-ide-state-retain-reports')."
  (mapcar (lambda (entry) (cons (car entry) (alist-get 'changed (plist-get (cdr entry) :message))))
          pi-ide-inbox--pis))

(defun pi-ide-inbox--forget-pi (pid)
  "Forget pi PID's message, request and change set.
It exited, or is not (or no longer) connected to us."
  (setq pi-ide-inbox--pis (assq-delete-all pid pi-ide-inbox--pis)
        pi-ide-inbox--review-read (assq-delete-all pid pi-ide-inbox--review-read))
  (pi-ide-approval-forget pid)
  (pi-ide-review-forget pid))

(defun pi-ide-inbox--file-key (path)
  "Tell one version of PATH from the next: (INODE SIZE MTIME), or nil.
pi replaces its files by renaming a new one over them."
  (let ((info (pi-ide-writer-inspect path)))
    (and info (list (plist-get info :inode) (plist-get info :size)
                    (file-attribute-modification-time
                     (let ((file-name-handler-alist nil)) (file-attributes path)))))))

(defun pi-ide-inbox--read-review (pid)
  "Read pi PID's change set; PID is live and its message names this Emacs.
A change set read before is not parsed again: it can be 8 MiB."
  (let* ((name (pi-ide-state-review-name pid))
         (key (pi-ide-inbox--file-key (concat pi-ide-inbox--dir "/" name))))
    (unless (and key (equal key (alist-get pid pi-ide-inbox--review-read)))
      (pcase-let ((`(,msg . ,why) (pi-ide-inbox--read name pi-ide-state-max-review-bytes)))
        (cond
         (why (pi-ide-inbox--problem name why))
         ;; None (yet): pi changed nothing, or is older than v0.4.
         ((null msg) (pi-ide-review-forget pid))
         (t
          (pcase-let ((`(,runs . ,bad) (pi-ide-state-validate-review msg pid)))
            (if bad
                (pi-ide-inbox--problem name bad)
              (setq pi-ide-inbox--problems (assoc-delete-all name pi-ide-inbox--problems))
              (setf (alist-get pid pi-ide-inbox--review-read) key)
              (pi-ide-review-load pid runs (pi-ide-state-pi-fields pid msg))))))))))

(defun pi-ide-inbox--kind (name)
  "What NAME in the state directory is: `message', `approval', `ask', or nil.
A pi's message pi-<pid>.json or pi-<pid>-<ns digits>.json, its request
for approval (.approval.json) or (v0.5) its show and ask requests
\(.ask.json); a change set is read after its message."
  (and (pi-ide-state-pi-key-of-name name)
       (cond ((string-suffix-p ".approval.json" name) 'approval)
             ((string-suffix-p ".ask.json" name) 'ask)
             ((string-suffix-p ".review.json" name) nil)
             (t 'message))))

(defun pi-ide-inbox-process (name)
  "Read and handle NAME in the state directory.
NAME is a pi message, pi-<digits>.json, or a request for approval,
pi-<digits>.approval.json; a pi of another pid namespace has its namespace's
digits after the pid (pi-<pid>-<ns digits>.json, PROTOCOL.md v0.5).
Non-nil when acted on."
  (let* ((kind (pi-ide-inbox--kind name))
         (approval-pid (eq kind 'approval))
         (pid (and kind (pi-ide-state-pi-key-of-name name))))
    ;; The directory itself may have been swapped or opened up since the watch began.
    (if (eq kind 'ask)
        (when (and pid pi-ide-inbox--dir (null (pi-ide-writer-check pi-ide-inbox--dir)))
          (pi-ide-inbox--process-ask name pid))
    (when (and pid pi-ide-inbox--dir (null (pi-ide-writer-check pi-ide-inbox--dir)))
      (pcase-let ((`(,msg . ,why) (pi-ide-inbox--read name (if approval-pid pi-ide-state-max-approval-bytes
                                                             pi-ide-state-max-message-bytes))))
        (cond
         (why (pi-ide-inbox--problem name why) nil)
         ;; pi exited and removed its message, or removed its request once the wait ended.
         ((null msg) (if approval-pid (pi-ide-approval-forget pid) (pi-ide-inbox--forget-pi pid)) nil)
         (t
          (pcase-let ((`(,request . ,bad) (if approval-pid
                                               (pi-ide-state-validate-approval msg pid (float-time))
                                             (cons msg (pi-ide-state-validate-message msg pid)))))
            (if bad
                (progn (pi-ide-inbox--problem name bad) nil)
              (pcase (pi-ide-inbox-liveness pid)
                ('alive
                 (setf (alist-get pid pi-ide-inbox--alive-at) (float-time))
                 (setq pi-ide-inbox--problems (assoc-delete-all name pi-ide-inbox--problems))
                 (cond (approval-pid (pi-ide-approval-load request) t)
                       ((pi-ide-inbox--handle-message request pid) (pi-ide-inbox--read-review pid) t)))
                (life
                 (when (eq life 'foreign)
                   (pi-ide-inbox--problem name (format "pid %d belongs to another user"
                                                       (pi-ide-state-key-pid pid))))
                 (pi-ide-inbox--forget-pi pid)
                 nil)))))))))))

(defun pi-ide-inbox--process-ask (name key)
  "Read pi KEY's show and ask requests, NAME (v0.5), and answer them.
Only a live pi of this user counts; a request file gone is nothing to do.
Nil: the state file does not change."
  (pcase-let ((`(,msg . ,why) (pi-ide-inbox--read name pi-ide-ask-max-bytes)))
    (cond
     (why (pi-ide-inbox--problem name why))
     ((null msg) nil)
     (t (pcase (pi-ide-inbox-liveness key)
          ('alive
           (let ((bad (pi-ide-ask-receive msg key (float-time))))
             (if bad (pi-ide-inbox--problem name bad)
               (setq pi-ide-inbox--problems (assoc-delete-all name pi-ide-inbox--problems)))))
          ('foreign (pi-ide-inbox--problem name (format "pid %d belongs to another user"
                                                        (pi-ide-state-key-pid key)))))))
    nil))

(defun pi-ide-inbox-refresh-approvals ()
  "Read the waiting requests' files again now: what pi asks at this moment.
A request decided elsewhere, run out or replaced since the last event read
must not be answered as if it still waited."
  (dolist (p (copy-sequence pi-ide-approval--pending))
    (condition-case err
        (pi-ide-inbox-process (format "pi-%s.approval.json" (car p)))
      (error (pi-ide-inbox--problem (format "pi-%s.approval.json" (car p))
                                    (format "internal error: %s" (error-message-string err)))))))

(defun pi-ide-inbox--check-alive ()
  "Notice a pi that went without a word (the alive timer).
A killed pi leaves its message, and no event says it went.
The unsaved buffers (pi-ide-buffers.el) go to pi only while one is
connected, so a change either way asks for a state write (which writes or
removes them).  The timer stops once no pi is recorded."
  (condition-case nil
      (let ((now (and (pi-ide-inbox-connected) t)))
        (unless (eq now pi-ide-inbox--was-connected)
          (setq pi-ide-inbox--was-connected now)
          (force-mode-line-update t)
          (funcall pi-ide-inbox-report-function))
        (unless (or pi-ide-inbox--pis (null pi-ide-inbox--alive-timer))
          (cancel-timer pi-ide-inbox--alive-timer)
          (setq pi-ide-inbox--alive-timer nil)))
    (error nil)))

(defun pi-ide-inbox--flush ()
  "Read the queued names; ask for a state write when any was read."
  (setq pi-ide-inbox--flush-timer nil)
  (let ((names (prog1 (delete-dups pi-ide-inbox--queued) (setq pi-ide-inbox--queued nil))))
    (dolist (name names)
      (condition-case err
          (pi-ide-inbox-process name)
        (error (pi-ide-inbox--problem name (format "internal error: %s" (error-message-string err))))))
    (when names
      (setq pi-ide-inbox--was-connected (and (pi-ide-inbox-connected) t))
      (when (and pi-ide-inbox--pis (null pi-ide-inbox--alive-timer))
        (setq pi-ide-inbox--alive-timer (run-at-time 2 2 #'pi-ide-inbox--check-alive)))
      (force-mode-line-update t)
      (funcall pi-ide-inbox-report-function))))

(defun pi-ide-inbox--queue (name)
  "Queue NAME for reading when it is a pi message or approval request name."
  (when (pi-ide-inbox--kind name)
    (push name pi-ide-inbox--queued)
    (unless pi-ide-inbox--flush-timer
      (setq pi-ide-inbox--flush-timer (run-at-time 0 nil #'pi-ide-inbox--flush)))))

(defun pi-ide-inbox--on-event (event)
  "A `file-notify' EVENT in the state directory."
  (condition-case nil
      (dolist (f (cddr event))
        (when (stringp f) (pi-ide-inbox--queue (file-name-nondirectory f))))
    (error nil)))

(defun pi-ide-inbox--scan ()
  "Queue each pi message in the state directory changed since the last scan."
  (condition-case nil
      (let ((seen nil))
        (dolist (name (let ((file-name-handler-alist nil))
                        (directory-files pi-ide-inbox--dir nil "\\`pi-[0-9]+\\(?:-[0-9]+\\)?\\(?:\\.approval\\|\\.ask\\)?\\.json\\'" t)))
          (let ((key (pi-ide-inbox--file-key (concat pi-ide-inbox--dir "/" name))))
            (push (cons name key) seen)
            (unless (equal key (cdr (assoc name pi-ide-inbox--polled)))
              (pi-ide-inbox--queue name))))
        ;; A message gone since the last scan: its pi exited.
        (dolist (old pi-ide-inbox--polled)
          (unless (assoc (car old) seen) (pi-ide-inbox--queue (car old))))
        (setq pi-ide-inbox--polled seen))
    (error nil)))

(defun pi-ide-inbox-start (dir)
  "Watch DIR (already checked) for pi's messages.
Returns the method used: `file-notify' or `timer'."
  (pi-ide-inbox-stop)
  (setq pi-ide-inbox--dir dir)
  (pi-ide-ask-start dir)
  (setq pi-ide-inbox--watch
        (and pi-ide-inbox-use-file-notify
             (condition-case nil
                 (let ((file-name-handler-alist nil))
                   (file-notify-add-watch dir '(change) #'pi-ide-inbox--on-event))
               (error nil))))
  (if pi-ide-inbox--watch
      (progn
        ;; A pi that wrote before this Emacs started.
        (dolist (name (ignore-errors (let ((file-name-handler-alist nil)) (directory-files dir nil "\\`pi-"))))
          (pi-ide-inbox--queue name))
        'file-notify)
    (pi-ide-inbox--scan)
    (setq pi-ide-inbox--poll-timer
          (run-at-time pi-ide-inbox-poll-interval pi-ide-inbox-poll-interval #'pi-ide-inbox--scan))
    'timer))

(defun pi-ide-inbox-stop ()
  "Stop watching."
  (when pi-ide-inbox--watch
    (ignore-errors (file-notify-rm-watch pi-ide-inbox--watch))
    (setq pi-ide-inbox--watch nil))
  (when pi-ide-inbox--poll-timer (cancel-timer pi-ide-inbox--poll-timer))
  (when pi-ide-inbox--flush-timer (cancel-timer pi-ide-inbox--flush-timer))
  (when pi-ide-inbox--alive-timer (cancel-timer pi-ide-inbox--alive-timer))
  (setq pi-ide-inbox--poll-timer nil pi-ide-inbox--flush-timer nil pi-ide-inbox--alive-timer nil
        pi-ide-inbox--was-connected nil
        pi-ide-inbox--queued nil pi-ide-inbox--polled nil)
  ;; Not listening any more: no request or change set counts (the mode line and `pi-ide-status' follow).
  (setq pi-ide-inbox--review-read nil)
  (pi-ide-approval-reset)
  (pi-ide-review-reset)
  (pi-ide-ask-reset))

(defun pi-ide-inbox-method ()
  "How pi's messages are noticed now: `file-notify', `timer' or nil."
  (cond (pi-ide-inbox--watch 'file-notify) (pi-ide-inbox--poll-timer 'timer)))

(defun pi-ide-inbox-annotate (payload buffer)
  "PAYLOAD (from `pi-ide-state-build') with the v0.3 fields.
BUFFER is the active one."
  ;; Reports whose change their pi no longer lists go, beyond each pi's newest (PROTOCOL.md `files').
  (setq pi-ide-inbox--reports (pi-ide-state-retain-reports pi-ide-inbox--reports (pi-ide-inbox--listed)))
  (let ((b (alist-get 'active_buffer payload)))
    (nconc b `((version . ,(with-current-buffer buffer (buffer-chars-modified-tick)))
               (diagnostics . ,(pi-ide-diagnostics-collect buffer))))
    (nconc payload
           `((protocol . "0.3")
             ,@(and pi-ide-inbox--reports
                    `((files . ,(vconcat
                                 (mapcar (lambda (r)
                                           (let ((buf (alist-get 'buffer r)))
                                             (append (assq-delete-all 'buffer (copy-sequence r))
                                                     `((diagnostics . ,(if (buffer-live-p buf)
                                                                           (pi-ide-diagnostics-collect buf)
                                                                         :null))))))
                                         pi-ide-inbox--reports)))))
             (pi . ,(if pi-ide-inbox--last
                        `((pid . ,(car pi-ide-inbox--last)) (seq . ,(cdr pi-ide-inbox--last)))
                      :null))
             ;; v0.4: always present, empty before the first decision: pi then knows it can ask here.
             (decisions . ,(pi-ide-approval-report))
             ,@(let ((reverted (pi-ide-review-report))) (and reverted `((reverted . ,reverted))))))))

(defun pi-ide-inbox-report-buffer-p (buffer)
  "Does a listed report describe BUFFER (so its diagnostics matter to pi)?"
  (cl-some (lambda (r) (eq (alist-get 'buffer r) buffer)) pi-ide-inbox--reports))

(defun pi-ide-inbox-connected ()
  "The pi connected to this Emacs, the newest live one naming it.
A plist :pid :cwd :last-turn, or nil."
  (let ((now (float-time)) (best nil))
    (dolist (entry (copy-sequence pi-ide-inbox--pis))
      (let ((pid (car entry)) (p (cdr entry)))
        ;; At most every 2 s: the mode line asks on every redisplay.
        (when (> (- now (or (alist-get pid pi-ide-inbox--alive-at) 0)) 2)
          (if (eq (pi-ide-inbox-liveness pid) 'alive)
              (setf (alist-get pid pi-ide-inbox--alive-at) now)
            (setq pi-ide-inbox--pis (assq-delete-all pid pi-ide-inbox--pis) p nil)))
        (when (and p (or (null best) (> (plist-get p :at) (plist-get best :at))))
          (setq best p))))
    (when best
      (let ((m (plist-get best :message)))
        (list :pid (alist-get 'pid m)
              :cwd (let ((c (alist-get 'cwd m))) (if (stringp c) c ""))
              :last-turn (let ((l (alist-get 'last_turn m))) (if (listp l) l nil)))))))

(defun pi-ide-inbox-all ()
  "Every live pi whose message names this Emacs, newest first (v0.5 send to pi).
A list of plists :key (its identity) :pid :fields (`pi-ide-state-pi-fields':
pi_pid, and pi_ns as its message said) :cwd."
  (pi-ide-inbox-connected)              ; drops the dead ones
  (mapcar (lambda (entry)
            (let* ((key (car entry)) (m (plist-get (cdr entry) :message)) (cwd (alist-get 'cwd m)))
              (list :key key :pid (pi-ide-state-key-pid key) :fields (pi-ide-state-pi-fields key m)
                    :cwd (if (stringp cwd) cwd ""))))
          (sort (copy-sequence pi-ide-inbox--pis)
                (lambda (a b) (> (plist-get (cdr a) :at) (plist-get (cdr b) :at))))))

(defun pi-ide-inbox-summary-lines ()
  "Lines for `pi-ide-status'."
  (let ((pi (pi-ide-inbox-connected)) (lines nil))
    (if (null pi)
        (push "pi: none connected" lines)
      (push (format "pi: connected, pid %d, cwd %s" (plist-get pi :pid) (plist-get pi :cwd)) lines)
      (push (if (plist-get pi :last-turn)
                (concat "pi changed in its last turn: "
                        (let ((file-name-handler-alist nil)) ; paths from a message: no handler acts on them
                          (mapconcat #'abbreviate-file-name (plist-get pi :last-turn) ", ")))
              "pi changed no files in its last turn")
            lines))
    (dolist (l (pi-ide-approval-summary-lines)) (push l lines))
    (dolist (l (pi-ide-review-summary-lines)) (push l lines))
    (dolist (told pi-ide-inbox--told)
      (when (and (buffer-live-p (car told)) (buffer-modified-p (car told)))
        (push (format "not reloaded: pi changed %s on disk, your unsaved changes were kept. %s"
                      (cdr told) pi-ide-inbox-how-to-resolve)
              lines)))
    (dolist (p (sort (copy-sequence pi-ide-inbox--problems) (lambda (a b) (string< (car a) (car b)))))
      (push (format "ignored %s: %s" (car p) (cdr p)) lines))
    (nreverse lines)))

(defun pi-ide-inbox-forget-buffer ()
  "The current buffer is killed: drop what refers to it."
  (pi-ide-inbox--unlist-conflicts)
  (setq pi-ide-inbox--told (assq-delete-all (current-buffer) pi-ide-inbox--told)))

(provide 'pi-ide-inbox)
;;; pi-ide-inbox.el ends here
