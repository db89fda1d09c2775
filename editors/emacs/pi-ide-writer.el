;;; pi-ide-writer.el --- The state directory's rules for pi-ide -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The pi-ide-context authors
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; The only part of pi-ide that touches the state directory: its checks, the atomic write, the removal,
;; and the guarded read of pi's messages.  These are the rules of src/protocol/state-dir.ts and of the
;; Neovim client's writer.lua; one table of cases (test/fixtures/state-dir-cases.ts) runs against all
;; three (test/emacs/state-dir.test.ts for this one).  Functions return errors as data, never signal:
;; a problem is a cons (KIND . MESSAGE) with KIND one of `missing', `symlink', `not-directory',
;; `foreign-owner', `open-permissions', `uncreatable', `temp-in-the-way', `io'.
;;
;; The state file can hold selected source text, so it must never land where someone else can read it or
;; redirect it: the directory is created 0700 (last component only), and an existing one is used only when
;; it is a real directory (`file-attributes' does not follow symlinks), owned by us, with no group/other
;; permission bits.  File name handlers (TRAMP and the like), lock files and write hooks are off for every
;; operation here: none of them may act on the state directory.

;;; Code:

(require 'cl-lib)
(require 'pi-ide-state)

(defmacro pi-ide-writer--plain (&rest body)
  "Run BODY without file name handlers, lock files or write hooks."
  (declare (indent 0) (debug t))
  `(let ((file-name-handler-alist nil)
         (create-lockfiles nil)
         (write-region-annotate-functions nil)
         (write-region-post-annotation-function nil)
         (write-region-inhibit-fsync t)
         (coding-system-for-write 'utf-8-unix)
         (coding-system-for-read 'no-conversion)
         (delete-by-moving-to-trash nil))
     ,@body))

(defun pi-ide-writer-state-dir (runtime-dir)
  "The state directory: RUNTIME-DIR/pi-ide, or /tmp/pi-ide.
RUNTIME-DIR counts only when absolute.
A relative XDG_RUNTIME_DIR is ignored, as the XDG spec says and as pi does."
  (if (and (stringp runtime-dir) (string-prefix-p "/" runtime-dir))
      (concat (replace-regexp-in-string "/+\\'" "" runtime-dir) "/pi-ide")
    "/tmp/pi-ide"))

(defun pi-ide-writer-inspect (path)
  "What PATH is, without following a symlink, or nil when absent.
A plist :type :uid :perm :size :inode :device.
:type is `dir', `link', `file', `fifo' or `other'; :perm the permission bits."
  (let ((attrs (pi-ide-writer--plain (file-attributes path 'integer))))
    (when attrs
      (let ((kind (aref (file-attribute-modes attrs) 0)))
        (list :type (pcase kind (?d 'dir) (?l 'link) (?- 'file) (?p 'fifo) (_ 'other))
              :uid (file-attribute-user-id attrs)
              :perm (pi-ide-writer--plain (logand (or (file-modes path 'nofollow) 0) #o777))
              :size (file-attribute-size attrs)
              :inode (file-attribute-inode-number attrs)
              :device (file-attribute-device-number attrs))))))

(defun pi-ide-writer-problem (dir info uid)
  "Return why DIR, described by INFO (from lstat), is unsafe for UID.
Nil when it is safe."
  (cond
   ((null info) (cons 'missing (format "%s does not exist" dir)))
   ((eq (plist-get info :type) 'link)
    (cons 'symlink (format "%s is a symbolic link; refusing to follow it (remove it)" dir)))
   ((not (eq (plist-get info :type) 'dir))
    (cons 'not-directory (format "%s is a %s, not a directory (remove it)" dir (plist-get info :type))))
   ((not (eql (plist-get info :uid) uid))
    (cons 'foreign-owner (format "%s is owned by uid %d, not by you (uid %d); not writing there"
                                 dir (plist-get info :uid) uid)))
   ((/= 0 (logand (plist-get info :perm) #o077))
    (cons 'open-permissions
          (format "%s has mode %03o: others could read your selection; not writing there (chmod 700 %s)"
                  dir (plist-get info :perm) dir)))))

(defun pi-ide-writer-check (dir &optional uid)
  "Nil when DIR may be used by UID (default: ours), else the problem.  Read-only."
  (pi-ide-writer-problem dir (pi-ide-writer-inspect dir) (or uid (user-uid))))

(defun pi-ide-writer-ensure-dir (dir &optional uid)
  "Make sure DIR exists and is safe for UID; nil or the problem.
DIR is created 0700 when missing, not its parents.
An existing directory is judged, never changed."
  (let ((failure nil))
    (unless (pi-ide-writer-inspect dir)
      (condition-case err
          (pi-ide-writer--plain
            (with-file-modes #o700 (make-directory dir nil))
            ;; The umask filters the mode; a directory we have just made is ours to set exactly.
            (set-file-modes dir #o700 'nofollow))
        ;; Another editor created it in between: the checks below decide whether we may use it.
        (file-already-exists nil)
        (error (unless (pi-ide-writer-inspect dir)
                 (setq failure (cons 'uncreatable
                                     (format "cannot create %s: %s" dir (error-message-string err))))))))
    (or failure (pi-ide-writer-check dir uid))))

(defun pi-ide-writer--write-excl (path text)
  "Write TEXT to PATH, which must not exist; nil or an error symbol.
O_EXCL: never through a link."
  (condition-case _
      (pi-ide-writer--plain
        (with-file-modes #o600 (write-region text nil path nil 'silent nil 'excl))
        nil)
    (file-already-exists 'exists)
    (error 'io)))

(defun pi-ide-writer-write (dir pid text &optional uid)
  "Atomically replace DIR/PID.json with TEXT; nil or the problem.
Writes PID.json.tmp opened exclusively with mode 0600, then renames it over
the target.  A leftover temp file that is a regular file of UID (default:
ours) is removed and the write retried once; anything else at the temp path
\(a symlink, a directory) is refused and left alone.  The caller has checked
DIR (`pi-ide-writer-ensure-dir')."
  (pi-ide-writer-write-named dir (format "%d.json" pid) text uid))

(defun pi-ide-writer-write-named (dir name text &optional uid)
  "Atomically replace DIR/NAME with TEXT, as `pi-ide-writer-write' does.
For the state file's companions (v0.5: PID.send.json, PID.buffers.json,
PID.answers.json): the same rules, NAME.tmp opened exclusively, 0600, renamed
over NAME; nil or the problem.  UID: the owner a leftover temp file must have
\(default: ours)."
  (let* ((final (concat dir "/" name))
         (tmp (concat final ".tmp"))
         (result (pi-ide-writer--write-excl tmp text)))
    (when (eq result 'exists)
      (let ((info (pi-ide-writer-inspect tmp)))
        (if (and (eq (plist-get info :type) 'file) (eql (plist-get info :uid) (or uid (user-uid))))
            (progn (ignore-errors (pi-ide-writer--plain (delete-file tmp)))
                   (setq result (pi-ide-writer--write-excl tmp text)))
          (setq result 'in-the-way))))
    (pcase result
      ('in-the-way (cons 'temp-in-the-way (format "%s exists and is not our temp file; not writing" tmp)))
      ((pred null)
       (condition-case err
           (pi-ide-writer--plain
             ;; The umask can only remove bits from 0600; this makes the mode exact whatever it is.
             (set-file-modes tmp #o600 'nofollow)
             (rename-file tmp final t)
             nil)
         (error (ignore-errors (pi-ide-writer--plain (delete-file tmp)))
                (cons 'io (format "cannot rename %s: %s" tmp (error-message-string err))))))
      (_ (ignore-errors (when (eq (plist-get (pi-ide-writer-inspect tmp) :type) 'file)
                          (pi-ide-writer--plain (delete-file tmp))))
         (cons 'io (format "cannot write %s" tmp))))))

(defun pi-ide-writer-remove (dir pid &optional uid)
  "Remove DIR/PID.json, its temp file and PID.answers.json; nil or the problem.
Only inside a directory that passes the checks for UID: unlinking
through a directory someone swapped for a symlink would delete a file
elsewhere.  A missing directory holds nothing of ours.  `delete-file'
removes a symlink, never its target.  The last send to pi (v0.5
PID.send.json) goes with it."
  (let ((send (pi-ide-writer-remove-named dir (format "%d.send.json" pid) uid))
        ;; The answers to show and ask (v0.5) go with the state file.
        (answers (pi-ide-writer-remove-named dir (format "%d.answers.json" pid) uid))
        (state (pi-ide-writer-remove-named dir (format "%d.json" pid) uid)))
    (or state send answers)))

(defun pi-ide-writer-remove-named (dir name &optional uid)
  "Remove DIR/NAME and its temp file by `pi-ide-writer-remove's rules.
UID as there; nil or the problem."
  (let ((problem (pi-ide-writer-check dir uid)))
    (cond
     ((eq (car problem) 'missing) nil)
     (problem (cons (car problem) (concat "state dir is not ours; left it alone: " (cdr problem))))
     (t (let ((final (concat dir "/" name)))
          (pi-ide-writer--plain
            (ignore-errors (when (pi-ide-writer-inspect (concat final ".tmp")) (delete-file (concat final ".tmp"))))
            (condition-case err
                (progn (when (pi-ide-writer-inspect final) (delete-file final)) nil)
              (error (cons 'io (error-message-string err))))))))))

(defun pi-ide-writer-read-trusted (path max)
  "Read PATH when it is a regular file of ours of at most MAX bytes.
It may have no group or other permission bits.
Returns (TEXT . nil), (nil . WHY) when it may not be read, or (nil . nil)
when it is gone.  The type is checked with `file-attributes' (which does not
follow links) before anything opens the file, so a symlink or a FIFO is never
opened.  Emacs Lisp cannot open with O_NOFOLLOW nor compare the opened file
with the checked one: the attributes are read again after the read and the
text is dropped when the inode changed, but a swap between the check and the
open would be read (or, for a FIFO, block).  Only our own uid can make that
swap: the state directory is 0700 and ours (editors/emacs/README.md)."
  (let ((info (pi-ide-writer-inspect path)))
    (cond
     ((null info) (cons nil nil))
     ((not (eq (plist-get info :type) 'file))
      (cons nil (format "is a %s, not a regular file" (plist-get info :type))))
     ((not (eql (plist-get info :uid) (user-uid)))
      (cons nil (format "belongs to uid %d, not to you" (plist-get info :uid))))
     ((/= 0 (logand (plist-get info :perm) #o077))
      (cons nil (format "has group/other permissions (%03o)" (plist-get info :perm))))
     ((> (plist-get info :size) max)
      (cons nil (format "is %d bytes, over the %d-byte limit" (plist-get info :size) max)))
     (t
      (let ((bytes (condition-case nil
                       (with-temp-buffer
                         (set-buffer-multibyte nil)
                         (pi-ide-writer--plain (insert-file-contents-literally path nil 0 (1+ max)))
                         (buffer-string))
                     (error nil)))
            (after (pi-ide-writer-inspect path)))
        (cond
         ((or (null bytes) (null after)
              (not (eq (plist-get after :type) 'file))
              (not (equal (plist-get after :inode) (plist-get info :inode)))
              (not (equal (plist-get after :device) (plist-get info :device))))
          ;; Swapped or removed meanwhile: the next event reads the new file.
          (cons nil nil))
         ((> (length bytes) max) (cons nil (format "grew over the %d-byte limit" max)))
         (t (cons (decode-coding-string bytes 'utf-8) nil))))))))

(provide 'pi-ide-writer)
;;; pi-ide-writer.el ends here
