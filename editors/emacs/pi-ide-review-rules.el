;;; pi-ide-review-rules.el --- Pure rules of pi-ide's review (protocol v0.4) -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The pi-ide-context authors
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; What the review UI (pi-ide-review.el: overlays, reverts, commands) decides, as data in and data out:
;; the newest change of a file, where a deletion stands, a hunk's kind, the capped `reverted' and the
;; hunk list.  Tested with literal data (ERT tables in test/emacs/pi-ide-state-tests.el, seeded random
;; change sets in test/emacs/pi-ide-review-tests.el).  The names keep the `pi-ide-state-' prefix they
;; had when this lived in pi-ide-state.el.

;;; Code:

(require 'cl-lib)
(require 'pi-ide-protocol)
(require 'pi-ide-approval-rules)

(defun pi-ide-state-newest-entry (change-sets file)
  "Return the newest change of FILE in the change set list CHANGE-SETS, or nil.
That is the change of the newest run that changed FILE.
CHANGE-SETS is an alist: pi pid -> runs (see `pi-ide-state-validate-review').
Returns a plist :pid :run :file :baseline :hunks."
  (let ((best nil))
    (dolist (set change-sets)
      (dolist (run (cdr set))
        (dolist (f (plist-get run :files))
          (when (and (equal (plist-get f :file) file)
                     (or (null best) (> (plist-get run :run) (plist-get best :run))))
            (setq best (append (list :pid (car set) :run (plist-get run :run)) f))))))
    best))

(defun pi-ide-state-text-lines (text)
  "TEXT's lines as pi counts them: without terminators, none for \"\"."
  (let ((lines (split-string text "\n")))
    (if (equal (car (last lines)) "") (butlast lines) lines)))

(defun pi-ide-state-deletion-at-p (lines last-line baseline hunk &optional start)
  "Does the text of LINES stand around deletion HUNK as pi left it?
LINES is as in `pi-ide-state-lines-at-p', LAST-LINE its number of lines and
BASELINE the vector of the baseline's lines.  The line that followed the
deleted lines in the baseline must be at START (default the hunk's
new_start); for lines deleted at the end, the text ends at START - 1 with
the line that came before them.  Then the mark of the deletion falls where
pi deleted."
  (let* ((start (or start (alist-get 'new_start hunk)))
         (after (+ (alist-get 'old_start hunk) (length (alist-get 'old_text hunk))))
         (before (1- (alist-get 'old_start hunk))))
    (and (> last-line 0) (>= start 1)
         (if (<= after (length baseline))
             (pi-ide-state-lines-at-p lines start (list (aref baseline (1- after))))
           (and (= last-line (1- start))
                (or (< before 1)
                    (and (<= before (length baseline))
                         (pi-ide-state-lines-at-p lines last-line (list (aref baseline (1- before)))))))))))

(defun pi-ide-state-hunk-kind (hunk)
  "What HUNK did: `added' (no old lines), `deleted' (no new lines) or `changed'."
  (cond ((null (alist-get 'old_text hunk)) 'added)
        ((null (alist-get 'new_text hunk)) 'deleted)
        (t 'changed)))

(defun pi-ide-state-remember-revert (reverted entry hunk line)
  "REVERTED (newest last) with HUNK of ENTRY reverted at buffer LINE.
ENTRY is from `pi-ide-state-newest-entry'.  At most
`pi-ide-state-max-reverted', the newest.  A hunk reverted again (after an
undo of its revert) is listed once, as the newest: keyed by pi_pid, run and
id, as pi and every client key a revert (test/fixtures/revert-key.ts)."
  (let ((key (list (plist-get entry :pid) (plist-get entry :run) (alist-get 'id hunk))))
    (last (append (cl-remove key reverted
                             :test #'equal
                             :key (lambda (r) (list (alist-get 'pi_pid r) (alist-get 'run r) (alist-get 'id r))))
                  (list `((pi_pid . ,(plist-get entry :pid)) (run . ,(plist-get entry :run))
                          (id . ,(alist-get 'id hunk)) (file . ,(plist-get entry :file))
                          (line . ,line) (lines . ,(length (alist-get 'new_text hunk))))))
          pi-ide-state-max-reverted)))

;; Written as `compilation-mode' reads a location: RET on a line visits it, when the user asks.
(defun pi-ide-state-hunk-list (change-sets)
  "The lines listing pi's hunks of its newest run in CHANGE-SETS.
CHANGE-SETS is as in `pi-ide-state-newest-entry'.  Each line is
\"FILE:LINE: pi +ADDED -REMOVED  FIRST LINE\", in pi's order."
  (let ((newest nil))
    (dolist (set change-sets)
      (let ((run (car (last (cdr set)))))
        (when (and run (or (null newest) (> (plist-get run :run) (plist-get newest :run))))
          (setq newest run))))
    (cl-loop for f in (plist-get newest :files)
             append (cl-loop for h in (plist-get f :hunks)
                             for new = (alist-get 'new_text h)
                             for old = (alist-get 'old_text h)
                             collect (format "%s:%d: pi +%d -%d  %s" (pi-ide-state-inert (plist-get f :file))
                                             (max 1 (alist-get 'new_start h)) (length new) (length old)
                                             (pi-ide-state-inert (or (car new) (car old) "")))))))

(provide 'pi-ide-review-rules)
;;; pi-ide-review-rules.el ends here
