;;; pi-ide-approval.el --- Answer pi's requests for approval of its edits -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The pi-ide-context authors
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Protocol v0.4, optional approval.  With the pi setting `ideContext.approve: "edits"', pi's write/edit
;; waits for the user's decision: pi writes <state dir>/pi-<pid>.approval.json (the proposed hunks against
;; the file as it is now) while it waits and removes it once decided, however that happens.  pi-ide-inbox.el
;; reads that file under the rules of pi's message (regular file, owner, mode, no link, size cap), for a
;; live pi of this user, and hands the validated request here.  Passive, never blocking:
;;
;; - one message when a request for this Emacs arrives (no prompt, no focus taken, point never moved);
;; - the proposed hunks marked in the file's buffer when it is already open and still holds the lines pi
;;   read (the lines to go in `pi-ide-approval', the proposed ones shown after them, never inserted);
;; - issue 26: a buffer with unsaved changes shows the proposal against what the user sees, by the merge's rule
;;   (pi-ide-merge.el; the user's changes are the line diff disk -> buffer): a hunk that touches none of them is
;;   marked where the merge would put it, one that touches them is marked on the user's lines, and the arrival
;;   message names those lines ("1 of 2 hunks touches your unsaved line 8: ..."); `pi-ide-proposal' then shows
;;   the buffer beside the buffer with the other hunks placed;
;; - \" approve?\" in the mode line, and the request in `pi-ide-status';
;; - `pi-ide-approve' and `pi-ide-reject' (pi-ide.el) put the decision in the state file's `decisions',
;;   which pi reads; `pi-ide-proposal' shows the change as a read-only diff.
;;
;; An answer is for the request the user saw (PROTOCOL.md): `pi-ide-approve' and `pi-ide-reject' answer
;; the request this Emacs last showed (its message, or `pi-ide-proposal') and the user has not answered.
;; A request that arrives while one shown is unanswered is told but does not take its place; when the one
;; shown no longer waits and another does, they refuse in one message naming the other, and the same
;; command again answers it.
;;
;; Doing nothing is not a rejection: pi's own dialog may answer, or its timeout ends the wait.  A request
;; that ends otherwise (file removed, run out, its pi gone) leaves no marks.  Nothing here changes a buffer
;; or a file, or opens, runs or deletes anything because the request said so.

;;; Code:

(require 'cl-lib)
(require 'diff-mode)
(require 'pi-ide-state)
(require 'pi-ide-approval-rules)

(defvar pi-ide-approval-marks)
(declare-function pi-ide-inbox-liveness "pi-ide-inbox" (key))
(declare-function pi-ide-inbox--read-verified "pi-ide-inbox" (path))

(defface pi-ide-approval
  '((t :inherit diff-removed))
  "The lines pi's proposed change would replace or delete."
  :group 'pi-ide)

(defface pi-ide-approval-added
  '((t :inherit diff-added))
  "The lines pi's proposed change would put in, shown after them."
  :group 'pi-ide)

(defvar pi-ide-approval-changed-function #'ignore
  "Called with no argument when `decisions' changed.
pi-ide.el asks for a prompt write.")

(defvar pi-ide-approval--pending nil "Alist: pi pid -> the request it waits on (a plist).")
(defvar pi-ide-approval--decisions nil "The decisions for the state file, newest last.")
(defvar pi-ide-approval--told nil "The (PID . ID) of the requests already told.")
(defvar pi-ide-approval--seen nil
  "The (PID . ID) of the request last shown to the user, unanswered, or nil.
The one `pi-ide-approve' and `pi-ide-reject' answer.")
(defvar pi-ide-approval--timer nil "The timer that drops requests run out or of a pi gone, or nil.")

(defconst pi-ide-approval-commands "M-x pi-ide-approve / pi-ide-reject / pi-ide-proposal"
  "How to answer, as the messages say it.")

(defconst pi-ide-approval-proposal-buffer "*pi-ide proposal*"
  "The buffer `pi-ide-proposal' shows.")

(defun pi-ide-approval--buffer (file)
  "The live buffer visiting FILE, or nil.
No file name handlers: a path from pi's file never reaches TRAMP."
  (let ((file-name-handler-alist nil)) (find-buffer-visiting file)))

(defun pi-ide-approval--name (file)
  "FILE as the messages show it."
  (pi-ide-state-inert (let ((file-name-handler-alist nil)) (abbreviate-file-name file))))

;;;; Marks

(defvar pi-ide-approval--recheck-timer nil "The timer that checks edited marked buffers again, or nil.")
(defvar pi-ide-approval--edited nil "Marked buffers edited since the last check.")

(defvar-local pi-ide-approval--marked nil
  "The file of the request this buffer's approval marks show, or nil.")

(defun pi-ide-approval--unmark-buffer (buffer)
  "Clear BUFFER of its approval overlays."
  (with-current-buffer buffer
    (save-restriction
      (widen)
      (remove-overlays (point-min) (point-max) 'pi-ide-approval t))
    (setq pi-ide-approval--marked nil)
    (remove-hook 'after-change-functions #'pi-ide-approval--on-change t)))

(defun pi-ide-approval--on-change (&rest _)
  "Check the current buffer's approval overlays again soon: it changed.
See `pi-ide-approval--recheck'."
  (condition-case nil
      (progn
        (cl-pushnew (current-buffer) pi-ide-approval--edited)
        (unless pi-ide-approval--recheck-timer
          (setq pi-ide-approval--recheck-timer (run-at-time 0.2 nil #'pi-ide-approval--recheck))))
    (error nil)))

(defun pi-ide-approval--recheck ()
  "Mark the edited buffers again.
A buffer whose edits took away the lines pi read loses its marks, and gets
them back when they are there again (an undo): marks stay on pi's lines."
  (setq pi-ide-approval--recheck-timer nil)
  (dolist (buffer (prog1 pi-ide-approval--edited (setq pi-ide-approval--edited nil)))
    (condition-case nil
        (when (buffer-live-p buffer)
          (let ((file (buffer-local-value 'pi-ide-approval--marked buffer)))
            (when file (pi-ide-approval--mark file))))
      (error nil))))

(defconst pi-ide-approval--prefix (propertize "- " 'face 'pi-ide-approval)
  "What each line a proposed change replaces or deletes is drawn after.")

(defun pi-ide-approval--overlay (beg end prop value &optional old)
  "An approval mark from BEG to END showing VALUE as PROP.
With OLD, the text it covers is what the change replaces."
  (let ((o (make-overlay beg end nil t nil)))
    (overlay-put o 'pi-ide-approval t)
    (when old
      (overlay-put o 'face 'pi-ide-approval)
      (overlay-put o 'line-prefix pi-ide-approval--prefix))
    (when value (overlay-put o prop value))
    o))

(defun pi-ide-approval--added (&rest parts)
  "PARTS as one string in the face `pi-ide-approval-added'."
  (let ((s (apply #'concat parts)))
    (put-text-property 0 (length s) 'face 'pi-ide-approval-added s)
    s))

(defun pi-ide-approval-goto-line-function ()
  "A function moving point to the start of line N (1 to the last) of the buffer.
It moves from the line it went to last: for hunks in order, a proposal
costs what lies between its hunks, not the buffer's size once per hunk."
  (let ((line 1) (pos (point-min)))
    (lambda (n)
      (goto-char pos)
      (forward-line (- n line))
      (setq line n pos (point)))))

(defun pi-ide-approval-line-reader (goto last-line)
  "A reader of lines for `pi-ide-state-hunks-match-p', moving with GOTO.
It takes FIRST and LAST.  LAST-LINE is the current buffer's last line;
lines past it are not there."
  (lambda (first last)
    (when (and (<= 1 first) (<= first last) (<= last last-line))
      (funcall goto first)
      (cl-loop repeat (1+ (- last first))
               collect (prog1 (buffer-substring-no-properties (point) (line-end-position)) (forward-line 1))))))

(defun pi-ide-approval--mark-hunk (hunk goto last-line)
  "Mark HUNK in the current buffer (widened), moving with GOTO.
LAST-LINE is the buffer's last line."
  (let* ((start (max 1 (alist-get 'old_start hunk)))
         (n (length (alist-get 'old_text hunk)))
         (shown (mapconcat #'identity (pi-ide-state-proposed-lines (alist-get 'new_text hunk)) "\n")))
    (cond
     ((> n 0)
      ;; The lines to go, newlines included (an empty line too shows its mark), each drawn after a "- ".
      (funcall goto start)
      (let ((beg (point)))
        (forward-line n)
        (pi-ide-approval--overlay beg (point) 'after-string
                                  (cond ((equal shown "") nil)
                                        ((bolp) (pi-ide-approval--added shown "\n"))
                                        ;; The last line, without a newline.
                                        (t (pi-ide-approval--added "\n" shown)))
                                  t)))
     ((equal shown ""))
     ;; An insertion: above the line it goes before, or after the last line.
     ((<= start last-line)
      (funcall goto start)
      (pi-ide-approval--overlay (point) (point) 'before-string (pi-ide-approval--added shown "\n")))
     (t
      (goto-char (point-max))
      (pi-ide-approval--overlay (point) (point) 'after-string
                                (if (bolp) (pi-ide-approval--added shown) (pi-ide-approval--added "\n" shown)))))))

(defconst pi-ide-approval--touch-note
  "pi's hunk touches your unsaved lines: if accepted, the file gets pi's text and your buffer keeps yours"
  "What is drawn after the user's lines a proposed hunk touches.")

(defun pi-ide-approval--mark-touching (place goto last-line)
  "Mark the user's lines of PLACE, (FROM TO t), in the current buffer.
Moving with GOTO; LAST-LINE is the buffer's last line.  The user deleted
them when FROM = TO: the note stands where they were."
  (let ((from (nth 0 place)) (to (nth 1 place))
        (note (propertize pi-ide-approval--touch-note 'face 'pi-ide-approval)))
    (cond
     ((> to from)
      (funcall goto (1+ from))
      (let ((beg (point)))
        (forward-line (- to from))
        (pi-ide-approval--overlay beg (point) 'after-string
                                  (if (bolp) (concat note "\n") (concat "\n" note)) t)))
     ((< from last-line)
      (funcall goto (1+ from))
      (pi-ide-approval--overlay (point) (point) 'before-string (concat note "\n")))
     (t
      (goto-char (point-max))
      (pi-ide-approval--overlay (point) (point) 'after-string (if (bolp) note (concat "\n" note)))))))

(defun pi-ide-approval--sorted-hunks (r)
  "The hunks of request R, ascending."
  (sort (copy-sequence (plist-get r :hunks))
        (lambda (a b) (< (alist-get 'old_start a) (alist-get 'old_start b)))))

(defun pi-ide-approval--unsaved (r buffer)
  "Return the proposal R against modified BUFFER, or nil.
Nil unless BUFFER visits a file and is modified, R carries all its hunks
and the file on disk (one verified read, as a reload reads it) still holds
the lines pi read; `not-lines' when the buffer's or the file's lines are not
the file's split at \"\\n\" (CR-LF, another encoding, a BOM): such a buffer
gets no marks (PROTOCOL.md).  A plist: `:places' and
`:lines' of `pi-ide-state-unsaved-proposal', `:ours' (the buffer's lines)
and `:hunks' (R's, ascending, as the places are)."
  (condition-case nil
      (when (and buffer (buffer-local-value 'buffer-file-name buffer) (buffer-modified-p buffer)
                 (not (plist-get r :created)) (not (plist-get r :note))
                 (= (length (plist-get r :hunks)) (plist-get r :hunks-total)))
        (with-current-buffer buffer
          (let ((bytes (pi-ide-inbox--read-verified (expand-file-name buffer-file-name))))
            (if (not (and (pi-ide-merge--comparable-p) (stringp bytes) (not (string-match-p "\r" bytes))
                          (not (string-prefix-p "\357\273\277" bytes))))
                (and (stringp bytes) 'not-lines)
              (let* ((disk (pi-ide-merge-split (decode-coding-string bytes 'utf-8-unix)))
                     (ours (save-restriction
                             (widen)
                             (pi-ide-merge-split (buffer-substring-no-properties (point-min) (point-max)))))
                     (hunks (pi-ide-approval--sorted-hunks r))
                     (view (pi-ide-state-unsaved-proposal hunks disk ours (pi-ide-merge--user-changes disk ours))))
                (and view (append (list :ours ours :hunks hunks) view)))))))
    (error nil)))

(defun pi-ide-approval--mark (file)
  "Mark the request for FILE in its buffer, when open and still holding pi's lines."
  (let ((buffer (pi-ide-approval--buffer file))
        (r (cl-find file (mapcar #'cdr pi-ide-approval--pending)
                    :key (lambda (p) (plist-get p :file)) :test #'equal)))
    (when buffer
      (pi-ide-approval--unmark-buffer buffer)
      (when (and r pi-ide-approval-marks)
        (with-current-buffer buffer
          (save-excursion
            (save-restriction
              (widen)
              ;; As pi counts lines: "" has none, "a\n" and "a" one.
              (let ((last-line (count-lines (point-min) (point-max)))
                    (goto (pi-ide-approval-goto-line-function))
                    (hunks (pi-ide-approval--sorted-hunks r))
                    (unsaved (pi-ide-approval--unsaved r buffer)))
                (cond
                 ((eq unsaved 'not-lines))
                 ;; Issue 26: each hunk where the merge would put it, or on the user's lines it touches.
                 (unsaved
                  (cl-loop for h in hunks for place in (plist-get unsaved :places)
                           do (if (nth 2 place)
                                  (pi-ide-approval--mark-touching place goto last-line)
                                (pi-ide-approval--mark-hunk (cons (cons 'old_start (1+ (nth 0 place))) h)
                                                            goto last-line))))
                 ((pi-ide-state-hunks-match-p (pi-ide-approval-line-reader goto last-line) hunks)
                  (dolist (h hunks)
                    (pi-ide-approval--mark-hunk h goto last-line))))))
            ;; Checked again after the user's edits, matching or not: an edit can take pi's lines away or
            ;; bring them back.
            (setq pi-ide-approval--marked (plist-get r :file))
            (add-hook 'after-change-functions #'pi-ide-approval--on-change nil t)))))))

(defun pi-ide-approval-buffer-read ()
  "The current buffer visited or reverted a file: mark a request for it."
  (when (and buffer-file-name pi-ide-approval--pending)
    (let ((file (expand-file-name buffer-file-name)))
      (when (cl-some (lambda (p) (equal (plist-get (cdr p) :file) file)) pi-ide-approval--pending)
        (pi-ide-approval--mark file)))))

;;;; Requests

(defun pi-ide-approval--say (fmt &rest args)
  "Show FMT with ARGS in the echo area, logged, never a prompt."
  (let ((message-log-max (if (integerp message-log-max) message-log-max 1000)))
    (message "%s" (apply #'format fmt args))))

(defun pi-ide-approval--tell (r)
  "Say once that request R waits for the user.
R becomes the one answered only when no request shown is still unanswered:
the user may be typing their answer to that one."
  (let ((key (cons (plist-get r :pi-key) (plist-get r :id))))
    (unless (member key pi-ide-approval--told)
      (setq pi-ide-approval--told (last (cons key pi-ide-approval--told) 50))
      (unless pi-ide-approval--seen (setq pi-ide-approval--seen key))
      (pcase-let ((`(,what . ,size) (pi-ide-state-describe-request r))
                  (unsaved (pi-ide-approval--unsaved r (pi-ide-approval--buffer (plist-get r :file)))))
        (pi-ide-approval--say "(pi-ide) pi waits for your approval of its %s of %s (%s, %d s): %s%s"
                              what (pi-ide-approval--name (plist-get r :file)) size (plist-get r :timeout)
                              pi-ide-approval-commands
                              ;; Issue 26: the user's unsaved lines a hunk touches.
                              (let ((touch (and (consp unsaved) (pi-ide-state-touch-phrase (plist-get unsaved :places)))))
                                (if touch (concat ". " touch) "")))))))

(defun pi-ide-approval--tick ()
  "Drop the requests that ran out or whose pi is gone.
pi removes its file when the wait ends; a pi killed before it could leaves it."
  (condition-case nil
      (let ((now (float-time)))
        (dolist (p (copy-sequence pi-ide-approval--pending))
          (when (or (> now (plist-get (cdr p) :expires))
                    (not (eq (pi-ide-inbox-liveness (car p)) 'alive)))
            (pi-ide-approval-forget (car p))))
        (force-mode-line-update t))
    (error nil)))

(defun pi-ide-approval--arm ()
  "Run `pi-ide-approval--tick' every second while a request waits.
And show the change in the mode line now."
  (force-mode-line-update t)
  (cond ((and pi-ide-approval--pending (null pi-ide-approval--timer))
         (setq pi-ide-approval--timer (run-at-time 1 1 #'pi-ide-approval--tick)))
        ((and (null pi-ide-approval--pending) pi-ide-approval--timer)
         (cancel-timer pi-ide-approval--timer)
         (setq pi-ide-approval--timer nil))))

(defun pi-ide-approval-load (request)
  "REQUEST (validated, from a live pi of ours) arrived or was read again.
Kept when it names this Emacs and was not answered yet; else its pi waits on
nothing here."
  (let* ((pid (plist-get request :pi-key))
         (before (alist-get pid pi-ide-approval--pending)))
    (if (or (not (eql (plist-get request :editor-pid) (emacs-pid)))
            (pi-ide-state-decided-p pi-ide-approval--decisions pid (plist-get request :id)))
        (pi-ide-approval-forget pid)
      (setf (alist-get pid pi-ide-approval--pending) request)
      (when (and before (not (equal (plist-get before :file) (plist-get request :file))))
        (pi-ide-approval--mark (plist-get before :file)))
      (pi-ide-approval--mark (plist-get request :file))
      (pi-ide-approval--tell request)
      (pi-ide-approval--arm))))

(defvar-local pi-ide-approval--shown nil
  "In the proposal buffer: the (PID . ID) of the request it shows.")

(defun pi-ide-approval--proposal-ended (key)
  "Say in the proposal buffer's header that the request KEY, a (PID . ID), ended."
  (let ((buffer (get-buffer pi-ide-approval-proposal-buffer)))
    (when (and buffer (equal (buffer-local-value 'pi-ide-approval--shown buffer) key))
      (with-current-buffer buffer
        (setq header-line-format "pi no longer waits for a decision on this change")))))

(defun pi-ide-approval-forget (pid)
  "Forget the request of pi PID: answered, gone, or asking another editor."
  (let ((r (alist-get pid pi-ide-approval--pending)))
    (when r
      (setq pi-ide-approval--pending (assq-delete-all pid pi-ide-approval--pending))
      (pi-ide-approval--mark (plist-get r :file))
      (pi-ide-approval--proposal-ended (cons pid (plist-get r :id)))
      (pi-ide-approval--arm))))

(defun pi-ide-approval-reset ()
  "Not listening any more: no request counts."
  (dolist (p (copy-sequence pi-ide-approval--pending))
    (pi-ide-approval-forget (car p)))
  (when pi-ide-approval--recheck-timer (cancel-timer pi-ide-approval--recheck-timer))
  (setq pi-ide-approval--recheck-timer nil pi-ide-approval--edited nil))

(defun pi-ide-approval-current ()
  "The request shown first, or nil: the one with the earliest expiry."
  (pi-ide-state-current-request (mapcar #'cdr pi-ide-approval--pending)))

(defun pi-ide-approval-target (pending seen)
  "The request to answer: the one of PENDING (an alist pid -> request) SEEN names.
SEEN is a (PID . ID) or nil.  Returns (R . nil), or (nil . INSTEAD) with the
request that waits instead (or nil): an answer never goes to a request the
user was not shown."
  (let ((r (and seen (alist-get (car seen) pending))))
    (if (and r (equal (plist-get r :id) (cdr seen)))
        (cons r nil)
      (cons nil (pi-ide-state-current-request (mapcar #'cdr pending))))))

(defun pi-ide-approval-decide (decision expected)
  "Answer with DECISION (\"accept\" or \"reject\") the request the user saw.
EXPECTED is the (PID . ID) the user saw (`pi-ide-approval--seen') before
pi's files were read again, or nil: a request that is gone, was replaced or
arrived with that read is not answered, and the one that waits now is named
instead, to be answered by the same command again.  Returns the line to tell
the user."
  (let* ((target (pi-ide-approval-target pi-ide-approval--pending expected))
         (r (car target))
         (instead (cdr target)))
    (cond
     ((and (null r) (null instead))
      (setq pi-ide-approval--seen nil)
      (if expected
          "(pi-ide) pi no longer waits for that decision (answered elsewhere, run out, or pi is gone)"
        "(pi-ide) pi is not waiting for your approval"))
     ((null r)
      (setq pi-ide-approval--seen (cons (plist-get instead :pi-key) (plist-get instead :id)))
      (format "(pi-ide) not %s: the request you saw is gone; pi now asks about %s (%s): M-x pi-ide-%s again"
              (if (equal decision "accept") "approved" "rejected")
              (pi-ide-approval--name (plist-get instead :file))
              (cdr (pi-ide-state-describe-request instead))
              (if (equal decision "accept") "approve" "reject")))
     ((> (float-time) (plist-get r :expires))
      (setq pi-ide-approval--seen nil)
      (pi-ide-approval-forget (plist-get r :pi-key))
      (format "(pi-ide) pi's request to change %s ran out (%d s); pi did not apply it"
              (pi-ide-approval--name (plist-get r :file)) (plist-get r :timeout)))
     (t
      (setq pi-ide-approval--seen nil)
      (setq pi-ide-approval--decisions
            (pi-ide-state-remember-decision pi-ide-approval--decisions (plist-get r :pi-fields) (plist-get r :id)
                                            decision))
      (pi-ide-approval-forget (plist-get r :pi-key))
      (funcall pi-ide-approval-changed-function)
      (if (equal decision "accept")
          (format "(pi-ide) approved: pi applies its change to %s" (pi-ide-approval--name (plist-get r :file)))
        (format "(pi-ide) rejected: pi leaves %s as it is" (pi-ide-approval--name (plist-get r :file))))))))

(defun pi-ide-approval-show ()
  "Show the request the user saw (else the current one) as a read-only diff.
Without selecting it; it is then the one `pi-ide-approve' answers.  Returns
nil, or the line to tell the user: nothing waits, or (issue 26) the user's
unsaved lines a hunk touches.  A buffer with unsaved changes is shown beside
itself with each hunk that touches none of them placed."
  (let* ((r (or (car (pi-ide-approval-target pi-ide-approval--pending pi-ide-approval--seen))
                (pi-ide-approval-current)))
         (unsaved (let ((u (and r (pi-ide-approval--unsaved r (pi-ide-approval--buffer (plist-get r :file))))))
                    (and (consp u) u)))
         (touch (and unsaved (pi-ide-state-touch-phrase (plist-get unsaved :places)))))
    (if (null r)
        "(pi-ide) pi is not waiting for your approval"
      (setq pi-ide-approval--seen (cons (plist-get r :pi-key) (plist-get r :id)))
      (with-current-buffer (get-buffer-create pi-ide-approval-proposal-buffer)
        (let ((inhibit-read-only t))
          (erase-buffer)
          (insert (mapconcat #'identity
                             (if unsaved
                                 (pi-ide-state-unsaved-diff r (plist-get unsaved :hunks) unsaved
                                                            (plist-get unsaved :ours))
                               (pi-ide-state-proposal-diff r))
                             "\n")
                  "\n")
          (diff-mode)
          ;; diff-mode would otherwise read the file named in the header to highlight the hunks' syntax: a
          ;; path from pi's file is never read (it could be a FIFO).
          (setq-local diff-font-lock-syntax nil)
          (setq pi-ide-approval--shown (cons (plist-get r :pi-key) (plist-get r :id))
                header-line-format (concat "pi waits for your decision on this change: " pi-ide-approval-commands))
          (setq buffer-read-only t)
          (set-buffer-modified-p nil)
          (goto-char (point-min))))
      (display-buffer pi-ide-approval-proposal-buffer)
      (and touch (concat "(pi-ide) " touch)))))

(defun pi-ide-approval-report ()
  "The state file's `decisions': always a list, empty included.
It tells pi this Emacs answers approvals."
  (vconcat pi-ide-approval--decisions))

(defun pi-ide-approval-status-text ()
  "\" approve?\" while pi waits for a decision here, else \"\"."
  (if pi-ide-approval--pending " approve?" ""))

(defun pi-ide-approval-summary-lines ()
  "Lines for `pi-ide-status'."
  (let ((r (pi-ide-approval-current)))
    (when r
      (pcase-let ((`(,what . ,size) (pi-ide-state-describe-request r)))
        (list (format "pi waits for your approval: %s of %s (%s), %d s left. %s"
                      what (pi-ide-approval--name (plist-get r :file)) size
                      (max 0 (round (- (plist-get r :expires) (float-time))))
                      pi-ide-approval-commands))))))

(provide 'pi-ide-approval)
;;; pi-ide-approval.el ends here
