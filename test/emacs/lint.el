;;; lint.el --- Byte-compile and checkdoc the Emacs client, strictly -*- lexical-binding: t; -*-

;;; Commentary:

;; Run by test/emacs/batch.test.ts: `emacs --batch -l test/emacs/lint.el FILE...'.  Byte-compiles each
;; file with warnings as errors (into a temp dir: nothing is left in editors/emacs) and runs `checkdoc' on
;; it; prints one "LINT: file: problem" line per problem and exits 1 when there is any.

;;; Code:

(require 'checkdoc)
(require 'cl-lib)

(let ((problems nil)
      (out (make-temp-file "pi-ide-lint" t)))
  (setq byte-compile-error-on-warn t
        checkdoc-spellcheck-documentation-flag nil)
  (dolist (file command-line-args-left)
    (let ((byte-compile-dest-file-function
           (lambda (f) (expand-file-name (concat (file-name-nondirectory f) "c") out))))
      (unless (ignore-errors (byte-compile-file file))
        (push (format "LINT: %s: does not byte-compile cleanly (see above)" file) problems)))
    (let ((checkdoc-create-error-function
           (lambda (text start _end &optional _unfixable)
             (push (format "LINT: %s:%d: %s" file (line-number-at-pos start) text) problems)
             nil)))
      (with-current-buffer (find-file-noselect file)
        (checkdoc-current-buffer t))))
  (delete-directory out t)
  (setq command-line-args-left nil)
  (dolist (p (reverse problems)) (princ (concat p "\n")))
  (kill-emacs (if problems 1 0)))

;;; lint.el ends here
