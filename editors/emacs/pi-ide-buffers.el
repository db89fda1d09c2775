;;; pi-ide-buffers.el --- The unsaved buffers' texts for pi's read -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The pi-ide-context authors
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Protocol v0.5 (PROTOCOL.md, "v0.5: the editor's unsaved buffers"): the texts of this Emacs's modified
;; file-visiting buffers go to <state dir>/<pid>.buffers.json, so that pi's `read' of such a file returns
;; what the user sees, not the disk.  pi-ide.el calls `pi-ide-buffers-prepare' on the state file's own
;; debounced write, never per keystroke, and only while a pi is connected: without one no buffer is looked
;; at.  The file is written again only when a modified buffer's `buffer-chars-modified-tick' (the state
;; file's `version') or the set of modified buffers changed, always before the state file that names its
;; `buffers_serial'; it is removed once the state no longer names it.  The same rules as the state file
;; (pi-ide-writer.el): 0600, an exclusive temp file and a rename, never through a symlink.  The Neovim and
;; Vim twins: editors/nvim/lua/pi-ide/buffers.lua, editors/vim/autoload/pi_ide/buffers.vim.

;;; Code:

(require 'cl-lib)
(require 'pi-ide-protocol)
(require 'pi-ide-state)
(require 'pi-ide-writer)

(defvar pi-ide-buffers--serial 0 "Grows with every write of the file, for the life of this Emacs.")
(defvar pi-ide-buffers--key nil "The modified buffers and their ticks at the last write of the file.")
(defvar pi-ide-buffers--written nil "Non-nil while a file of ours may exist.")

(defun pi-ide-buffers-modified (current)
  "The modified file-visiting buffers, CURRENT first: a list of (BUFFER FILE TICK).
Files only: no remote (TRAMP) files, no buffers without a file; at most
`pi-ide-state-max-unsaved-buffers'."
  (let ((out nil) (n 0))
    (dolist (buf (cons current (delq current (buffer-list))))
      (when (and (< n pi-ide-state-max-unsaved-buffers) (buffer-live-p buf) (buffer-modified-p buf))
        (let ((name (buffer-local-value 'buffer-file-name buf)))
          (when (and name (not (file-remote-p name)))
            (push (list buf (expand-file-name name) (buffer-chars-modified-tick buf)) out)
            (setq n (1+ n))))))
    (nreverse out)))

(defun pi-ide-buffers-key (mods)
  "What decides whether the file is written again: MODS' buffers, files and ticks."
  (mapcar (lambda (m) (list (nth 0 m) (nth 1 m) (nth 2 m))) mods))

(defun pi-ide-buffers--text (buf)
  "BUF's whole text (widened) as lines joined with newlines, and the line count.
\(TEXT . LINES): a last newline ends a line, as the state file counts lines."
  (with-current-buffer buf
    (save-restriction
      (widen)
      (let* ((end (if (and (> (point-max) (point-min)) (eq (char-before (point-max)) ?\n))
                      (1- (point-max))
                    (point-max)))
             (text (pi-ide-state-sanitize (buffer-substring-no-properties (point-min) end))))
        (cons text (1+ (cl-count ?\n text)))))))

(defun pi-ide-buffers-encode (pid serial mods now)
  "The file's text for MODS (from `pi-ide-buffers-modified'), PID, SERIAL, at NOW.
Each buffer's text is JSON-encoded once: its encoded size decides whether it
fits in what is left of `pi-ide-state-max-unsaved-bytes' (a buffer that does
not is listed with note \"too_large\" and no text), and the encoded string is
spliced in as it is."
  (let ((budget pi-ide-state-max-unsaved-bytes) (entries nil))
    (dolist (m mods)
      (pcase-let* ((`(,buf ,file ,tick) m)
                   (`(,text . ,lines) (pi-ide-buffers--text buf))
                   (head (format "{\"file\":%s,\"version\":%d,\"lines_total\":%d,"
                                 (json-serialize (pi-ide-state-sanitize file)) tick lines))
                   (encoded (json-serialize text))
                   (size (string-bytes encoded)))
        (push (if (<= size budget)
                  (progn (setq budget (- budget size)) (concat head "\"text\":" encoded "}"))
                (concat head "\"note\":\"too_large\"}"))
              entries)))
    (format "{\"protocol\":\"0.5\",\"kind\":\"editor-buffers\",\"pid\":%d,\"serial\":%d,\"timestamp\":%.3f,\"buffers\":[%s]}"
            pid serial now (mapconcat #'identity (nreverse entries) ","))))

(defun pi-ide-buffers-prepare (dir pid current wanted now)
  "Before the state file's write: write DIR's unsaved buffers file when due.
PID is ours, CURRENT the buffer the state describes, WANTED non-nil while a
pi is connected, NOW the time.  Returns (SERIAL . PROBLEM): SERIAL is what
the state file's `buffers_serial' names (nil: none), PROBLEM nil or the
writer's (KIND . MESSAGE), when the file could not be written (the state
then names none: pi reads the disk).  Without WANTED no buffer is looked at."
  (let ((mods (and wanted (pi-ide-buffers-modified current))))
    (if (null mods)
        (cons nil nil)
      (let ((key (pi-ide-buffers-key mods))
            (name (pi-ide-state-buffers-name pid)))
        ;; Unchanged and still there (it goes with the state dir when someone removes that): named again.
        (if (and pi-ide-buffers--written (equal key pi-ide-buffers--key)
                 (eq (plist-get (pi-ide-writer-inspect (concat dir "/" name)) :type) 'file))
            (cons pi-ide-buffers--serial nil)
          (let* ((serial (1+ pi-ide-buffers--serial))
                 (problem (pi-ide-writer-write-named dir name (pi-ide-buffers-encode pid serial mods now))))
            (if problem
                (cons nil problem)
              (setq pi-ide-buffers--serial serial pi-ide-buffers--key key pi-ide-buffers--written t)
              (cons serial nil))))))))

(defun pi-ide-buffers-remove (dir pid)
  "Remove editor PID's unsaved buffers file from DIR, if one may exist.
Nil or the problem.  Called once the state file no longer names it."
  (when pi-ide-buffers--written
    (let ((problem (pi-ide-writer-remove-named dir (pi-ide-state-buffers-name pid))))
      (unless problem (setq pi-ide-buffers--written nil pi-ide-buffers--key nil))
      problem)))

(defun pi-ide-buffers-written-p ()
  "Non-nil while a file of ours may exist."
  pi-ide-buffers--written)

(provide 'pi-ide-buffers)
;;; pi-ide-buffers.el ends here
