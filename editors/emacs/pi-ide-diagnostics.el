;;; pi-ide-diagnostics.el --- Flymake and Flycheck diagnostics for pi-ide, dated -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The pi-ide-context authors
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; A buffer's Flymake (and Flycheck) diagnostics as protocol v0.3 reports them, dated with the buffer version they were
;; computed for, so pi can tell current diagnostics from stale ones.
;;
;; The buffer version is `buffer-chars-modified-tick': it moves with every insertion and deletion and
;; with nothing else (saving, text properties and font-lock leave it alone), so diagnostics current before
;; a save stay current after it.
;;
;; Flymake runs every backend on the buffer's content of one moment and each backend reports later.  The
;; version of a backend's diagnostics is therefore the tick when its run started, recorded as it starts;
;; it counts once the backend has reported for that run.  With several backends, the buffer's diagnostics
;; take the newest such version and list only the backends that reported at it: a backend that has not
;; reported since the content changed is left out (neither listed nor counted) until it does, as the
;; Neovim client does per diagnostic namespace.  Flymake has no public hook for either moment, so this
;; follows two of its internal functions, `flymake--run-backend' and `flymake--handle-report' (Flymake
;; 1.2.2 in Emacs 28.2, tested here), with advice that `pi-ide-diagnostics-enable' adds and
;; `pi-ide-diagnostics-disable' removes.  Should a later Flymake rename them, no report is ever seen: the
;; buffer's diagnostics are then null (unknown), never stale ones presented as current.
;;
;; Flycheck, when the user has it, is followed through its public hooks: `flycheck-before-syntax-check-hook'
;; runs as a check starts, on the content of that moment (a command checker gets a copy of it), and
;; `flycheck-after-syntax-check-hook' once every checker of the chain has reported; the errors then in
;; `flycheck-current-errors' are kept with the tick from the start of that check, so an answer for content
;; edited during the check reads as old.  A chained checker that starts after an edit checks newer content
;; than the first one; the whole answer is still dated with the start, never later than what it describes.
;; A check that fails or is interrupted keeps the last answer, with its old version.  Flycheck stays
;; optional: nothing here loads it, and without it the hooks are never run.
;;
;; A buffer with both Flymake and Flycheck on merges them as one more backend: the newest version any of
;; them reported for wins, and only those that reported for it are listed; an exact duplicate (the same
;; problem from both) is listed and counted once (`pi-ide-state-diagnostics').

;;; Code:

