;;; driver.el --- Test-side helpers for driving pi-ide in a real Emacs -*- lexical-binding: t; -*-

;;; Commentary:

;; Loaded into the daemon by test/helpers/emacs.ts.  Nothing here is part of the client: it finds the tty
;; client frame, runs a "command" there, is a Flymake backend whose diagnostics a test sets, and defines a
;; Flycheck checker running a real command (Flycheck is loaded only when a test asks for it).

;;; Code:

(require 'cl-lib)
(require 'flymake)

(defun pi-ide-test-ui-frame ()
  "The client's tty frame, or nil."
  (cl-find-if (lambda (f) (not (equal (terminal-name (frame-terminal f)) "initial_terminal")))
              (frame-list)))

(defun pi-ide-test-act (fn)
  "Call FN in the UI frame's selected window as a command, then run `post-command-hook'."
  (let ((frame (pi-ide-test-ui-frame)))
    (when frame (select-frame frame))
    (with-current-buffer (window-buffer (selected-window))
      (let ((this-command 'pi-ide-test-act))
        (funcall fn)))
    ;; The command loop runs the hook in the selected window's buffer.
    (with-current-buffer (window-buffer (selected-window))
      (run-hooks 'post-command-hook))
    nil))

(defun pi-ide-test-pos (line column)
  "The position of LINE and byte COLUMN (both 1-based) in the current buffer."
  (save-excursion
    (save-restriction
      (widen)
      (goto-char (point-min))
      (forward-line (1- line))
      (min (line-end-position)
           (or (byte-to-position (+ (position-bytes (line-beginning-position)) (1- column))) (point-max))))))

(defun pi-ide-test-select (start-line start-col end-line end-col)
  "Make the region from START-LINE/START-COL to END-LINE/END-COL, both inclusive."
  (let ((beg (pi-ide-test-pos start-line start-col))
        (end (save-excursion (goto-char (pi-ide-test-pos end-line end-col))
                             (min (point-max) (1+ (point))))))
    (goto-char beg)
    (push-mark beg t t)
    (goto-char end)))

(defun pi-ide-test-messages ()
  "The lines of *Messages*, as a vector."
  (vconcat (split-string (with-current-buffer (messages-buffer) (buffer-string)) "\n" t)))

(defvar-local pi-ide-test--diagnostics nil
  "The diagnostics the test backend reports: a list of (LINE COLUMN SEVERITY MESSAGE).")

(defun pi-ide-test-flymake-backend (report-fn &rest _)
  "A Flymake backend reporting `pi-ide-test--diagnostics' through REPORT-FN at once."
  (funcall report-fn
           (mapcar (lambda (d)
                     (let ((beg (pi-ide-test-pos (nth 0 d) (nth 1 d))))
                       (flymake-make-diagnostic (current-buffer) beg (min (point-max) (1+ beg))
                                                (pcase (nth 2 d) ("error" :error) ("warning" :warning) (_ :note))
                                                (nth 3 d))))
                   pi-ide-test--diagnostics)))

(defun pi-ide-test-set-diagnostics (file items)
  "Have the test backend report ITEMS for the buffer visiting FILE, for its content now."
  (with-current-buffer (find-buffer-visiting file)
    (setq pi-ide-test--diagnostics items)
    (add-hook 'flymake-diagnostic-functions #'pi-ide-test-flymake-backend nil t)
    (unless flymake-mode (flymake-mode 1))
    (flymake-start)
    nil))

(defvar flycheck-checkers)
(defvar flycheck-check-syntax-automatically)
(declare-function flycheck-define-command-checker "flycheck" (symbol docstring &rest properties))

(defun pi-ide-test-flycheck-setup (node script &optional automatic)
  "Define `pi-ide-test-checker', a real command: NODE running SCRIPT on a copy of the buffer.
SCRIPT is test/fixtures/marker-checker.ts.  The checker comes first in
`flycheck-checkers'.  Flycheck checks when the mode is turned on and when
the test calls `flycheck-buffer'; with AUTOMATIC, also as it does by
default (after a save, a new line, an idle change)."
  (require 'flycheck)
  (flycheck-define-command-checker 'pi-ide-test-checker
    "Reports the markers of the text (test/fixtures/marker-checker.ts)."
    :command (list node script 'source)
    :error-patterns '((error line-start (file-name) ":" line ":" column ": error: " (message) line-end)
                      (warning line-start (file-name) ":" line ":" column ": warning: " (message) line-end)
                      (info line-start (file-name) ":" line ":" column ": info: " (message) line-end))
    :modes '(text-mode python-mode))
  (add-to-list 'flycheck-checkers 'pi-ide-test-checker)
  (unless automatic (setq flycheck-check-syntax-automatically '(mode-enabled)))
  nil)

(declare-function flycheck-define-generic-checker "flycheck" (symbol docstring &rest properties))
(declare-function flycheck-error-new-at-pos "flycheck" (pos &optional level message &rest keys))
(declare-function flycheck-buffer "flycheck" ())
(defvar flycheck-mode)

(defvar-local pi-ide-test--flycheck-items nil
  "What the kit's Flycheck checker reports: a list of (LINE COLUMN SEVERITY MESSAGE).")

(defun pi-ide-test--flycheck-kit-start (checker callback)
  "Report `pi-ide-test--flycheck-items' as CHECKER's errors through CALLBACK, at once."
  (funcall callback 'finished
           (mapcar (lambda (d)
                     (let ((beg (pi-ide-test-pos (nth 0 d) (nth 1 d))))
                       (flycheck-error-new-at-pos beg (pcase (nth 2 d) ("error" 'error) ("warning" 'warning) (_ 'info))
                                                  (nth 3 d) :end-pos (min (point-max) (1+ beg)) :checker checker)))
                   pi-ide-test--flycheck-items)))

(defun pi-ide-test-flycheck-kit-setup ()
  "Define the conformance kit's Flycheck checker, reporting what a case publishes.
Flycheck then checks only when a case publishes (`pi-ide-test-flycheck-set-diagnostics')."
  (require 'flycheck)
  (flycheck-define-generic-checker 'pi-ide-test-kit-checker
    "Reports what the conformance kit publishes for the buffer."
    :start #'pi-ide-test--flycheck-kit-start
    :modes '(fundamental-mode text-mode prog-mode js-mode python-mode))
  (add-to-list 'flycheck-checkers 'pi-ide-test-kit-checker)
  (setq flycheck-check-syntax-automatically nil)
  nil)

(defun pi-ide-test-flycheck-set-diagnostics (file items)
  "Have the kit's Flycheck checker report ITEMS for the buffer visiting FILE, for its content now."
  (with-current-buffer (find-buffer-visiting file)
    (setq pi-ide-test--flycheck-items items)
    (unless flycheck-mode (flycheck-mode 1))
    (flycheck-buffer)
    nil))

(provide 'pi-ide-test-driver)
;;; driver.el ends here
