;;; pi-ide-merge.el --- pi's change merged into an unsaved buffer (issue 26) -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The pi-ide-context authors
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; pi's message carries, with each change, the change's hunks (the file before pi's tool -> after it) and
;; the SHA-256 of what the tool wrote (`changed[].merge', PROTOCOL.md "v0.5: pi's change merged into an
;; unsaved buffer").  The merge is a three-way merge of line ranges, the rule Neovim's pi-ide.inbox.merge and
;; editors/shared/merge.ts keep (the conformance kit's merge cases hold them together):
;;
;; - base: the file before pi's change(s), rebuilt from the file on disk (read as a reload reads it, its hash
;;   checked) by taking pi's hunks back out, newest change first;
;; - ours: the buffer's lines; the user's changes are the line diff base -> buffer (the `diff' program, as
;;   Emacs's own `diff-buffer-with-file' runs it, on two private temporary files);
;; - theirs: pi's hunks from base.
;;
;; A hunk of pi's that touches no change of the user's (shared base lines; an insertion in or at the edge of
;; the other's range) goes into the buffer at its place moved by the user's line-count changes above it; the
;; others are conflicts: the buffer keeps the user's text.  The merged hunks are one undo step of their own
;; (an `undo-boundary' before and after), the buffer stays modified and is never saved, no prompt, no window
;; or buffer change.  Pure functions first, the buffer's I/O last.

;;; Code:

(require 'cl-lib)

(defconst pi-ide-merge-max-conflicts 20 "Conflicts listed in one report.")
(defconst pi-ide-merge-max-conflict-lines 20 "The user's lines quoted per conflict.")
(defconst pi-ide-merge-max-line-bytes 500 "Bytes of each quoted line.")
(defconst pi-ide-merge-max-hunks 500 "Most hunks of pi's taken per change.")

;;;; Pure rules

(defun pi-ide-merge--int-p (v min)
  "Non-nil when V is an integer of at least MIN."
  (and (integerp v) (>= v min) (<= v (1- (expt 2 31)))))

(defun pi-ide-merge--lines-p (v)
  "Non-nil when V is a list of strings."
  (and (listp v) (cl-every #'stringp v)))

(defun pi-ide-merge-parse (merge)
  "MERGE (a changed entry's field, parsed JSON as an alist) checked, or nil.
A plist :sha256 :prev-seq :hunks, each hunk a plist :old-start :old-lines
:new-start :new-lines :old-text :new-text; hunks ascending and apart."
  (when (and (consp merge) (not (cl-every #'stringp merge)))
    (let ((sha (alist-get 'sha256 merge))
          (prev (alist-get 'prev_seq merge))
          (hunks (alist-get 'hunks merge :absent))
          (old-end 1) (new-end 1) (out nil) (ok t))
      (when (and (stringp sha) (string-match-p "\\`[0-9a-fA-F]\\{64\\}\\'" sha)
                 (or (null prev) (eq prev :null) (pi-ide-merge--int-p prev 1))
                 (listp hunks) (<= (length hunks) pi-ide-merge-max-hunks))
        (dolist (h hunks)
          (let* ((h (and (consp h) h))
                 (os (alist-get 'old_start h)) (ns (alist-get 'new_start h))
                 (ot (alist-get 'old_text h)) (nt (alist-get 'new_text h)))
            (if (and ok h (pi-ide-merge--int-p os 1) (pi-ide-merge--int-p ns 1)
                     (pi-ide-merge--lines-p ot) (pi-ide-merge--lines-p nt)
                     (eql (alist-get 'old_lines h) (length ot)) (eql (alist-get 'new_lines h) (length nt))
                     (>= os old-end) (>= ns new-end) (= (- ns new-end) (- os old-end)))
                (progn (push (list :old-start os :old-lines (length ot) :new-start ns :new-lines (length nt)
                                   :old-text ot :new-text nt)
                             out)
                       (setq old-end (+ os (length ot)) new-end (+ ns (length nt))))
              (setq ok nil))))
        (when ok
          (list :sha256 (downcase sha) :prev-seq (and (integerp prev) prev) :hunks (nreverse out)))))))

