;;; pi-ide-approval-tests.el --- Seeded random test of the approval marks -*- lexical-binding: t; -*-

;;; Commentary:

;; Run by test/emacs/batch.test.ts in `emacs --batch'.  The marks of a proposed change (pi-ide-approval.el) are
;; overlays: the lines to go get a face and a "- ", the proposed lines are shown before or after them.  For random files
;; (with and without a last newline, empty ones) and random hunks of pi's shape (no context lines, never
;; touching each other, insertions at the start and after the last line), the buffer is "displayed" with its
;; overlays as Emacs draws them (an overlay's after-string before the next one's before-string) and read back:
;; dropping the marked lines and taking the "+ " lines as text must give exactly the proposed file, computed
;; here on its own from the hunks.  A hunk whose old lines are no longer in the buffer marks nothing.
;; PI_IDE_SEED replays a failure; a planted defect (insertions placed one line late) is caught.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'pi-ide-approval)

(defvar pi-ide-approval-marks t)

(defconst pi-ide-approval-tests--words ["alpha" "beta" "" "  x = 1" "gamma;" "δ" "end"])

(defun pi-ide-approval-tests--random-lines (n)
  "N random lines."
  (cl-loop repeat n collect (aref pi-ide-approval-tests--words (random (length pi-ide-approval-tests--words)))))

(defun pi-ide-approval-tests--random-hunks (lines)
  "Random hunks of pi's shape from LINES: separated by at least one kept line."
  (let ((n (length lines)) (i 1) (shift 0) (hunks nil) (k 0))
    (while (<= i (1+ n))
      (if (/= 0 (random 3))
          (setq i (1+ i))
        (let* ((del (random (1+ (min 3 (- n i -1)))))
               (ins (pi-ide-approval-tests--random-lines (random 4))))
          (if (and (= del 0) (null ins))
              (setq i (1+ i))
            (push `((id . ,(format "h%d" (cl-incf k))) (old_start . ,i) (old_lines . ,del)
                    (new_start . ,(+ i shift)) (new_lines . ,(length ins))
                    (old_text . ,(cl-subseq lines (1- i) (+ i del -1))) (new_text . ,ins))
                  hunks)
            (setq shift (+ shift (- (length ins) del))
                  i (+ i del 1))))))
    (nreverse hunks)))

(defun pi-ide-approval-tests--apply (lines hunks)
  "The oracle: LINES with HUNKS applied, walking the old lines once."
  (let ((out nil) (i 1))
    (dolist (h hunks)
      (while (< i (alist-get 'old_start h)) (push (nth (1- i) lines) out) (cl-incf i))
      (dolist (l (alist-get 'new_text h)) (push l out))
      (cl-incf i (length (alist-get 'old_text h))))
    (while (<= i (length lines)) (push (nth (1- i) lines) out) (cl-incf i))
    (nreverse out)))

(defun pi-ide-approval-tests--display ()
  "The current buffer as drawn with its approval overlays: marked text between \\1 and \\2."
  (let ((events nil))
    (dolist (o (overlays-in (point-min) (point-max)))
      (when (overlay-get o 'pi-ide-approval)
        ;; At one position Emacs draws the after-strings of overlays ending there, then the before-strings of
        ;; those starting there.
        (when (overlay-get o 'face)
          (push (list (overlay-start o) 3 "\1") events)
          (push (list (overlay-end o) 0 "\2") events))
        (when (overlay-get o 'after-string) (push (list (overlay-end o) 1 (overlay-get o 'after-string)) events))
        (when (overlay-get o 'before-string) (push (list (overlay-start o) 2 (overlay-get o 'before-string)) events))))
    (setq events (sort events (lambda (a b) (if (= (car a) (car b)) (< (nth 1 a) (nth 1 b)) (< (car a) (car b))))))
    (let ((pos (point-min)) (parts nil))
      (dolist (e events)
        (push (buffer-substring-no-properties pos (car e)) parts)
        (push (substring-no-properties (nth 2 e)) parts)
        (setq pos (car e)))
      (push (buffer-substring-no-properties pos (point-max)) parts)
      (apply #'concat (nreverse parts)))))

(defun pi-ide-approval-tests--read-back (shown)
  "The file SHOWN says the proposal leaves: marked lines dropped, \"+ \" lines taken as text."
  (let ((inside nil) (out nil))
    (dolist (line (split-string shown "\n"))
      ;; A mark ending where the line starts is the previous line's (its newline was marked).
      (when (string-prefix-p "\2" line) (setq inside nil line (substring line 1)))
      (let ((marked inside))
        (dolist (c (string-to-list line))
          (cond ((eq c ?\1) (setq inside t marked t)) ((eq c ?\2) (setq inside nil marked t))))
        (cond (marked)
              ((string-prefix-p "+ " line) (push (substring line 2) out))
              (t (push line out)))))
    (nreverse out)))

(ert-deftest pi-ide-approval-test-marks-random ()
  "Seeded: the marks, read back as drawn, are exactly the proposed file (oracle: the hunks applied)."
  (let ((seed (or (and (getenv "PI_IDE_SEED") (string-to-number (getenv "PI_IDE_SEED"))) 20261202)))
    (dotimes (run 2000)
      (random (format "pi-ide-approval-%d-%d" seed run))
      (let* ((lines (pi-ide-approval-tests--random-lines (random 9)))
             ;; A file's last line is never empty: "a\n" is one line, "a" followed by its newline.
             (lines (if (equal (car (last lines)) "") (append (butlast lines) '("end")) lines))
             (newline (and lines (= 0 (random 2))))
             (hunks (pi-ide-approval-tests--random-hunks lines))
             (file "/p/a.txt")
             (request (list :pi-pid 1 :id "r" :file file :hunks hunks :expires 1e12))
             (pi-ide-approval--pending (list (cons 1 request))))
        (with-temp-buffer
          (insert (mapconcat #'identity lines "\n") (if newline "\n" ""))
          (cl-letf (((symbol-function 'pi-ide-approval--buffer) (lambda (_) (current-buffer))))
            (pi-ide-approval--mark file)
            (let* ((shown (pi-ide-approval-tests--display))
                   ;; Lines drawn after the last newline are the last lines: the file's newline follows them.
                   (got (mapconcat #'identity
                                   (pi-ide-approval-tests--read-back
                                    (if (and newline (not (string-suffix-p "\n" (remove ?\2 shown)))) (concat shown "\n") shown))
                                   "\n"))
                   (proposed (pi-ide-approval-tests--apply lines hunks))
                   (want (concat (mapconcat #'identity proposed "\n") (if (and newline proposed) "\n" ""))))
              (unless (equal got want)
                (ert-fail (list :seed seed :run run :lines lines :newline newline :hunks hunks
                                :shown shown :got got :want want))))
            ;; The user changed a line pi would replace: the buffer no longer holds pi's lines, no marks.
            (let ((h (cl-find-if (lambda (h) (alist-get 'old_text h)) hunks)))
              (when h
                (goto-char (point-min))
                (forward-line (1- (alist-get 'old_start h)))
                (insert "mine ")
                (pi-ide-approval--mark file)
                (unless (equal (pi-ide-approval-tests--display) (buffer-string))
                  (ert-fail (list :seed seed :run run :lines lines :hunks hunks :marked-after-edit t)))))))))))

(provide 'pi-ide-approval-tests)
;;; pi-ide-approval-tests.el ends here