(require 'cl-lib)
(require 'pi-ide-state)

(declare-function flymake-diagnostics "flymake" (&optional beg end))
(declare-function flymake-diagnostic-backend "flymake" (diag))
(declare-function flymake-diagnostic-beg "flymake" (diag))
(declare-function flymake-diagnostic-end "flymake" (diag))
(declare-function flymake-diagnostic-type "flymake" (diag))
(declare-function flymake-diagnostic-text "flymake" (diag))
(defvar flymake-mode)
(defvar flymake-diagnostic-functions)
(declare-function flycheck-error-region-for-mode "flycheck" (err mode))
(declare-function flycheck-error-filename "flycheck" (err))
(declare-function flycheck-error-level "flycheck" (err))
(declare-function flycheck-error-message "flycheck" (err))
(declare-function flycheck-error-checker "flycheck" (err))
(declare-function flycheck-error-id "flycheck" (err))
(declare-function flycheck-same-files-p "flycheck" (file-a file-b))
(declare-function flycheck-get-checker-for-buffer "flycheck" ())
(defvar flycheck-mode)
(defvar flycheck-current-errors)
(declare-function flycheck-buffer "flycheck" ())

(defvar pi-ide-diagnostics-changed-function #'ignore
  "Called with a buffer whose diagnostics changed (pi-ide.el asks for a write).")

(defvar-local pi-ide-diagnostics-expected nil
  "Non-nil when a checker neither Flymake nor Flycheck shows is attached here.
pi waits for diagnostics after its edit only where one is expected; a buffer
in `flymake-mode' with a backend, or in `flycheck-mode' with a checker that
applies, counts without this.")

(defvar-local pi-ide-diagnostics--started nil
  "Alist: Flymake backend -> the buffer version when its current run started.")

(defvar-local pi-ide-diagnostics--stamps nil
  "Alist: Flymake backend -> the version its reported diagnostics belong to.")

(defvar-local pi-ide-diagnostics--flycheck-started nil
  "The buffer version when the running (or last) Flycheck check started.")

(defvar-local pi-ide-diagnostics--flycheck nil
  "(VERSION . ITEMS): the last finished Flycheck check.
VERSION is the buffer version when it started, ITEMS the protocol's items.")

(defun pi-ide-diagnostics--version ()
  "This buffer's content version."
  (buffer-chars-modified-tick))

(defun pi-ide-diagnostics--run-backend (backend &rest _)
  "Note the version BACKEND is about to check.
Advice before `flymake--run-backend'."
  (condition-case nil
      (setf (alist-get backend pi-ide-diagnostics--started) (pi-ide-diagnostics--version))
    (error nil)))

(defun pi-ide-diagnostics--handle-report (backend _token report-action &rest _)
  "Advice after `flymake--handle-report': BACKEND's REPORT-ACTION is in."
  (condition-case nil
      (let ((started (alist-get backend pi-ide-diagnostics--started)))
        (cond
         ((and (listp report-action) started)
          (setf (alist-get backend pi-ide-diagnostics--stamps) started)
          (funcall pi-ide-diagnostics-changed-function (current-buffer)))
         ((eq report-action :panic)
          (setq pi-ide-diagnostics--stamps (assq-delete-all backend pi-ide-diagnostics--stamps))
          (funcall pi-ide-diagnostics-changed-function (current-buffer)))))
    (error nil)))

(defvar pi-ide-diagnostics--enabled nil
  "Non-nil while Flymake is followed (checked when Flymake loads later).")

(defun pi-ide-diagnostics-enable ()
  "Follow Flymake (each backend's start and report) and Flycheck (each check's).
Now or once either is loaded."
  (setq pi-ide-diagnostics--enabled t)
  ;; Flycheck's hooks are plain hooks: adding to them does not load Flycheck, and without it they never run.
  (add-hook 'flycheck-before-syntax-check-hook #'pi-ide-diagnostics--flycheck-before)
  (add-hook 'flycheck-after-syntax-check-hook #'pi-ide-diagnostics--flycheck-after)
  (with-eval-after-load 'flymake
    (when (and pi-ide-diagnostics--enabled
               (fboundp 'flymake--run-backend) (fboundp 'flymake--handle-report))
      (advice-add 'flymake--run-backend :before #'pi-ide-diagnostics--run-backend)
      (advice-add 'flymake--handle-report :after #'pi-ide-diagnostics--handle-report))))

(defun pi-ide-diagnostics-disable ()
  "Stop following Flymake and Flycheck."
  (setq pi-ide-diagnostics--enabled nil)
  (remove-hook 'flycheck-before-syntax-check-hook #'pi-ide-diagnostics--flycheck-before)
  (remove-hook 'flycheck-after-syntax-check-hook #'pi-ide-diagnostics--flycheck-after)
  (advice-remove 'flymake--run-backend #'pi-ide-diagnostics--run-backend)
  (advice-remove 'flymake--handle-report #'pi-ide-diagnostics--handle-report))

(defun pi-ide-diagnostics-expected-p (buffer)
  "Is a checker attached to BUFFER?
A Flymake backend with `flymake-mode' on, or a Flycheck checker that applies
to it with `flycheck-mode' on."
  (with-current-buffer buffer
    (or (and pi-ide-diagnostics-expected t)
        (and (bound-and-true-p flymake-mode)
             (cl-some #'functionp (remq t flymake-diagnostic-functions))
             t)
        (and (bound-and-true-p flycheck-mode)
             (fboundp 'flycheck-get-checker-for-buffer)
             ;; Runs the checkers' predicates: a user's may fail, which means no checker.
             (ignore-errors (flycheck-get-checker-for-buffer))
             t))))

(defun pi-ide-diagnostics--severity (type)
  "The protocol's severity for a Flymake diagnostic TYPE."
  (let ((category (get type 'flymake-category)))
    (cond
     ((or (eq type :error) (eq category 'flymake-error)) "error")
     ((or (eq type :warning) (eq category 'flymake-warning)) "warning")
     (t "info"))))

(defun pi-ide-diagnostics--position (pos)
  "(LINE . BYTE-COLUMN), both 1-based, of POS in the current buffer.
POS is clamped into the buffer: a checker's end may lie past it."
  (save-excursion
    (setq pos (max (point-min) (min pos (point-max))))
    (goto-char pos)
    (cons (line-number-at-pos pos t)
          (1+ (- (position-bytes pos) (position-bytes (line-beginning-position)))))))

(defun pi-ide-diagnostics--make-item (severity beg end message source code)
  "The protocol's item: SEVERITY from buffer positions BEG to END, MESSAGE.
SOURCE and CODE are strings or :null.  One shape for Flymake's and Flycheck's,
so that the same problem from both is an exact duplicate."
  (let ((b (pi-ide-diagnostics--position beg))
        (e (pi-ide-diagnostics--position end)))
    `((severity . ,severity)
      (line . ,(car b)) (column . ,(cdr b))
      (end_line . ,(car e)) (end_column . ,(cdr e))
      (message . ,(format "%s" message))
      (source . ,source)
      (code . ,code))))

(defun pi-ide-diagnostics--item (d)
  "The protocol's item for Flymake diagnostic D."
  (let ((backend (flymake-diagnostic-backend d)))
    (pi-ide-diagnostics--make-item (pi-ide-diagnostics--severity (flymake-diagnostic-type d))
                                   (flymake-diagnostic-beg d) (flymake-diagnostic-end d)
                                   (flymake-diagnostic-text d)
                                   (if (symbolp backend) (symbol-name backend) :null)
                                   :null)))

;;;; Flycheck

(defun pi-ide-diagnostics--flycheck-severity (level)
  "The protocol's severity for a Flycheck error LEVEL.
By its compilation level, which every level has (`flycheck-define-error-level'):
2 error, 1 warning, else info."
  (pcase (get level 'flycheck-compilation-level)
    (2 "error")
    (1 "warning")
    (_ "info")))

(defun pi-ide-diagnostics--flycheck-item (err)
  "The protocol's item for Flycheck error ERR of the current buffer, or nil.
Its region is Flycheck's own (as it highlights it); an error about another
file (a header, an imported module) is not this buffer's and gives nil."
  (let ((file (flycheck-error-filename err)))
    (when (or (null file) (and buffer-file-name (flycheck-same-files-p file buffer-file-name)))
      (let ((region (flycheck-error-region-for-mode err 'columns))
            (id (flycheck-error-id err))
            (checker (flycheck-error-checker err)))
        (pi-ide-diagnostics--make-item (pi-ide-diagnostics--flycheck-severity (flycheck-error-level err))
                                       (car region) (cdr region)
                                       (or (flycheck-error-message err) "")
                                       (if (and checker (symbolp checker)) (symbol-name checker) :null)
                                       (if id (format "%s" id) :null))))))

(defun pi-ide-diagnostics--flycheck-before ()
  "Note the version of the current buffer as a Flycheck check begins on it.
In `flycheck-before-syntax-check-hook'."
  (condition-case nil
      (setq pi-ide-diagnostics--flycheck-started (pi-ide-diagnostics--version))
    (error nil)))

(defun pi-ide-diagnostics--flycheck-after ()
  "A Flycheck check finished: keep its errors, dated with its start.
In `flycheck-after-syntax-check-hook'."
  (condition-case nil
      (when pi-ide-diagnostics--flycheck-started
        (setq pi-ide-diagnostics--flycheck
              (cons pi-ide-diagnostics--flycheck-started
                    (save-restriction
                      (widen)
                      (delq nil (mapcar #'pi-ide-diagnostics--flycheck-item flycheck-current-errors)))))
        (funcall pi-ide-diagnostics-changed-function (current-buffer)))
    (error nil)))

;;;; Both

(defun pi-ide-diagnostics-collect (buffer)
  "BUFFER's diagnostics object, or :null when no checker has reported.
Null means unknown, not clean.  Flymake's backends and Flycheck each count
with the version they last reported for; the newest wins."
  (with-current-buffer buffer
    (let* ((flymake (and (bound-and-true-p flymake-mode) (fboundp 'flymake-diagnostics)
                         pi-ide-diagnostics--stamps))
           (flycheck (and (bound-and-true-p flycheck-mode) pi-ide-diagnostics--flycheck))
           (versions (append (mapcar #'cdr flymake) (and flycheck (list (car flycheck))))))
      (if (null versions)
          :null
        (let* ((version (apply #'max versions))
               (current (cl-loop for (b . v) in flymake when (= v version) collect b))
               (items (append
                       (and current
                            (save-restriction
                              (widen)
                              (cl-loop for d in (flymake-diagnostics)
                                       when (memq (flymake-diagnostic-backend d) current)
                                       collect (pi-ide-diagnostics--item d))))
                       (and flycheck (= (car flycheck) version) (cdr flycheck)))))
          (pi-ide-state-diagnostics items version))))))

(defun pi-ide-diagnostics-reloaded (buffer)
  "BUFFER's text was just replaced with its file's new content (pi's edit).
Flymake checks after the change by itself.  Flycheck defers the check a
change asks for until the next command (none comes while pi waits), so
where it checks on changes (`idle-change' or `new-line') it checks now."
  (with-current-buffer buffer
    (when (and (bound-and-true-p flycheck-mode) (fboundp 'flycheck-buffer)
               (boundp 'flycheck-check-syntax-automatically)
               (cl-intersection '(idle-change new-line) (symbol-value 'flycheck-check-syntax-automatically)))
      (flycheck-buffer))))

(defun pi-ide-diagnostics-followed (buffer)
  "Which checkers BUFFER's diagnostics come from, a list of strings.
\"Flymake\", \"Flycheck\", both or none."
  (with-current-buffer buffer
    (delq nil (list (and (bound-and-true-p flymake-mode) pi-ide-diagnostics--stamps "Flymake")
                    (and (bound-and-true-p flycheck-mode) pi-ide-diagnostics--flycheck "Flycheck")))))

(provide 'pi-ide-diagnostics)
;;; pi-ide-diagnostics.el ends here