(defun pi-ide-merge-split (text)
  "TEXT's lines as pi splits a file: at \"\\n\", no empty line after a final one."
  (if (string= text "")
      nil
    (let ((lines (split-string text "\n")))
      (if (string= (car (last lines)) "") (butlast lines) lines))))

(defun pi-ide-merge-unapply (after hunks)
  "The lines before a change, from AFTER (a list of lines) and its HUNKS.
Nil when AFTER does not hold the hunks' new lines where they say."
  (let ((after (vconcat after)) (before nil) (at 0) (ok t))
    (dolist (h hunks)
      (when ok
        (let ((ns (1- (plist-get h :new-start))))
          (if (> ns (length after))
              (setq ok nil)
            (while (< at ns) (push (aref after at) before) (setq at (1+ at)))
            (cl-loop for line in (plist-get h :new-text) for i from ns
                     unless (and (< i (length after)) (equal (aref after i) line)) do (setq ok nil))
            (unless (= (1+ (length before)) (plist-get h :old-start)) (setq ok nil))
            (dolist (line (plist-get h :old-text)) (push line before))
            (setq at (+ ns (plist-get h :new-lines)))))))
    (when ok
      (while (< at (length after)) (push (aref after at) before) (setq at (1+ at)))
      (nreverse before))))

(defun pi-ide-merge-touches (a1 e1 a2 e2)
  "Non-nil when a change of base range [A1, E1) touches one of [A2, E2).
Shared lines; an insertion (an empty range) in the other's range or at its edge."
  (if (and (< a1 e1) (< a2 e2))
      (and (< a1 e2) (< a2 e1))
    (and (<= a1 e2) (<= a2 e1))))

(defun pi-ide-merge--cut (line)
  "LINE cut to `pi-ide-merge-max-line-bytes' bytes of UTF-8, at a character's edge."
  (if (<= (string-bytes line) pi-ide-merge-max-line-bytes)
      line
    (let ((n (length line)))
      (while (> (string-bytes (substring line 0 n)) pi-ide-merge-max-line-bytes) (setq n (1- n)))
      (substring line 0 n))))

