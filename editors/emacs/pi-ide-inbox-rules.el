;;; pi-ide-inbox-rules.el --- Pure rules of pi-ide's inbox (protocol v0.3) -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The pi-ide-context authors
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; What the inbox (pi-ide-inbox.el) decides about pi's messages, as data in and data out: which of
;; pi's changes to act on, and whether a buffer may be re-read from its path.  Tested with literal data
;; (ERT tables in test/emacs/pi-ide-state-tests.el).  The names keep the `pi-ide-state-' prefix they had
;; when this lived in pi-ide-state.el.

;;; Code:

(defun pi-ide-state-reload-verdict (was now)
  "May a buffer be re-read from its path?  \"reload\", \"gone\" or \"refused\".
WAS is what the path was when the buffer was read (a plist :type :real, or
nil: read before the client saw it), NOW what it is (a plist :type :real
:resolves-to, or nil: gone).  Types are `file', `link' and others.  The path
must still be what it was: a regular file then and now, or a symlink then
and now that resolves to the same real path, a regular file; without a
record a symlink is refused (PROTOCOL.md, v0.3)."
  (cond
   ((null now) "gone")
   ((or (not (eq (plist-get now :resolves-to) 'file))
        (not (memq (plist-get now :type) '(file link))))
    "refused")
   ((null was) (if (eq (plist-get now :type) 'file) "reload" "refused"))
   ((or (not (eq (plist-get was :type) (plist-get now :type)))
        (and (eq (plist-get now :type) 'link)
             (not (equal (plist-get was :real) (plist-get now :real)))))
    "refused")
   (t "reload")))

(defun pi-ide-state-newest-changes (changed handled)
  "The newest change per file in CHANGED with a seq above HANDLED, in seq order."
  (let ((newest nil))
    (dolist (c changed)
      (let* ((file (alist-get 'file c)) (old (assoc file newest)))
        (when (and (> (alist-get 'seq c) handled)
                   (or (null old) (< (alist-get 'seq (cdr old)) (alist-get 'seq c))))
          (setq newest (cons (cons file c) (assoc-delete-all file newest))))))
    (sort (mapcar #'cdr newest) (lambda (a b) (< (alist-get 'seq a) (alist-get 'seq b))))))

(provide 'pi-ide-inbox-rules)
;;; pi-ide-inbox-rules.el ends here
