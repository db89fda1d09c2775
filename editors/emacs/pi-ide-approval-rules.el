;;; pi-ide-approval-rules.el --- Pure rules of pi-ide's approval (protocol v0.4) -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The pi-ide-context authors
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; What the approval UI (pi-ide-approval.el) shows and remembers, as data in and data out: whether a
;; buffer still holds the lines pi read, the proposed lines and the proposal's diff, the request shown
;; first and the capped `decisions'.  Tested with literal data (ERT tables in
;; test/emacs/pi-ide-state-tests.el).  The names keep the `pi-ide-state-' prefix they had when this
;; lived in pi-ide-state.el.

;;; Code:

(require 'cl-lib)
(require 'pi-ide-protocol)

(defconst pi-ide-state-max-proposed-lines 20
  "Most proposed lines of one hunk shown in the file's buffer.")

(defun pi-ide-state-lines-at-p (lines at expected)
  "Does the text of LINES hold EXPECTED (a list of lines) from line AT on?
LINES is a function (FIRST LAST) returning those lines (1-based, inclusive)
as a list, fewer past the end.  No lines are always there."
  (or (null expected)
      (and (>= at 1) (equal (funcall lines at (+ at (length expected) -1)) expected))))

(defun pi-ide-state-hunks-match-p (lines hunks)
  "Do HUNKS' old lines stand where they say in the text of LINES?
LINES is as in `pi-ide-state-lines-at-p'.  Then the buffer holds the text
pi read, and its marks fall on the right lines."
  (cl-every (lambda (h) (pi-ide-state-lines-at-p lines (alist-get 'old_start h) (alist-get 'old_text h)))
            hunks))

(defun pi-ide-state-proposed-lines (new-text)
  "The proposed lines NEW-TEXT as shown in the buffer: \"+ \" each, capped.
At most `pi-ide-state-max-proposed-lines', then one line saying how many more."
  (let ((n (length new-text)) (max pi-ide-state-max-proposed-lines))
    (append (cl-loop for l in new-text repeat max collect (concat "+ " (pi-ide-state-inert l)))
            (and (> n max) (list (format "+ ... %d more lines" (- n max)))))))

(defun pi-ide-state-proposal-diff (request)
  "REQUEST (see `pi-ide-state-validate-approval') as the lines of a unified diff."
  (let ((file (pi-ide-state-inert (plist-get request :file))))
    (append (list (concat "--- " file) (concat "+++ " file " (pi's proposal)"))
            (and (plist-get request :note) (list (format "(no preview: %s)" (plist-get request :note))))
            (cl-loop for h in (plist-get request :hunks)
                     append (append (list (format "@@ -%d,%d +%d,%d @@"
                                                  (alist-get 'old_start h) (length (alist-get 'old_text h))
                                                  (alist-get 'new_start h) (length (alist-get 'new_text h))))
                                    (mapcar (lambda (l) (concat "-" l)) (alist-get 'old_text h))
                                    (mapcar (lambda (l) (concat "+" l)) (alist-get 'new_text h)))))))

(defun pi-ide-state-remember-decision (decisions pi-pid id decision)
  "DECISIONS (newest last) with PI-PID's request ID answered DECISION.
At most `pi-ide-state-max-decisions', the newest."
  (last (append decisions (list `((pi_pid . ,pi-pid) (id . ,id) (decision . ,decision))))
        pi-ide-state-max-decisions))

(defun pi-ide-state-decided-p (decisions pi-pid id)
  "Did DECISIONS already answer PI-PID's request ID?"
  (cl-some (lambda (d) (and (eql (alist-get 'pi_pid d) pi-pid) (equal (alist-get 'id d) id))) decisions))

(defun pi-ide-state-current-request (requests)
  "The request of REQUESTS (plists) shown first: the earliest expiry."
  (car (sort (copy-sequence requests) (lambda (a b) (< (plist-get a :expires) (plist-get b :expires))))))

(defun pi-ide-state-describe-request (request)
  "(WHAT . SIZE) of REQUEST in words: \"edit\"/\"write\"/\"creation\" and \"2 hunks\"."
  (let ((n (plist-get request :hunks-total)))
    (cons (if (plist-get request :created) "creation" (pi-ide-state-inert (plist-get request :tool)))
          (if (plist-get request :note)
              (format "(%s)" (pi-ide-state-inert (plist-get request :note)))
            (format "%d %s" n (if (= n 1) "hunk" "hunks"))))))

(provide 'pi-ide-approval-rules)
;;; pi-ide-approval-rules.el ends here
