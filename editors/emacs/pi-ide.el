;;; pi-ide.el --- Let the pi coding agent see what you are looking at -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The pi-ide-context authors
;; SPDX-License-Identifier: MIT

;; Author: The pi-ide-context authors
;; Version: 0.2.0
;; Package-Requires: ((emacs "28.1"))
;; Keywords: tools, convenience
;; URL: https://github.com/pi-ide-context/pi-ide-context

;;; Commentary:

;; `pi-ide-mode' writes what the selected window shows (file, cursor, the active region as the selection)
;; to <$XDG_RUNTIME_DIR or /tmp>/pi-ide/<emacs pid>.json, where the pi coding agent's pi-ide-context
;; extension reads it (PROTOCOL.md in the repository is the contract).  With protocol v0.3 it also
;; reloads files pi's tools changed (never a buffer with unsaved changes) and reports back, with the
;; buffer's Flymake or Flycheck diagnostics.  pi started in `term', `ansi-term', `vterm' or `eshell'
;; connects to this Emacs (PI_IDE_EDITOR_PID).
;;
;; Shape: one global minor mode that adds its hooks and removes the same ones, one debounce timer.  Hooks
;; only note what changed and arm the timer; the snapshot, the encoding and the write happen when it
;; fires, so a burst of cursor moves costs one write.  Everything a hook or timer runs is wrapped in
;; `condition-case': a bug or an I/O failure here must never surface as an error while the user types,
;; and it is reported once, not on every keystroke.
;;
;; With pi's optional approval (protocol v0.4, pi's setting `ideContext.approve: "edits"'), a write/edit
;; of pi waits for a decision: this Emacs says so in one message, marks the proposed hunks in the file's
;; buffer if it is open, shows " approve?" in the mode line, and `pi-ide-approve', `pi-ide-reject' and
;; `pi-ide-proposal' answer or show it (pi-ide-approval.el).
;;
;; pi's change set (protocol v0.4): the buffers of files pi changed mark pi's hunks of its newest run
;; (`pi-ide-review-marks'); `pi-ide-revert-hunk' puts the lines of the hunk under point back as they were
;; before pi's run, in the buffer only (one undo brings pi's version back), and pi tells its model with the
;; next prompt (not of a revert undone before it); `pi-ide-hunks' lists pi's hunks and `pi-ide-baseline' shows the file before pi's run
;; (pi-ide-review.el).
;;
;; Unsaved buffers (protocol v0.5): while a pi is connected, the texts of modified file-visiting buffers go
;; to <pid>.buffers.json beside the state file, so pi's `read' returns what you see (pi-ide-buffers.el).
;;
;; Usage: (pi-ide-mode 1) in your init file.  M-x pi-ide-status says what was written and which pi is
;; connected.  See editors/emacs/README.md.

;;; Code:

