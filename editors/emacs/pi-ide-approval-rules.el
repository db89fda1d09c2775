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
(require 'pi-ide-merge)

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

;;;; Issue 26 item 6: the proposal against a buffer with unsaved changes

(defun pi-ide-state-unsaved-proposal (hunks disk ours user)
  "The proposal HUNKS (the request's, ascending) against OURS, the buffer's lines.
DISK: the file's lines on disk, the text pi proposed against; USER: the line
diff DISK -> OURS as `pi-ide-merge-plan' takes it (the merge's own rule
decides placement and \"touches\").  Nil when DISK no longer holds the lines
pi read.  Else a plist :places, one (FROM TO TOUCHES) per hunk, 0-based
half-open lines of OURS (a touching hunk's: the user's lines it touches), and
:lines, OURS with each hunk that touches nothing placed."
  (let ((disk-lines (vconcat disk)))
    (when (pi-ide-state-hunks-match-p
           (lambda (first last)
             (when (and (<= 1 first) (<= first last) (<= last (length disk-lines)))
               (append (substring disk-lines (1- first) last) nil)))
           hunks)
      (let* ((theirs (mapcar (lambda (h)
                               (list :old-start (alist-get 'old_start h) :old-lines (length (alist-get 'old_text h))
                                     :new-lines (length (alist-get 'new_text h)) :new-text (alist-get 'new_text h)))
                             hunks))
             (plan (pi-ide-merge-plan ours user theirs))
             (lines ours))
        (dolist (ed (reverse (plist-get plan :edits)))
          (setq lines (append (cl-subseq lines 0 (nth 0 ed)) (nth 2 ed) (nthcdr (nth 1 ed) lines))))
        (list :places (plist-get plan :places) :lines lines)))))

(defun pi-ide-state-touch-phrase (places)
  "The notice's words for PLACES (see `pi-ide-state-unsaved-proposal').
\"1 of 2 hunks touches your unsaved lines 7-8: if accepted, the file gets pi's
text and your buffer keeps yours there\" (at most 5 places named), or nil
when no hunk touches the user's lines.  The words every client uses."
  (let* ((touching (cl-remove-if-not (lambda (p) (nth 2 p)) places))
         (n (length touching)) (total (length places))
         (spans nil) (ranges nil))
    ;; The touched spans in order, (FROM . TO) 0-based half-open, those that
    ;; overlap or meet joined: one place named once; where the user deleted,
    ;; the line the place stands on.
    (dolist (p touching)
      (let ((from (nth 0 p)) (to (+ (nth 0 p) (max 1 (- (nth 1 p) (nth 0 p))))))
        (if (and spans (<= from (cdar spans)))
            (setcdr (car spans) (max (cdar spans) to))
          (push (cons from to) spans))))
    (setq ranges (mapcar (lambda (s)
                           (if (= (cdr s) (1+ (car s))) (number-to-string (cdr s))
                             (format "%d-%d" (1+ (car s)) (cdr s))))
                         (nreverse spans)))
    (when (> n 0)
      (format "%d of %d %s your unsaved %s %s%s: if accepted, the file gets pi's text and your buffer keeps yours there"
              n total (cond ((= total 1) "hunk touches") ((= n 1) "hunks touches") (t "hunks touch"))
              (if (and (= (length ranges) 1) (not (string-match-p "-" (car ranges)))) "line" "lines")
              (mapconcat #'identity (cl-subseq ranges 0 (min 5 (length ranges))) ", ")
              (if (> (length ranges) 5) ", …" "")))))

(defun pi-ide-state-unsaved-diff (request hunks unsaved ours)
  "The proposal of REQUEST against the unsaved buffer OURS, as diff lines.
HUNKS: the request's, ascending; UNSAVED: `pi-ide-state-unsaved-proposal's
plist for them.  The buffer's lines beside the buffer with each hunk that
touches nothing placed; the touching ones named above the header."
  (let ((file (pi-ide-state-inert (plist-get request :file)))
        (ours (vconcat ours)) (shift 0) (touch (pi-ide-state-touch-phrase (plist-get unsaved :places))))
    (append (and touch (list (concat "(pi-ide) " touch)))
            (list (concat "--- " file " (your unsaved buffer)")
                  (concat "+++ " file " (pi's proposal in your unsaved buffer)"))
            (cl-loop for h in hunks for p in (plist-get unsaved :places)
                     unless (nth 2 p)
                     append (let* ((old (append (substring ours (nth 0 p) (nth 1 p)) nil))
                                   (new (alist-get 'new_text h))
                                   (head (format "@@ -%d,%d +%d,%d @@" (1+ (nth 0 p)) (length old)
                                                 (+ 1 (nth 0 p) shift) (length new))))
                              (setq shift (+ shift (- (length new) (length old))))
                              (append (list head)
                                      (mapcar (lambda (l) (concat "-" l)) old)
                                      (mapcar (lambda (l) (concat "+" l)) new)))))))

(defun pi-ide-state-remember-decision (decisions pi-pid id decision)
  "DECISIONS (newest last) with PI-PID's request ID answered DECISION.
PI-PID is a pid, or the fields that name the pi (`pi-ide-state-pi-fields':
`pi_pid', and `pi_ns' as its file said).  At most
`pi-ide-state-max-decisions', the newest."
  (last (append decisions (list `(,@(if (consp pi-pid) pi-pid `((pi_pid . ,pi-pid)))
                                  (id . ,id) (decision . ,decision))))
        pi-ide-state-max-decisions))

(defun pi-ide-state-decided-p (decisions pi-pid id)
  "Did DECISIONS already answer PI-PID's request ID?
PI-PID is a pi identity (`pi-ide-state-pi-key-of-name'): a pid, or a pi of
another namespace."
  (cl-some (lambda (d) (and (eql (pi-ide-state-key-of-record d) pi-pid) (equal (alist-get 'id d) id))) decisions))

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
