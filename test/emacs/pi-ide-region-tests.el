;;; pi-ide-region-tests.el --- Seeded random regions against an oracle -*- lexical-binding: t; -*-

;;; Commentary:

;; Run by test/emacs/batch.test.ts in `emacs --batch'.  Random buffers (ASCII, two- and three-byte
;; characters, empty lines, with or without a last newline) and random regions; the client's selection
;; (`pi-ide--selection', the glue over the pure `pi-ide-state-region-selection') is compared with an oracle
;; that computes the protocol's selection straight from buffer positions (`position-bytes',
;; `buffer-substring'), not from lines and character columns as the client does.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'pi-ide)

(defun pi-ide-region-tests--oracle (beg end)
  "The protocol's selection for the region BEG..END of the current buffer, or nil."
  (when (< beg end)
    (let* ((last (1- end))                  ; the last character selected (a newline belongs to its line)
           (start-line (line-number-at-pos beg t))
           (end-line (line-number-at-pos last t))
           (bol (lambda (pos) (save-excursion (goto-char pos) (line-beginning-position))))
           (eol (lambda (pos) (save-excursion (goto-char pos) (line-end-position))))
           (end-of-text (min end (funcall eol last)))
           (start-col (1+ (- (position-bytes beg) (position-bytes (funcall bol beg)))))
           (end-col (max 1 (- (position-bytes end-of-text) (position-bytes (funcall bol last))))))
      (if (= start-line end-line)
          (let ((text (buffer-substring-no-properties beg end-of-text)))
            (unless (equal text "")
              (list (cons start-line start-col) (cons end-line end-col) text)))
        (list (cons start-line start-col) (cons end-line end-col)
              (buffer-substring-no-properties (funcall bol beg) (funcall eol last)))))))

(defun pi-ide-region-tests--client (beg end)
  "The client's selection for the region BEG..END of the current buffer, as the oracle shapes it."
  (let ((transient-mark-mode t))
    (goto-char end)
    (push-mark beg t t)
    (setq pi-ide--region-beg beg pi-ide--region-end end pi-ide--region-at 1.0)
    (let ((sel (pi-ide--selection nil)))
      (deactivate-mark)
      (and sel (list (plist-get sel :start) (plist-get sel :end) (plist-get sel :text))))))

(defun pi-ide-region-tests--random-buffer ()
  "Fill the current buffer with random lines."
  (let ((pieces ["a" "bc" "é" "日本" " " "\t" "x=1" "\"q\""]))
    (dotimes (i (1+ (random 6)))
      (when (> i 0) (insert "\n"))
      (dotimes (_ (random 5)) (insert (aref pieces (random (length pieces))))))
    (when (= 0 (random 2)) (insert "\n"))))

(ert-deftest pi-ide-region-test-random-against-oracle ()
  "Seeded: 2,000 random regions; the client and the oracle agree."
  (random "pi-ide-region")
  (dotimes (_ 2000)
    (with-temp-buffer
      (pi-ide-region-tests--random-buffer)
      (let* ((a (1+ (random (point-max))))
             (b (1+ (random (point-max))))
             (beg (min a b)) (end (max a b)))
        (should (equal (list (buffer-string) beg end (pi-ide-region-tests--client beg end))
                       (list (buffer-string) beg end (pi-ide-region-tests--oracle beg end))))))))

(provide 'pi-ide-region-tests)
;;; pi-ide-region-tests.el ends here