(defun pi-ide-merge-plan (ours user theirs)
  "Merge pi's hunks THEIRS into OURS (the buffer's lines), the USER's edits known.
USER: the line diff base -> OURS, a list of (A A-END B B-END), 0-based
half-open ranges of base and of OURS, ascending.  A plist :edits (each
\(FROM TO LINES), 0-based ranges of OURS, ascending), :merged, :conflicts
\(alists line, lines, text), :conflicts-total and :places: one (FROM TO
TOUCHES) per hunk of THEIRS, in order, its place in OURS (a merged hunk's
lines it replaces; a touching one's span of the user's lines), for
approval's proposal against the buffer (issue 26 item 6)."
  (let ((ours (vconcat ours)) (user (vconcat user))
        (u 0) (delta 0) (shift 0) (edits nil) (merged 0) (conflicts nil) (total 0) (places nil))
    (dolist (h theirs)
      (let* ((a (1- (plist-get h :old-start))) (e (+ a (plist-get h :old-lines))) (last nil))
        (while (and (< u (length user))
                    (let ((c (aref user u)))
                      (and (<= (nth 1 c) a) (not (pi-ide-merge-touches (nth 0 c) (nth 1 c) a e)))))
          (let ((c (aref user u)))
            (setq delta (+ delta (- (nth 3 c) (nth 2 c)) (- (nth 0 c) (nth 1 c))) u (1+ u))))
        (setq last (1- u))
        (while (and (< (1+ last) (length user))
                    (let ((c (aref user (1+ last)))) (pi-ide-merge-touches (nth 0 c) (nth 1 c) a e)))
          (setq last (1+ last)))
        (if (< last u)
            (progn (push (list (+ a delta) (+ e delta) (plist-get h :new-text)) edits)
                   (push (list (+ a delta) (+ e delta) nil) places)
                   (setq merged (1+ merged)
                         shift (+ shift (- (plist-get h :new-lines) (plist-get h :old-lines)))))
          (setq total (1+ total))
          (let* ((first (aref user u)) (final (aref user last))
                 (from (min (+ a delta) (nth 2 first)))
                 (grown (cl-loop for i from u to last
                                 sum (let ((c (aref user i))) (- (- (nth 3 c) (nth 2 c)) (- (nth 1 c) (nth 0 c))))))
                 (to (max (+ e delta grown) (nth 3 final))))
            (push (list from to t) places)
            (when (< (length conflicts) pi-ide-merge-max-conflicts)
              (push `((line . ,(+ from shift 1)) (lines . ,(- to from))
                      (text . ,(cl-loop for i from from below (min to (+ from pi-ide-merge-max-conflict-lines))
                                        collect (pi-ide-merge--cut (aref ours i)))))
                    conflicts))))))
    (list :edits (nreverse edits) :merged merged :conflicts (nreverse conflicts) :conflicts-total total
          :places (nreverse places))))

(defun pi-ide-merge-parse-diff (output)
  "The hunks of `diff -U0' OUTPUT as (A A-END B B-END), 0-based half-open.
A side of no lines starts after the line its header names."
  (let ((hunks nil) (start 0))
    (while (string-match "^@@ -\\([0-9]+\\)\\(?:,\\([0-9]+\\)\\)? \\+\\([0-9]+\\)\\(?:,\\([0-9]+\\)\\)? @@"
                         output start)
      (let* ((a (string-to-number (match-string 1 output)))
             (an (if (match-string 2 output) (string-to-number (match-string 2 output)) 1))
             (b (string-to-number (match-string 3 output)))
             (bn (if (match-string 4 output) (string-to-number (match-string 4 output)) 1))
             (a0 (if (= an 0) a (1- a))) (b0 (if (= bn 0) b (1- b))))
        (push (list a0 (+ a0 an) b0 (+ b0 bn)) hunks)
        (setq start (match-end 0))))
    (nreverse hunks)))

(defun pi-ide-merge-phrase (conflict)
  "\"line N\" or \"lines N-M\" for CONFLICT."
  (let ((line (alist-get 'line conflict)) (lines (alist-get 'lines conflict)))
    (if (<= lines 1) (format "line %d" line) (format "lines %d-%d" line (+ line lines -1)))))

;;;; The buffer

(defun pi-ide-merge--user-changes (base ours)
  "Return the line diff BASE -> OURS (lists of lines) by the `diff' program.
The two texts go to private temporary files (mode 0600), removed after; an
error when `diff' fails."
  (let ((dir (with-file-modes #o700 (make-temp-file "pi-ide-merge" t)))
        (coding-system-for-write 'utf-8-unix)
        (coding-system-for-read 'utf-8-unix)
        (file-name-handler-alist nil))
    (unwind-protect
        (let ((a (expand-file-name "base" dir)) (b (expand-file-name "ours" dir)))
          (with-file-modes #o600
            (write-region (mapconcat (lambda (l) (concat l "\n")) base "") nil a nil 'silent)
            (write-region (mapconcat (lambda (l) (concat l "\n")) ours "") nil b nil 'silent))
          (with-temp-buffer
            (let* ((default-directory "/")
                   (code (call-process "diff" nil t nil "-U0" "-a" "--" a b)))
              (unless (memql code '(0 1)) (error "Diff failed (%s)" code))
              (pi-ide-merge-parse-diff (buffer-string)))))
      (delete-directory dir t))))

(defun pi-ide-merge--comparable-p ()
  "Are the current buffer's lines its file's bytes split at \"\\n\"?
UTF-8 (or ASCII) without a BOM, Unix line ends, not a multibyte-less buffer."
  (let ((coding (or buffer-file-coding-system 'undecided)))
    (and enable-multibyte-characters
         (memq (coding-system-eol-type coding) '(0))
         (memq (coding-system-base coding) '(utf-8 undecided us-ascii prefer-utf-8 utf-8-emacs)))))

(defun pi-ide-merge--apply (edits)
  "Apply EDITS (FROM TO LINES, ascending) to the current buffer, from the last.
One undo step of its own: an `undo-boundary' before and after."
  (let* ((text-end-nl (or (= (point-min) (point-max)) (eq (char-before (point-max)) ?\n)))
         (count (length (pi-ide-merge-split (buffer-substring-no-properties (point-min) (point-max)))))
         (pos (lambda (line)
                (save-excursion
                  (goto-char (point-min))
                  (if (>= line count) (point-max) (forward-line line) (point))))))
    (undo-boundary)
    (let ((inhibit-read-only t)
          ;; No truename while it changes: no lock file beside it, no "changed on disk" question (a prompt).
          (buffer-file-truename nil))
      (save-excursion
        (save-restriction
          (widen)
          (dolist (ed (reverse edits))
            (let* ((from (nth 0 ed)) (to (nth 1 ed)) (lines (nth 2 ed))
                   (body (mapconcat (lambda (l) (concat l "\n")) lines "")))
              (when (and (not text-end-nl) (>= to count) (not (string= body "")))
                (setq body (if (>= from count)
                               (concat "\n" (substring body 0 -1))
                             (substring body 0 -1))))
              (let ((start (funcall pos from)) (end (funcall pos to)))
                (delete-region start end)
                (goto-char start)
                (insert body)))))))
    (undo-boundary)))

(defun pi-ide-merge-chain (chain handled bytes)
  "Merge pi's CHAIN (its new edits, oldest first) into the current buffer.
HANDLED: the seq this Emacs handled of that pi before; BYTES: the file as
one verified read gave it (a unibyte string).  A plist :status (\"merged\" or
\"conflict\") :hunks :merged :conflicts, or nil when it cannot merge (then
the buffer is untouched)."
  (let ((infos nil) (ok t) (prev-seq nil))
    (cl-loop for c in chain for i from 0
             do (let ((info (pi-ide-merge-parse (alist-get 'merge c))))
                  (if (or (null info)
                          (and (= i 0) (plist-get info :prev-seq) (> (plist-get info :prev-seq) handled))
                          (and (> i 0) (not (eql (plist-get info :prev-seq) prev-seq))))
                      (setq ok nil)
                    (push info infos))
                  (setq prev-seq (alist-get 'seq c))))
    (when (and ok infos (stringp bytes) (pi-ide-merge--comparable-p)
               (not (string-match-p "\r" bytes))
               (not (string-prefix-p "\357\273\277" bytes))
               (equal (secure-hash 'sha256 bytes) (plist-get (car infos) :sha256)))
      (let* ((now (pi-ide-merge-split (decode-coding-string bytes 'utf-8-unix)))
             (base now))
        (dolist (info infos) (when base (setq base (pi-ide-merge-unapply base (plist-get info :hunks)))))
        (when base
          (let* ((theirs (if (= (length infos) 1)
                             (plist-get (car infos) :hunks)
                           (mapcar (lambda (r)
                                     (list :old-start (1+ (nth 0 r)) :old-lines (- (nth 1 r) (nth 0 r))
                                           :new-lines (- (nth 3 r) (nth 2 r))
                                           :new-text (cl-subseq now (nth 2 r) (nth 3 r))))
                                   (pi-ide-merge--user-changes base now))))
                 (ours (save-restriction (widen)
                                         (pi-ide-merge-split (buffer-substring-no-properties (point-min) (point-max)))))
                 (plan (pi-ide-merge-plan ours (pi-ide-merge--user-changes base ours) theirs)))
            (when (plist-get plan :edits) (pi-ide-merge--apply (plist-get plan :edits)))
            (list :status (if (> (plist-get plan :conflicts-total) 0) "conflict" "merged")
                  :hunks (length theirs) :merged (plist-get plan :merged)
                  :conflicts (plist-get plan :conflicts))))))))

(provide 'pi-ide-merge)
;;; pi-ide-merge.el ends here