(require 'cl-lib)
(require 'pi-ide-state)
(require 'pi-ide-writer)
(require 'pi-ide-diagnostics)
(require 'pi-ide-inbox)
(require 'pi-ide-approval)
(require 'pi-ide-review)
(require 'pi-ide-send)
(require 'pi-ide-buffers)

(defgroup pi-ide nil
  "Let the pi coding agent see the file, cursor and region of the selected window."
  :group 'tools
  :prefix "pi-ide-"
  :link '(url-link "https://github.com/pi-ide-context/pi-ide-context"))

(defcustom pi-ide-debounce 0.2
  "Seconds a cursor move or an edit waits before the state file is written.
The timer is armed by the first event and not re-armed by later ones, so
continuous movement still writes every this many seconds (at most 5 a
second at the default) instead of never."
  :type 'number)

(defcustom pi-ide-prompt-gap 0.02
  "Seconds between two prompt writes (buffer switches, regions made or left).
The first one after a pause goes out at once; a burst shares one write."
  :type 'number)

(defcustom pi-ide-max-selection-bytes (* 256 1024)
  "Cap on the selection text once JSON-encoded, in bytes (PROTOCOL.md, \"Limits\")."
  :type 'integer)

(defcustom pi-ide-non-text-modes
  '(special-mode term-mode vterm-mode eshell-mode comint-mode dired-mode compilation-mode)
  "Major modes (and their derived modes) whose buffers are not the user's text.
While one of them is selected (pi's own terminal, help, a shell), the state
file keeps describing the file the user was last in, with its cursor and
region: select, switch to the terminal, type the prompt, and the selection
goes along.  The minibuffer always counts as such a buffer."
  :type '(repeat symbol))

(defcustom pi-ide-inbox-use-file-notify t
  "Watch the state directory for pi's messages with `file-notify-add-watch'.
When nil, or when file notification is unavailable, a timer looks every
`pi-ide-inbox-poll-interval' seconds instead."
  :type 'boolean)

(defcustom pi-ide-inbox-poll-interval 0.5
  "Seconds between looks at the state directory when file notification is not used."
  :type 'number)

(defcustom pi-ide-show-follow nil
  "Display a place pi's model shows (protocol v0.5, its `ide_show' tool).
Nil (the default): the place only goes to the buffer `*pi-ide shown*' (a
`grep-mode' list that `next-error', \\[next-error], walks) with one message
line, and the selected window, its buffer and point stay.  Non-nil: the
file is also visited and displayed (`pop-to-buffer') at that line."
  :type 'boolean)

(defcustom pi-ide-approval-marks t
  "Mark the hunks of a change pi waits for you to approve in the file's buffer.
The lines to go are drawn after a \"- \" in the face `pi-ide-approval', the
proposed lines after them with a \"+ \" (face `pi-ide-approval-added'), never
put in the buffer; only in a buffer already open that still holds the lines
pi read.  A buffer with unsaved changes shows each hunk where a merge would
put it, or, when it touches your unsaved lines, on those lines with a note."
  :type 'boolean)

(defcustom pi-ide-review-marks t
  "Mark pi's hunks of its newest run in the buffers of the files it changed.
Lines pi added get the face `pi-ide-review-added', lines it changed
`pi-ide-review-changed', and the line after lines it deleted a \"▁\" in
`pi-ide-review-deleted'; only in buffers already open, only where the
buffer still holds pi's lines.  `pi-ide-revert-hunk' works on these marks:
with them off, there is nothing to revert."
  :type 'boolean
  :set (lambda (sym value)
         (set-default sym value)
         (when (fboundp 'pi-ide-review-refresh) (ignore-errors (pi-ide-review-refresh)))))

;;;; State

(defvar pi-ide--timer nil "The one debounce timer, or nil.")
(defvar pi-ide--pending nil "Which write is armed: nil, `soon' (debounced) or `now' (prompt).")
(defvar pi-ide--last-write-time nil "`float-time' of the last write attempt.")
(defvar pi-ide--last-content nil "The last content written (without timestamp), to skip unchanged writes.")
(defvar pi-ide--warned nil "Keys of the warnings already shown in this spell.")
(defvar pi-ide--last-file nil "(BUFFER . WINDOW): the file the user was last in, for non-text buffers.")
(defvar pi-ide--stats nil "A plist for `pi-ide-status', tests and the benchmark.")
(defvar pi-ide--dir nil "The state directory.")
(defvar pi-ide-mode)

(defvar-local pi-ide--region-beg nil
  "Start of the active region as last seen after a command; nil when none.")

(defvar-local pi-ide--region-end nil
  "End of the active region as last seen after a command.")

(defvar-local pi-ide--region-at nil
  "When the user made the region as it is now; nil until the next snapshot.
Taken by the first snapshot after the region changed, not by the command
that changed it: a cursor event must not allocate (a float would, and the
garbage collections of a large heap cost more than everything else the hook
does), and that snapshot follows within `pi-ide-debounce'.")

(defvar-local pi-ide--lines-total nil
  "(TICK . LINES): the line count at `buffer-chars-modified-tick' TICK.")

(defun pi-ide--stat (key)
  "The status value KEY."
  (plist-get pi-ide--stats key))

(defun pi-ide--set-stat (key value)
  "Set the status value KEY to VALUE."
  (setq pi-ide--stats (plist-put pi-ide--stats key value)))

(defun pi-ide--warn-once (key fmt &rest args)
  "Show FMT with ARGS once per KEY (until a successful write re-arms it)."
  (unless (memq key pi-ide--warned)
    (push key pi-ide--warned)
    (let ((text (apply #'format fmt args)))
      (pi-ide--set-stat :last-error text)
      (message "%s" text))))

(defmacro pi-ide--guard (&rest body)
  "Run BODY; report an error once instead of raising it into the editor."
  (declare (indent 0) (debug t))
  `(condition-case err
       (progn ,@body)
     (error (pi-ide--warn-once 'internal "(pi-ide) internal error, please report it: %s"
                               (error-message-string err))
            nil)))

(defun pi-ide--path ()
  "Our state file's path."
  (format "%s/%d.json" pi-ide--dir (emacs-pid)))

;;;; Which buffer, which frame

(defun pi-ide--ui-p ()
  "Is a frame on a real terminal or display live?
Not in `--batch', nor in a daemon without a client frame: nobody looks."
  (and (not noninteractive)
       (cl-some (lambda (f) (not (equal (terminal-name (frame-terminal f)) "initial_terminal")))
                (frame-list))))

(defun pi-ide--text-buffer-p (buffer)
  "Does BUFFER hold the user's text (see `pi-ide-non-text-modes')?"
  (and (buffer-live-p buffer)
       (not (minibufferp buffer))
       (with-current-buffer buffer
         (or buffer-file-name (not (apply #'derived-mode-p pi-ide-non-text-modes))))))

(defun pi-ide--target ()
  "(BUFFER . WINDOW) the state file describes.
The selected window's, or the last file's."
  (let* ((win (selected-window))
         (win (if (minibufferp (window-buffer win)) (or (minibuffer-selected-window) win) win))
         (buf (window-buffer win))
         (last pi-ide--last-file))
    (cond
     ((or (pi-ide--text-buffer-p buf) (not (and last (buffer-live-p (car last)))))
      (when (buffer-file-name buf) (setq pi-ide--last-file (cons buf win)))
      (cons buf win))
     (t
      (let ((w (cdr last)))
        (unless (and (window-live-p w) (eq (window-buffer w) (car last)))
          (setq w (get-buffer-window (car last) t)))
        (cons (car last) w))))))

;;;; The snapshot

(defun pi-ide--lines (first last)
  "The current buffer's lines FIRST..LAST (1-based, inclusive) as strings."
  (save-excursion
    (save-restriction
      (widen)
      (goto-char (point-min))
      (let ((out nil) (n first))
        (when (= 0 (forward-line (1- first)))
          (while (<= n last)
            (push (buffer-substring-no-properties (line-beginning-position) (line-end-position)) out)
            (setq n (if (= 0 (forward-line 1)) (1+ n) (1+ last)))))
        (nreverse out)))))

(defun pi-ide--line-col (pos)
  "(LINE . CHAR-COLUMN) of POS: 1-based line, 0-based character column."
  (save-excursion
    (goto-char pos)
    (cons (line-number-at-pos pos t) (- pos (line-beginning-position)))))

(defun pi-ide--selection (win)
  "The selection plist for the current buffer shown in WIN, or nil."
  (when (and mark-active transient-mark-mode (mark t) pi-ide--region-beg)
    (let* ((pt (if (window-live-p win) (window-point win) (point)))
           (beg (min pt (mark t)))
           (end (max pt (mark t)))
           (b (pi-ide--line-col beg))
           (e (pi-ide--line-col end)))
      (pi-ide-state-region-selection #'pi-ide--lines (car b) (cdr b) (car e) (cdr e)
                                     (or pi-ide--region-at (setq pi-ide--region-at (float-time)))
                                     pi-ide-max-selection-bytes))))

(defun pi-ide--lines-total ()
  "Lines in the current buffer, cached per tick.
As Neovim counts them: a last newline ends a line."
  (let ((tick (buffer-chars-modified-tick)))
    (unless (eql (car pi-ide--lines-total) tick)
      (setq pi-ide--lines-total
            (cons tick (save-restriction (widen) (max 1 (count-lines (point-min) (point-max)))))))
    (cdr pi-ide--lines-total)))

(defun pi-ide--snapshot ()
  "(SNAPSHOT . BUFFER): the plist for `pi-ide-state-build', and its buffer."
  (pcase-let* ((`(,buf . ,win) (pi-ide--target)))
    (with-current-buffer buf
      (let* ((pt (if (and (window-live-p win) (eq (window-buffer win) buf)) (window-point win) (point)))
             ;; A remote file (TRAMP) is no path on this machine: like Neovim's scp:// buffers, not a file.
             (file (and buffer-file-name (not (file-remote-p buffer-file-name))
                        (expand-file-name buffer-file-name))))
        (save-excursion
          (goto-char pt)
          (cons
           (list :pid (emacs-pid)
                 :pid-ns (pi-ide-state-own-pid-ns)
                 :cwd (directory-file-name (expand-file-name default-directory))
                 :argv (pi-ide-state-filter-argv (cdr command-line-args))
                 :file file
                 :name (if buffer-file-name (file-name-nondirectory buffer-file-name) (buffer-name))
                 :language (pi-ide-state-language major-mode)
                 :line (line-number-at-pos pt t)
                 :column (1+ (- (position-bytes pt) (position-bytes (line-beginning-position))))
                 :selection (pi-ide--selection win)
                 :modified (buffer-modified-p)
                 :lines-total (pi-ide--lines-total)
                 :max-selection-bytes pi-ide-max-selection-bytes)
           buf))))))

;;;; Writing

(defun pi-ide--remove-file ()
  "Delete our state file if we wrote it; forget the last content written."
  (when (and (pi-ide--stat :written) pi-ide--dir)
    (let ((problem (pi-ide-writer-remove pi-ide--dir (emacs-pid))))
      (pi-ide--set-stat :written (and problem t))
      (when problem (pi-ide--set-stat :last-error (cdr problem)))))
  ;; After the state file: no state names it any more.
  (pi-ide--remove-unsaved-buffers)
  (setq pi-ide--last-content nil))

(defun pi-ide--unsaved-buffers (payload buf now)
  "Write the unsaved buffers' file when due, and name it in PAYLOAD; the serial.
BUF is the buffer the state describes, NOW the time.  Only while a pi is
connected (protocol v0.5: nothing is added to a keystroke without one).
Returns the serial named, or nil when the state names none."
  (when (pi-ide-inbox-connected)
    (pcase-let ((`(,serial . ,problem)
                 (let ((dir-problem (pi-ide-writer-ensure-dir pi-ide--dir)))
                   (if dir-problem (cons nil dir-problem)
                     (pi-ide-buffers-prepare pi-ide--dir (emacs-pid) buf t now)))))
      (if problem
          ;; The state goes without buffers_serial: pi reads the disk, as before.
          (pi-ide--warn-once 'buffers "(pi-ide) not handing the unsaved buffers to pi: %s" (cdr problem))
        (setq pi-ide--warned (delq 'buffers pi-ide--warned)))
      (when serial (nconc payload `((buffers_serial . ,serial))))
      serial)))

(defun pi-ide--remove-unsaved-buffers ()
  "Remove the unsaved buffers' file once the state file no longer names it."
  (when (and pi-ide--dir (pi-ide-buffers-written-p))
    (let ((problem (pi-ide-buffers-remove pi-ide--dir (emacs-pid))))
      (when problem (pi-ide--set-stat :last-error (cdr problem))))))

(defun pi-ide-write-now (&optional force)
  "Write the state file now unless its content would not change.
FORCE writes anyway.
Returns nil on success or when nothing was due, else the problem."
  (when force (setq pi-ide--last-content nil))
  (cond
   ((not pi-ide-mode) nil)
   ((not (pi-ide--ui-p)) (pi-ide--remove-file) nil)
   (t
    (pcase-let* ((`(,snap . ,buf) (pi-ide--snapshot))
                 (payload (pi-ide-inbox-annotate (pi-ide-state-build snap) buf))
                 (now (float-time))
                 (serial (pi-ide--unsaved-buffers payload buf now))
                 (`(,content . ,text) (pi-ide-state-encode payload now)))
      (if (and content (equal content pi-ide--last-content))
          (progn (pi-ide--set-stat :skipped (1+ (or (pi-ide--stat :skipped) 0)))
                 (unless serial (pi-ide--remove-unsaved-buffers))
                 nil)
        (let ((problem (if content
                           (or (pi-ide-writer-ensure-dir pi-ide--dir)
                               (pi-ide-writer-write pi-ide--dir (emacs-pid) text))
                         (cons 'io text))))
          (if problem
              (progn
                (pi-ide--set-stat :failures (1+ (or (pi-ide--stat :failures) 0)))
                ;; One warning per failure spell, not one per cursor move; a success re-arms it.
                (pi-ide--warn-once (if (memq (car problem) '(symlink not-directory foreign-owner open-permissions))
                                       'insecure 'write)
                                   "(pi-ide) not writing the state file: %s" (cdr problem))
                (pi-ide--set-stat :last-error (cdr problem))
                problem)
            (setq pi-ide--warned (cl-set-difference pi-ide--warned '(insecure write))
                  pi-ide--last-content content)
            ;; The state no longer names the unsaved buffers (none modified, or no pi connected): they go.
            (unless serial (pi-ide--remove-unsaved-buffers))
            (pi-ide--set-stat :writes (1+ (or (pi-ide--stat :writes) 0)))
            (pi-ide--set-stat :last-write now)
            (pi-ide--set-stat :last-error nil)
            (pi-ide--set-stat :last-payload payload)
            (pi-ide--set-stat :written t)
            nil)))))))

(defun pi-ide--on-timer ()
  "The debounce timer fired: write."
  (setq pi-ide--timer nil pi-ide--pending nil)
  (when pi-ide-mode
    (setq pi-ide--last-write-time (float-time))
    (pi-ide--guard (pi-ide-write-now))))

(defun pi-ide-schedule (&optional urgent)
  "Ask for a write; URGENT ones go out at once.
Or `pi-ide-prompt-gap' after the last one.
Others are coalesced for `pi-ide-debounce' seconds."
  (when pi-ide-mode
    (cond
     (urgent
      (unless (eq pi-ide--pending 'now)
        (when pi-ide--timer (cancel-timer pi-ide--timer))
        (setq pi-ide--pending 'now
              pi-ide--timer
              (run-at-time (if pi-ide--last-write-time
                               (max 0 (- (+ pi-ide--last-write-time pi-ide-prompt-gap) (float-time)))
                             0)
                           nil #'pi-ide--on-timer))))
     ((null pi-ide--pending)
      (setq pi-ide--pending 'soon
            pi-ide--timer (run-at-time pi-ide-debounce nil #'pi-ide--on-timer))))))

;;;; Hooks

(defun pi-ide--track-region ()
  "Note the current buffer's active region; non-nil when it was made or left.
Allocates nothing: this runs after every command."
  (if (and mark-active transient-mark-mode)
      (let ((b (region-beginning)) (e (region-end)) (new (null pi-ide--region-beg)))
        (unless (and (eql b pi-ide--region-beg) (eql e pi-ide--region-end))
          (setq pi-ide--region-beg b pi-ide--region-end e pi-ide--region-at nil))
        new)
    (when pi-ide--region-beg
      (setq pi-ide--region-beg nil pi-ide--region-end nil pi-ide--region-at nil)
      t)))

(defun pi-ide--post-command ()
  "After every command: follow the region, arm the write."
  (pi-ide--guard (pi-ide-schedule (pi-ide--track-region))))

(defun pi-ide--urgent (&rest _)
  "A buffer or window switch, a save, a frame: write promptly."
  (pi-ide--guard (pi-ide-schedule t)))

(defun pi-ide--soon (&rest _)
  "Something may have changed: a debounced write.
The buffer list changes whenever any package makes a buffer; a switch the
user sees also runs the window hooks, which write promptly."
  (pi-ide--guard (pi-ide-schedule nil)))

(defun pi-ide--frames-changed (&rest _)
  "A frame was made or deleted: write, or remove the file without a UI."
  (pi-ide--guard
    (if (pi-ide--ui-p) (pi-ide-schedule t) (pi-ide--remove-file))))

(defun pi-ide--file-read ()
  "A file was visited or reverted: record its path for reloads, write promptly."
  (pi-ide--guard
    (pi-ide-inbox-buffer-read) (pi-ide-approval-buffer-read) (pi-ide-review-buffer-read) (pi-ide-schedule t)))

(defun pi-ide--saved ()
  "The buffer was saved: its file and buffer agree again."
  (pi-ide--guard (pi-ide-inbox-buffer-synced) (pi-ide-review-buffer-saved) (pi-ide-schedule t)))

(defun pi-ide--killed ()
  "A buffer is being killed."
  (pi-ide--guard
    (pi-ide-inbox-forget-buffer)
    (pi-ide-review-buffer-killed)
    (when (eq (car pi-ide--last-file) (current-buffer)) (setq pi-ide--last-file nil))))

(defun pi-ide--diagnostics-changed (buffer)
  "BUFFER's diagnostics changed: write promptly when pi can see them."
  (pi-ide--guard
    (when (or (eq buffer (car (pi-ide--target))) (pi-ide-inbox-report-buffer-p buffer))
      (pi-ide-schedule t))))

(defun pi-ide--report ()
  "A pi message was handled: write the reports promptly."
  (pi-ide--guard (pi-ide-schedule t)))

(defun pi-ide--kill-emacs ()
  "Emacs exits: remove the state file."
  (condition-case nil (pi-ide--stop) (error nil)))

(defconst pi-ide--hooks
  '((post-command-hook . pi-ide--post-command)
    (window-selection-change-functions . pi-ide--urgent)
    (window-buffer-change-functions . pi-ide--urgent)
    (buffer-list-update-hook . pi-ide--soon)
    (after-save-hook . pi-ide--saved)
    (find-file-hook . pi-ide--file-read)
    (after-revert-hook . pi-ide--file-read)
    (kill-buffer-hook . pi-ide--killed)
    (after-make-frame-functions . pi-ide--frames-changed)
    (after-delete-frame-functions . pi-ide--frames-changed)
    (server-after-make-frame-hook . pi-ide--frames-changed)
    (kill-emacs-hook . pi-ide--kill-emacs))
  "Every hook `pi-ide-mode' adds, and removes again.")

;;;; The mode

(defun pi-ide--start ()
  "Start writing: hooks, environment, the inbox."
  (setq pi-ide--dir (pi-ide-writer-state-dir (getenv "XDG_RUNTIME_DIR"))
        pi-ide--last-content nil
        pi-ide--warned nil
        pi-ide--stats (list :writes 0 :skipped 0 :failures 0))
  (dolist (h pi-ide--hooks) (add-hook (car h) (cdr h)))
  ;; Processes started in this Emacs's terminals (term, ansi-term, vterm, eshell, shell, compile) find it
  ;; by this pid: pi connects to the editor it runs in.
  (setenv "PI_IDE_EDITOR_PID" (number-to-string (emacs-pid)))
  (setq pi-ide-diagnostics-changed-function #'pi-ide--diagnostics-changed
        pi-ide-inbox-report-function #'pi-ide--report
        pi-ide-approval-changed-function #'pi-ide--report
        pi-ide-review-changed-function #'pi-ide--report)
  (pi-ide-diagnostics-enable)
  (let ((problem (pi-ide-writer-ensure-dir pi-ide--dir)))
    (if problem
        (pi-ide--warn-once 'insecure "(pi-ide) not writing the state file: %s" (cdr problem))
      (pi-ide--set-stat :inbox (pi-ide-inbox-start pi-ide--dir))))
  (pi-ide-schedule t))

(defun pi-ide--stop ()
  "Stop: remove hooks and timer, restore the environment, delete our file."
  (dolist (h pi-ide--hooks) (remove-hook (car h) (cdr h)))
  (when pi-ide--timer (cancel-timer pi-ide--timer))
  (setq pi-ide--timer nil pi-ide--pending nil)
  (pi-ide-inbox-stop)
  (pi-ide-diagnostics-disable)
  (when (equal (getenv "PI_IDE_EDITOR_PID") (number-to-string (emacs-pid)))
    (setenv "PI_IDE_EDITOR_PID" nil))
  (pi-ide--remove-file))

(defun pi-ide-mode-line ()
  "The mode line text for the connected pi.
\"\" without one, \" pi\" with one, \" pi+N\" when its
last turn changed N files; \" approve?\" follows while pi waits for your
approval of a change."
  (condition-case nil
      (let* ((pi (pi-ide-inbox-connected))
             (waits (pi-ide-approval-status-text))
             (text (cond ((plist-get pi :last-turn) (format " pi+%d" (length (plist-get pi :last-turn))))
                         ((or pi (not (equal waits ""))) " pi")
                         (t ""))))
        (concat text waits))
    (error "")))

;;;###autoload
(define-minor-mode pi-ide-mode
  "Let the pi coding agent see the file, cursor and region of the selected window.
Writes the state file pi reads (PROTOCOL.md), reloads files pi changed in
unmodified buffers, and shows \" pi\" in the mode line while a pi is
connected (\" pi+N\" when its last turn changed N files).  When pi waits
for your approval of an edit (pi's setting ideContext.approve \"edits\"),
it says so, marks the proposed hunks in the file's buffer if open, adds
\" approve?\" to the mode line, and `pi-ide-approve', `pi-ide-reject' and
`pi-ide-proposal' answer or show it.  The buffers of files pi changed mark
pi's hunks of its newest run (`pi-ide-review-marks'), and
`pi-ide-revert-hunk' takes one back in the buffer (`pi-ide-revert-file'
all of them); `pi-ide-hunks' lists
them and `pi-ide-baseline' shows the file as it was before pi's run."
  :global t
  :group 'pi-ide
  :lighter (:eval (pi-ide-mode-line))
  (pi-ide--guard
    (if pi-ide-mode (pi-ide--start) (pi-ide--stop))))

(defun pi-ide--age (now then)
  "How long ago THEN was at NOW, in words."
  (let ((d (max 0 (- now then))))
    (cond ((< d 60) (format "%.1fs ago" d))
          ((< d 3600) (format "%dm%02ds ago" (floor d 60) (mod (floor d) 60)))
          (t (format "%dh%02dm ago" (floor d 3600) (mod (floor d 60) 60))))))

(defun pi-ide--diagnostics-line (diagnostics version checkers)
  "The status line for DIAGNOSTICS written with buffer VERSION, from CHECKERS."
  (if (not (consp diagnostics))
      "diagnostics: unknown (no Flymake or Flycheck report for this buffer)"
    (let ((at (alist-get 'version diagnostics)))
      (format "diagnostics: %d from %s, %s" (alist-get 'total diagnostics)
              (if checkers (mapconcat #'identity checkers ", ") "a checker")
              (if (eql at version) "for the current content"
                (format "for older content (version %s, the buffer is at %s)" at version))))))

(defun pi-ide-summary ()
  "Lines for `pi-ide-status'."
  (let* ((now (float-time))
         (lines (list (format "pi-ide: %s" (if pi-ide-mode "enabled" "disabled")))))
    (when pi-ide--dir
      (push (format "state file: %s (%s)" (pi-ide--path)
                    (if (pi-ide-writer-inspect (pi-ide--path)) "present" "absent"))
            lines))
    (when (pi-ide--stat :last-error) (push (concat "problem: " (pi-ide--stat :last-error)) lines))
    (when (and pi-ide--dir (pi-ide-buffers-written-p))
      (push (format "unsaved buffers: handed to pi in %s/%s" pi-ide--dir (pi-ide-state-buffers-name (emacs-pid)))
            lines))
    (when (and pi-ide-mode (not (pi-ide--ui-p)))
      (push "no UI frame (batch, or a daemon without a client frame): no state file until one appears" lines))
    (push (format "pi's messages: %s" (pcase (pi-ide-inbox-method)
                                        ('file-notify "watched (file-notify)")
                                        ('timer (format "looked for every %ss (no file notification)"
                                                        pi-ide-inbox-poll-interval))
                                        (_ "not watched")))
          lines)
    (let ((p (pi-ide--stat :last-payload)))
      (if (not (pi-ide--stat :last-write))
          (push "last write: none yet" lines)
        (push (format "last write: %s (%s), %d writes, %d unchanged skipped"
                      (format-time-string "%H:%M:%S" (pi-ide--stat :last-write))
                      (pi-ide--age now (pi-ide--stat :last-write))
                      (pi-ide--stat :writes) (pi-ide--stat :skipped))
              lines)
        (let* ((b (alist-get 'active_buffer p))
               (file (alist-get 'file b))
               (lang (alist-get 'language b))
               (cursor (alist-get 'cursor b))
               (sel (alist-get 'selection b)))
          (push (format "buffer: %s [%s] line %d col %d of %d%s"
                        (if (stringp file) file (concat (alist-get 'name b) " (not a file)"))
                        (if (stringp lang) lang "no language")
                        (alist-get 'line cursor) (alist-get 'column cursor) (alist-get 'lines_total b)
                        (if (eq (alist-get 'modified b) t) ", modified" ""))
                lines)
          (push (if (consp sel)
                    (format "selection: %d:%d-%d:%d, %d bytes%s, made %s"
                            (alist-get 'line (alist-get 'start sel)) (alist-get 'column (alist-get 'start sel))
                            (alist-get 'line (alist-get 'end sel)) (alist-get 'column (alist-get 'end sel))
                            (string-bytes (alist-get 'text sel))
                            (if (alist-get 'truncated sel) " (cut to pi-ide-max-selection-bytes)" "")
                            (pi-ide--age now (alist-get 'selected_at sel)))
                  "selection: none")
                lines)
          (push (pi-ide--diagnostics-line (alist-get 'diagnostics b) (alist-get 'version b)
                                          (pi-ide-diagnostics-followed (car (pi-ide--target))))
                lines)
          (push (concat "cwd: " (alist-get 'cwd p)) lines))))
    (append (nreverse lines) (pi-ide-inbox-summary-lines) (pi-ide-send-summary-lines))))

;;;; Approval (protocol v0.4)

(defun pi-ide--answer (decision)
  "Answer the request the user saw with DECISION; say what happened.
pi's files are read again first: a request answered elsewhere, run out or
replaced since is not answered (see `pi-ide-approval-decide')."
  (let ((said (condition-case err
                  (let ((seen pi-ide-approval--seen))
                    (pi-ide-inbox-refresh-approvals)
                    (pi-ide-approval-decide decision seen))
                (error (format "(pi-ide) internal error, please report it: %s" (error-message-string err))))))
    (message "%s" said)
    said))

;;;###autoload
(defun pi-ide-approve ()
  "Let pi apply the change it waits for you to approve."
  (interactive)
  (pi-ide--answer "accept"))

;;;###autoload
(defun pi-ide-reject ()
  "Tell pi not to apply the change it waits on.
pi tells its model that you rejected it."
  (interactive)
  (pi-ide--answer "reject"))

;;;###autoload
(defun pi-ide-proposal ()
  "Show the change pi waits for you to approve, as a read-only diff.
The window is displayed, not selected; neither the file nor its buffer
changes."
  (interactive)
  (let ((said (condition-case err
                  (pi-ide-approval-show)
                (error (format "(pi-ide) internal error, please report it: %s" (error-message-string err))))))
    (when said (message "%s" said))
    said))

;;;; pi's change set (protocol v0.4)

;;;###autoload
(defun pi-ide-revert-hunk ()
  "Put back the lines of pi's hunk under point as they were before pi's run.
In the buffer, not on disk: one undo brings pi's version back, and you save
when you choose.  Refused when you changed the hunk's lines after pi's edit.
pi tells its model with your next prompt which of its hunks you reverted;
a revert you undo is not one any more: pi is not told of it."
  (interactive)
  (let ((said (condition-case err
                  (pi-ide-review-revert-at-point)
                (error (format "(pi-ide) not reverted: %s" (error-message-string err))))))
    (message "%s" said)
    said))

;;;###autoload
(defun pi-ide-revert-file ()
  "Put back every hunk of pi's in this buffer as it was before pi's run.
In the buffer, not on disk, as one change: one undo brings pi's version
back.  Hunks whose lines you changed after pi's edit are refused and stay."
  (interactive)
  (let ((said (condition-case err
                  (pi-ide-review-revert-buffer-hunks)
                (error (format "(pi-ide) not reverted: %s" (error-message-string err))))))
    (message "%s" said)
    said))

;;;###autoload
(defun pi-ide-hunks ()
  "List pi's hunks of its last run, every file, in a `compilation-mode' buffer.
It is displayed, not selected; RET on a line visits the hunk."
  (interactive)
  (let ((said (condition-case err
                  (pi-ide-review-show-hunks)
                (error (format "(pi-ide) internal error, please report it: %s" (error-message-string err))))))
    (when said (message "%s" said))
    said))

;;;###autoload
(defun pi-ide-baseline ()
  "Show the current buffer's file as it was before pi's last run changed it.
Read-only, displayed, not selected: neither the file nor its buffer changes."
  (interactive)
  (let ((said (condition-case err
                  (pi-ide-review-show-baseline)
                (error (format "(pi-ide) internal error, please report it: %s" (error-message-string err))))))
    (when said (message "%s" said))
    said))

;;;; Send to pi (protocol v0.5)

(defun pi-ide--send-prompt (now)
  "Ask for the words to send with (at once when NOW)."
  (read-string (if now "Send to pi at once, with: " "Send to pi as a draft, with: ")))

;;;###autoload
(defun pi-ide-send (&optional now prompt)
  "Send the region (or the line of point) to pi, with PROMPT.
By default as a draft in pi's input, for you to finish and send; with a
prefix argument (NOW non-nil: \[universal-argument] \[pi-ide-send]) at once: a
prompt when pi is idle, a follow-up when it is busy.  PROMPT is asked in the
minibuffer.  Goes to the pi connected to this Emacs (asked once when there are
several); pi refuses a file its ignore rules exclude, and says so."
  (interactive (list current-prefix-arg (pi-ide--send-prompt current-prefix-arg)))
  (pi-ide-send-run nil now prompt))

;;;###autoload
(defun pi-ide-send-diagnostic (&optional now prompt)
  "Send the diagnostic under point (Flymake's or Flycheck's) to pi, with PROMPT.
Its message and lines.  A draft in pi's input; with a prefix argument (NOW)
at once, as `pi-ide-send'."
  (interactive (list current-prefix-arg (pi-ide--send-prompt current-prefix-arg)))
  (pi-ide-send-run 'diagnostic now prompt))

;;;###autoload
(defun pi-ide-send-hunk (&optional now prompt)
  "Send pi's hunk under point to pi, with PROMPT.
A draft in pi's input; with a prefix argument (NOW) at once, as
`pi-ide-send'."
  (interactive (list current-prefix-arg (pi-ide--send-prompt current-prefix-arg)))
  (pi-ide-send-run 'hunk now prompt))

;;;###autoload
(defun pi-ide-send-file (&optional now prompt)
  "Send the whole file of this buffer to pi, with PROMPT.
A draft in pi's input; with a prefix argument (NOW) at once, as
`pi-ide-send'."
  (interactive (list current-prefix-arg (pi-ide--send-prompt current-prefix-arg)))
  (pi-ide-send-run 'file now prompt))

;;;###autoload
(defun pi-ide-status ()
  "Say what pi-ide wrote last, and which pi is connected to this Emacs."
  (interactive)
  (let ((text (condition-case err
                  (mapconcat #'identity (pi-ide-summary) "\n")
                (error (format "(pi-ide) %s" (error-message-string err))))))
    (when (called-interactively-p 'interactive)
      (message "%s" text))
    text))

(provide 'pi-ide)
;;; pi-ide.el ends here
