;;; pi-ide-review-tests.el --- Seeded random test of pi's hunks reverted in a buffer -*- lexical-binding: t; -*-

;;; Commentary:

;; Run by test/emacs/batch.test.ts in `emacs --batch'.  For random files and random hunks of pi's shape (the
;; generator and the hunks-applied oracle of pi-ide-approval-tests.el: no context lines, never touching each
;; other, insertions at the start and after the last line), the buffer holds pi's version and is marked
;; (pi-ide-review.el); a random subset of the marked hunks is reverted with point on each, in random order.  The
;; buffer must then be the baseline with only the other hunks applied, computed on its own from the hunks;
;; every revert is listed in `reverted', and undoing each brings pi's version back.  A hunk whose lines the user
;; edited is refused and leaves the buffer as it was.  PI_IDE_SEED replays a failure; a planted defect (a
;; deletion put back after the line that followed it, not before) is caught.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'pi-ide-review)
(require 'pi-ide-approval-tests)

(defvar pi-ide-review-marks t)

(defun pi-ide-review-tests--text (lines)
  "LINES as a file's text: each with its newline."
  (mapconcat (lambda (l) (concat l "\n")) lines ""))

(defun pi-ide-review-tests--overlay-of (hunk)
  "The review overlay of HUNK in the current buffer, or nil."
  (cl-find-if (lambda (o) (eq (overlay-get o 'pi-ide-review-hunk) hunk)) (overlays-in (point-min) (point-max))))

(ert-deftest pi-ide-review-test-revert-random ()
  "Seeded: reverting hunks leaves the baseline with the other hunks applied; undo restores pi's version."
  (let ((seed (or (and (getenv "PI_IDE_SEED") (string-to-number (getenv "PI_IDE_SEED"))) 20261202))
        (reverts 0))
    (dotimes (run 1500)
      (random (format "pi-ide-review-%d-%d" seed run))
      (let* ((base (pi-ide-approval-tests--random-lines (random 10)))
             (hunks (pi-ide-approval-tests--random-hunks base))
             (pi-version (pi-ide-approval-tests--apply base hunks))
             (entry (list :pid 7 :run 3 :file "/p/a.txt" :baseline (pi-ide-review-tests--text base) :hunks hunks))
             (pi-ide-review--reverted nil)
             (pi-ide-review-changed-function #'ignore)
             (steps nil))
        (with-temp-buffer
          (buffer-enable-undo)
          (insert (pi-ide-review-tests--text pi-version))
          (undo-boundary)
          (pi-ide-review--mark-hunks entry)
          (let* ((marked (cl-remove-if-not #'pi-ide-review-tests--overlay-of hunks))
                 ;; The oracle's own rule for what is marked: every hunk leaving lines; a deletion when a line
                 ;; is left to carry its mark.
                 (expected (cl-remove-if-not (lambda (h) (or (alist-get 'new_text h) pi-version)) hunks))
                 (chosen (cl-remove-if (lambda (_) (= 0 (random 2))) (copy-sequence marked)))
                 (order (sort (mapcar (lambda (h) (cons (random 1000) h)) chosen) (lambda (a b) (< (car a) (car b))))))
            (unless (equal marked expected)
              (ert-fail (list :seed seed :run run :base base :hunks hunks :marked marked)))
            ;; A line can carry two deletions' marks (one before it, one after the last line): a revert there
            ;; takes both back, and a hunk already taken back along with another is not asked for again.
            (dolist (c order)
              (when (pi-ide-review-tests--overlay-of (cdr c))
                (goto-char (overlay-start (pi-ide-review-tests--overlay-of (cdr c))))
                (let* ((on-line (cl-remove-if-not
                                 (lambda (h) (let ((o (pi-ide-review-tests--overlay-of h)))
                                               (and o (= (line-number-at-pos (overlay-start o))
                                                         (line-number-at-pos)))))
                                 hunks))
                       (said (pi-ide-review-revert-at-point)))
                  (undo-boundary)
                  (push (length on-line) steps)
                  (setq chosen (cl-union chosen on-line))
                  (unless (string-match-p "reverted \\(pi's hunk\\|2 of pi's hunks\\)" said)
                    (ert-fail (list :said said :seed seed :run run :base base :hunks hunks :hunk (cdr c)))))))
            (let ((want (pi-ide-review-tests--text
                         (pi-ide-approval-tests--apply base (cl-remove-if (lambda (h) (memq h chosen)) hunks)))))
              (unless (equal (buffer-string) want)
                (ert-fail (list :seed seed :run run :base base :hunks hunks :reverted chosen
                                :got (buffer-string) :want want))))
            (unless (equal (sort (mapcar (lambda (r) (alist-get 'id r)) pi-ide-review--reverted) #'string<)
                           (sort (mapcar (lambda (h) (alist-get 'id h)) chosen) #'string<))
              (ert-fail (list :seed seed :run run :reverted-list pi-ide-review--reverted)))
            (setq reverts (+ reverts (length chosen)))
            (when steps
              (undo-start)
              (undo-more 1)             ; past the boundary at the head, as `undo' does
              (undo-more (length steps))
              (unless (equal (buffer-string) (pi-ide-review-tests--text pi-version))
                (ert-fail (list :seed seed :run run :base base :hunks hunks :undone (buffer-string)))))
            ;; The user edits the lines of a hunk still marked: refused, nothing changes.
            (let ((h (cl-find-if (lambda (h) (and (alist-get 'new_text h) (not (memq h chosen)))) hunks)))
              (when h
                (goto-char (overlay-start (pi-ide-review-tests--overlay-of h)))
                (insert "mine ")
                (let ((before (buffer-string)) (said (pi-ide-review-revert-at-point)))
                  (unless (and (string-match-p "you changed these lines" said) (equal before (buffer-string)))
                    (ert-fail (list :said said :before before :after (buffer-string) :seed seed :run run :edited h))))))))))
    ;; The runs did revert hunks of every kind, not nothing.
    (should (> reverts 900))))

(provide 'pi-ide-review-tests)
;;; pi-ide-review-tests.el ends here
