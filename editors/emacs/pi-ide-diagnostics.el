;;; pi-ide-diagnostics.el --- Flymake diagnostics for pi-ide, dated -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The pi-ide-context authors
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; A buffer's Flymake diagnostics as protocol v0.3 reports them, dated with the buffer version they were
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
;; Flycheck is not supported: it cannot be installed offline here, and code that was never run against it
;; would be a guess.

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

(defvar pi-ide-diagnostics-changed-function #'ignore
  "Called with a buffer whose diagnostics changed (pi-ide.el asks for a write).")

(defvar-local pi-ide-diagnostics-expected nil
  "Non-nil when a checker is attached to this buffer that Flymake does not show.
pi waits for diagnostics after its edit only where one is expected; a buffer
in `flymake-mode' with a backend counts without this.")

(defvar-local pi-ide-diagnostics--started nil
  "Alist: Flymake backend -> the buffer version when its current run started.")

(defvar-local pi-ide-diagnostics--stamps nil
  "Alist: Flymake backend -> the version its reported diagnostics belong to.")

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
  "Follow Flymake (each backend's start and report), now or once it is loaded."
  (setq pi-ide-diagnostics--enabled t)
  (with-eval-after-load 'flymake
    (when (and pi-ide-diagnostics--enabled
               (fboundp 'flymake--run-backend) (fboundp 'flymake--handle-report))
      (advice-add 'flymake--run-backend :before #'pi-ide-diagnostics--run-backend)
      (advice-add 'flymake--handle-report :after #'pi-ide-diagnostics--handle-report))))

(defun pi-ide-diagnostics-disable ()
  "Stop following Flymake."
  (setq pi-ide-diagnostics--enabled nil)
  (advice-remove 'flymake--run-backend #'pi-ide-diagnostics--run-backend)
  (advice-remove 'flymake--handle-report #'pi-ide-diagnostics--handle-report))

(defun pi-ide-diagnostics-expected-p (buffer)
  "Is a checker attached to BUFFER?"
  (with-current-buffer buffer
    (or (and pi-ide-diagnostics-expected t)
        (and (bound-and-true-p flymake-mode)
             (cl-some #'functionp (remq t flymake-diagnostic-functions))
             t))))

(defun pi-ide-diagnostics--severity (type)
  "The protocol's severity for a Flymake diagnostic TYPE."
  (let ((category (get type 'flymake-category)))
    (cond
     ((or (eq type :error) (eq category 'flymake-error)) "error")
     ((or (eq type :warning) (eq category 'flymake-warning)) "warning")
     (t "info"))))

(defun pi-ide-diagnostics--position (pos)
  "(LINE . BYTE-COLUMN), both 1-based, of POS in the current buffer."
  (save-excursion
    (goto-char pos)
    (cons (line-number-at-pos pos t)
          (1+ (- (position-bytes pos) (position-bytes (line-beginning-position)))))))

(defun pi-ide-diagnostics--item (d)
  "The protocol's item for Flymake diagnostic D."
  (let ((beg (pi-ide-diagnostics--position (flymake-diagnostic-beg d)))
        (end (pi-ide-diagnostics--position (flymake-diagnostic-end d)))
        (backend (flymake-diagnostic-backend d)))
    `((severity . ,(pi-ide-diagnostics--severity (flymake-diagnostic-type d)))
      (line . ,(car beg)) (column . ,(cdr beg))
      (end_line . ,(car end)) (end_column . ,(cdr end))
      (message . ,(format "%s" (flymake-diagnostic-text d)))
      (source . ,(if (symbolp backend) (symbol-name backend) :null))
      (code . :null))))

(defun pi-ide-diagnostics-collect (buffer)
  "BUFFER's diagnostics object, or :null when no checker has reported.
Null means unknown, not clean."
  (with-current-buffer buffer
    (if (not (and (bound-and-true-p flymake-mode) pi-ide-diagnostics--stamps (fboundp 'flymake-diagnostics)))
        :null
      (let* ((version (apply #'max (mapcar #'cdr pi-ide-diagnostics--stamps)))
             (current (cl-loop for (b . v) in pi-ide-diagnostics--stamps when (= v version) collect b))
             (items (save-restriction
                      (widen)
                      (cl-loop for d in (flymake-diagnostics)
                               when (memq (flymake-diagnostic-backend d) current)
                               collect (pi-ide-diagnostics--item d)))))
        (pi-ide-state-diagnostics items version)))))

(provide 'pi-ide-diagnostics)
;;; pi-ide-diagnostics.el ends here
