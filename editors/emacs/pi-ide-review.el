;;; pi-ide-review.el --- pi's change set: marks and reverts in the buffer -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The pi-ide-context authors
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Protocol v0.4, pi's change set.  pi writes <state dir>/pi-<pid>.review.json (the files its tools changed in
;; its last runs, each with its baseline and hunks) before the message that announces the change;
;; pi-ide-inbox.el reads it after each message of a live pi of ours that names this Emacs, through the checks
;; of pi's message (8 MiB cap), and hands the validated runs here.  Passive:
;;
;; - buffers already visiting a changed file get overlays on pi's hunks of the newest run that changed it
;;   (faces `pi-ide-review-added', `pi-ide-review-changed', inheriting the diff ones; a deletion marks the
;;   line that now follows it with a \"▁\" in `pi-ide-review-deleted'), only where the buffer still holds
;;   pi's new lines (for a deletion, the baseline's lines around it): never on wrong lines.
;;   `pi-ide-review-marks' switches them off;
;; - `pi-ide-revert-hunk' (pi-ide.el) puts the baseline's lines of the hunk under point back in the
;;   buffer (`pi-ide-revert-file': every hunk in it), not on disk: one undo brings pi's version back, the user saves when they choose.  A hunk whose
;;   lines are no longer pi's (the user edited them) is refused.  Each revert goes into the state file's
;;   `reverted', and pi tells its model with the next prompt.  A revert the user undoes leaves `reverted' before
;;   that, and the hunk is marked again; a redo lists it again.  Emacs's undo alone tells them, never the text:
;;   the revert's change carries an undo entry (`pi-ide-review--undone') that puts its own inverse back.
;;   A revert thrown away unsaved with the buffer's text (`revert-buffer', `kill-buffer') leaves it for good.
;;   Marks follow their lines when lines move above them: pi's change set read again checks them there;
;; - `pi-ide-hunks' lists pi's hunks of its newest run, `pi-ide-baseline' shows the current buffer's file as
;;   it was before pi's run, read-only.
;;
;; Nothing here opens, saves, runs or deletes anything because the change set said so, moves point or takes
;; focus.

;;; Code:

(require 'cl-lib)
(require 'diff-mode)
(require 'compile)
(require 'pi-ide-state)
(require 'pi-ide-review-rules)
(require 'pi-ide-approval)
(declare-function pi-ide-inbox-conflict-lines "pi-ide-inbox" ())

(defvar pi-ide-review-marks)

(defface pi-ide-review-added
  '((t :inherit diff-added))
  "Lines pi added in its last run."
  :group 'pi-ide)

(defface pi-ide-review-changed
  '((t :inherit diff-changed))
  "Lines pi changed in its last run (they replace lines of the baseline)."
  :group 'pi-ide)

(defface pi-ide-review-deleted
  '((t :inherit diff-removed))
  "The mark on the line that follows lines pi deleted in its last run."
  :group 'pi-ide)

(defvar pi-ide-review-changed-function #'ignore
  "Called with no argument when `reverted' changed.
pi-ide.el asks for a prompt write.")

(defvar pi-ide-review--sets nil
  "Alist: pi identity -> its runs (see `pi-ide-state-validate-review').
Only pis whose message names this Emacs.  The identity is
`pi-ide-state-pi-key-of-name''s: a pid, or a pi of another namespace.")

(defvar pi-ide-review--pi-fields nil
  "Alist: pi identity -> the fields that name it in `reverted'.
See `pi-ide-state-pi-fields'.")

(defvar pi-ide-review--reverted nil "The state file's `reverted', newest last.")

(defvar pi-ide-review--marked nil "Buffers that may hold review overlays.")

(defvar pi-ide-review--reverts nil
  "The reverts of `pi-ide-review--reverted' followed for an undo.
Each a `pi-ide-review--revert'.")

(defvar-local pi-ide-review--looked nil
  "The `buffer-chars-modified-tick' at which this buffer's reverts were looked at.
Only the undone ones, for their marks (`pi-ide-review--look-at-reverts').
nil: look again (its marks were taken away).")

(defvar-local pi-ide-review--source nil
  "What this buffer's review marks were placed from, or nil.
The pi, run and hunks: pi's change set is read again with every message,
and marks placed from the same source stay where they moved (pi's line
numbers no longer hold once lines were added or removed above), checked
there when the buffer changed (`pi-ide-review--keep-marks').")

(defvar-local pi-ide-review--checked nil
  "The `buffer-chars-modified-tick' at which the marks were last checked.
When placed, or checked where they moved (`pi-ide-review--keep-marks').")

(defconst pi-ide-review-hunks-buffer "*pi-ide hunks*" "The buffer `pi-ide-hunks' shows.")

(defconst pi-ide-review--deleted-prefix (propertize "▁" 'face 'pi-ide-review-deleted)
  "What the line after lines pi deleted is drawn after.")

;;;; Marks

(defun pi-ide-review--unmark (buffer)
  "Clear BUFFER of its review overlays."
  (with-current-buffer buffer
    (save-restriction
      (widen)
      (remove-overlays (point-min) (point-max) 'pi-ide-review t))
    ;; The hunks of reverts undone here are marked again at the next look.
    (setq pi-ide-review--source nil pi-ide-review--looked nil))
  (setq pi-ide-review--marked (delq buffer pi-ide-review--marked)))

(defun pi-ide-review--overlay (beg end entry hunk &optional at-end)
  "A review mark from BEG to END for HUNK of ENTRY.
AT-END: a deletion after the last line, marked on that line."
  ;; Text typed at either edge is not pi's: it stays outside the mark.
  (let ((o (make-overlay beg end nil t nil))
        (kind (pi-ide-state-hunk-kind hunk)))
    (overlay-put o 'pi-ide-review t)
    (overlay-put o 'pi-ide-review-entry entry)
    (overlay-put o 'pi-ide-review-hunk hunk)
    (overlay-put o 'pi-ide-review-at-end at-end)
    (if (eq kind 'deleted)
        (overlay-put o 'line-prefix pi-ide-review--deleted-prefix)
      (overlay-put o 'face (if (eq kind 'added) 'pi-ide-review-added 'pi-ide-review-changed))
      ;; The user deleting all of pi's lines leaves nothing to revert.
      (overlay-put o 'evaporate t))
    o))

(defun pi-ide-review--baseline-lines (entry)
  "Return ENTRY's baseline as a vector of lines (to check a deletion)."
  (vconcat (pi-ide-state-text-lines (or (plist-get entry :baseline) ""))))

(defun pi-ide-review--pi-version-p (reader last-line baseline hunk start)
  "Does the current buffer show pi's version of HUNK at line START?
READER reads its lines (`pi-ide-approval-line-reader'), LAST-LINE is its
last line, BASELINE the vector of the baseline's lines (for a deletion).
pi's lines from START on; for a deletion, which has no lines of pi's to
check, the baseline's lines around it as pi left them, START the line that
now follows it."
  (if (alist-get 'new_text hunk)
      (and (>= start 1) (pi-ide-state-lines-at-p reader start (alist-get 'new_text hunk)))
    (pi-ide-state-deletion-at-p reader last-line baseline hunk start)))

(defun pi-ide-review--place (goto last-line entry hunk start)
  "Mark HUNK of ENTRY at line START, moving with GOTO; LAST-LINE: the last line.
pi's lines from START on; a deletion on the line that now follows it, or
the last line for one at the end."
  (let ((n (length (alist-get 'new_text hunk))))
    (if (> n 0)
        (progn
          (funcall goto start)
          (let ((beg (point)))
            (forward-line n)
            (pi-ide-review--overlay beg (point) entry hunk)))
      (funcall goto (max 1 (min start last-line)))
      (pi-ide-review--overlay (point) (progn (forward-line 1) (point)) entry hunk (> start last-line)))))

(defun pi-ide-review--mark-hunks (entry)
  "Mark ENTRY's hunks where the current buffer (widened) has pi's lines."
  (let* ((last-line (count-lines (point-min) (point-max)))
         (goto (pi-ide-approval-goto-line-function))
         (reader (pi-ide-approval-line-reader goto last-line))
         (baseline (and (cl-some (lambda (h) (null (alist-get 'new_text h))) (plist-get entry :hunks))
                        (pi-ide-review--baseline-lines entry))))
    (dolist (h (plist-get entry :hunks))
      (when (pi-ide-review--pi-version-p reader last-line baseline h (alist-get 'new_start h))
        (pi-ide-review--place goto last-line entry h (alist-get 'new_start h))))))

(defun pi-ide-review--keep-marks ()
  "Check the current buffer's (widened) review overlays where they are now.
One whose lines are no longer pi's (the user edited them), or, for a
deletion, whose neighbours are no longer the baseline's, goes, as
`pi-ide-review--mark-hunks' would not place it; the others stay where they
moved."
  (let* ((last-line (count-lines (point-min) (point-max)))
         (goto (pi-ide-approval-goto-line-function))
         (reader (pi-ide-approval-line-reader goto last-line))
         (baselines nil))
    (dolist (o (cl-remove-if-not (lambda (o) (overlay-get o 'pi-ide-review)) (overlays-in (point-min) (point-max))))
      (let ((hunk (overlay-get o 'pi-ide-review-hunk))
            (entry (overlay-get o 'pi-ide-review-entry)))
        (unless (if (alist-get 'new_text hunk)
                    (pi-ide-review--still-pi-p o)
                  (pi-ide-state-deletion-at-p
                   reader last-line
                   (or (cdr (assq entry baselines))
                       (cdar (push (cons entry (pi-ide-review--baseline-lines entry)) baselines)))
                   hunk
                   (if (overlay-get o 'pi-ide-review-at-end)
                       (1+ last-line)
                     (line-number-at-pos (overlay-start o) t))))
          (delete-overlay o))))))

(defun pi-ide-review--mark (buffer file)
  "Mark pi's hunks of FILE in BUFFER, visiting it.
They are those of the newest run that changed FILE."
  (let* ((entry (pi-ide-state-newest-entry pi-ide-review--sets file))
         (source (and entry pi-ide-review-marks
                      (list (plist-get entry :pid) (plist-get entry :run)
                            (mapcar (lambda (h) (cons (alist-get 'id h) (alist-get 'new_start h)))
                                    (plist-get entry :hunks)))))
         (tick (buffer-chars-modified-tick buffer)))
    (if (and source (equal source (buffer-local-value 'pi-ide-review--source buffer)))
        (unless (eql tick (buffer-local-value 'pi-ide-review--checked buffer))
          (with-current-buffer buffer
            (save-excursion (save-restriction (widen) (pi-ide-review--keep-marks)))
            (setq pi-ide-review--checked tick)))
      (pi-ide-review--unmark buffer)
      (when source
        (with-current-buffer buffer
          (save-excursion
            (save-restriction
              (widen)
              (pi-ide-review--mark-hunks entry)))
          (setq pi-ide-review--source source pi-ide-review--checked tick))
        (push buffer pi-ide-review--marked)))))

(defun pi-ide-review--files ()
  "Return the files that the connected pis changed, in every run listed."
  (delete-dups (cl-loop for set in pi-ide-review--sets
                        append (cl-loop for run in (cdr set)
                                        append (mapcar (lambda (f) (plist-get f :file)) (plist-get run :files))))))

(defun pi-ide-review-refresh ()
  "Mark the buffers of the files pi changed again; clear the others."
  (let ((seen nil))
    (dolist (file (pi-ide-review--files))
      (let ((buffer (pi-ide-approval--buffer file)))
        (when buffer
          (push buffer seen)
          (pi-ide-review--mark buffer file))))
    (dolist (buffer (copy-sequence pi-ide-review--marked))
      (unless (memq buffer seen)
        (if (buffer-live-p buffer)
            (pi-ide-review--unmark buffer)
          (setq pi-ide-review--marked (delq buffer pi-ide-review--marked)))))))

(defun pi-ide-review-load (pid run-list &optional pi-fields)
  "Load the change set of pi PID (validated): RUN-LIST.
PID (an identity, `pi-ide-state-pi-key-of-name') is connected to this Emacs;
PI-FIELDS name it in `reverted' (`pi-ide-state-pi-fields')."
  (setf (alist-get pid pi-ide-review--sets) run-list
        (alist-get pid pi-ide-review--pi-fields) pi-fields)
  (pi-ide-review-refresh))

(defun pi-ide-review-forget (pid)
  "Forget pi PID, gone or not connected to this Emacs, and unmark."
  (when (assq pid pi-ide-review--sets)
    (setq pi-ide-review--sets (assq-delete-all pid pi-ide-review--sets)
          pi-ide-review--pi-fields (assq-delete-all pid pi-ide-review--pi-fields))
    (pi-ide-review-refresh)))

(defun pi-ide-review-reset ()
  "Not listening any more: no change set counts."
  (setq pi-ide-review--sets nil pi-ide-review--pi-fields nil)
  (pi-ide-review-refresh))

(defun pi-ide-review-buffer-read ()
  "The current buffer visited or reverted a file: mark pi's hunks of it anew.
Reverts its file does not have are no longer told
\=(`pi-ide-review--text-replaced')."
  (pi-ide-review--text-replaced (current-buffer))
  (when (and buffer-file-name pi-ide-review--sets)
    (let ((file (expand-file-name buffer-file-name)))
      (when (pi-ide-state-newest-entry pi-ide-review--sets file)
        (pi-ide-review--unmark (current-buffer))
        (pi-ide-review--mark (current-buffer) file)))))

;;;; Revert

(cl-defstruct (pi-ide-review--revert (:constructor pi-ide-review--revert-make) (:copier nil))
  "A revert of one of pi's hunks, followed for an undo of it.
RECORD: its entry in `pi-ide-review--reverted'; AT: a marker at the start
of the baseline's lines put back; ENTRY, HUNK: what was reverted; UNDONE:
Emacs's undo took it back, until a redo (`pi-ide-review--undone'); SAVED:
the buffer's last save since had it (`pi-ide-review-buffer-saved')."
  record at entry hunk undone saved)

(defun pi-ide-review--in-order (overlays)
  "The review overlays among OVERLAYS, in the order to revert them.
A deletion after the last line goes first, then the others bottom up, so
each puts its lines back where the buffer still is as it was marked (two
deletions can mark one line: one before it, one after the last line)."
  (sort (cl-remove-if-not (lambda (o) (overlay-get o 'pi-ide-review)) overlays)
        (lambda (a b) (cond ((overlay-get a 'pi-ide-review-at-end) t)
                            ((overlay-get b 'pi-ide-review-at-end) nil)
                            (t (> (overlay-start a) (overlay-start b)))))))

(defun pi-ide-review--at-point ()
  "The review overlays on the line of point, in the order to revert them.
Any part of the line counts: text typed at the start of pi's first line is
outside the mark, and the hunk must still be found (and refused)."
  (let ((bol (line-beginning-position)) (eol (line-end-position)))
    (pi-ide-review--in-order
     (cl-remove-if-not (lambda (o) (and (<= (overlay-start o) eol) (< bol (overlay-end o))))
                       (overlays-in bol (min (point-max) (1+ eol)))))))

(defun pi-ide-review--still-pi-p (o)
  "Does overlay O still cover pi's new lines, whole lines and nothing else?"
  (let* ((beg (overlay-start o)) (end (overlay-end o))
         (text (buffer-substring-no-properties beg end)))
    (and (save-excursion (goto-char beg) (bolp))
         (or (= end (point-max)) (save-excursion (goto-char end) (bolp)))
         (equal (split-string (if (string-suffix-p "\n" text) (substring text 0 -1) text) "\n")
                (alist-get 'new_text (overlay-get o 'pi-ide-review-hunk))))))

(defun pi-ide-review--line-text ()
  "The text of the line of point, without its newline."
  (buffer-substring-no-properties (line-beginning-position) (line-end-position)))

(defun pi-ide-review--put-back (o)
  "Put the baseline's lines of overlay O's hunk in place of pi's.
Returns a marker at the start of the lines put back (for an added hunk,
where pi's lines were).  Its insertion type is nil: text an undo puts back
there goes after it, so it stays at the start of pi's lines again."
  (let* ((hunk (overlay-get o 'pi-ide-review-hunk))
         (old (alist-get 'old_text hunk))
         (beg (overlay-start o))
         (at (make-marker)))
    (if (eq (pi-ide-state-hunk-kind hunk) 'deleted)
        (let ((text (mapconcat #'identity old "\n")))
          (goto-char (if (overlay-get o 'pi-ide-review-at-end) (point-max) beg))
          (if (bolp)
              (progn (set-marker at (point)) (insert text "\n"))
            ;; After a last line without its newline.
            (insert "\n")
            (set-marker at (point))
            (insert text)))
      (let ((newline (string-suffix-p "\n" (buffer-substring-no-properties beg (overlay-end o)))))
        (goto-char beg)
        (delete-region beg (overlay-end o))
        (set-marker at beg)
        (when old (insert (mapconcat #'identity old "\n") (if newline "\n" "")))))
    at))

(defun pi-ide-review--edited-p (o)
  "Did the user edit the lines of overlay O's hunk after pi's change?"
  (and (not (eq (pi-ide-state-hunk-kind (overlay-get o 'pi-ide-review-hunk)) 'deleted))
       (not (pi-ide-review--still-pi-p o))))

(defun pi-ide-review--refusal (o)
  "What the user is told about overlay O's hunk, edited since pi's change."
  (format "line %d: you changed these lines after pi's edit; not reverted" (line-number-at-pos (overlay-start o) t)))

(defun pi-ide-review--revert (overlays)
  "Put back the baseline's lines of OVERLAYS' hunks, in that order, as one change.
Each goes into `reverted', and is followed for an undo of it: the change
carries an entry of Emacs's undo that tells its undo and redo
\=(`pi-ide-review--undone').  Returns the lines where they stood."
  (let ((group (prepare-change-group))
        (reverts (mapcar (lambda (o) (pi-ide-review--revert-make :entry (overlay-get o 'pi-ide-review-entry)
                                                                 :hunk (overlay-get o 'pi-ide-review-hunk)))
                         overlays))
        (lines nil) (done nil))
    (unwind-protect
        (progn
          (activate-change-group group)
          ;; Oldest in the change: an undo calls it last, when pi's lines are back to be marked again.
          (pi-ide-review--undo-entry #'pi-ide-review--undone reverts)
          (save-excursion
            (save-restriction
              (widen)
              (cl-loop for o in overlays
                       for r in reverts
                       do (setf (pi-ide-review--revert-at r) (pi-ide-review--put-back o))
                       (push (line-number-at-pos (pi-ide-review--revert-at r) t) lines))))
          (setq done t))
      ;; One change: one undo brings pi's version back.
      (if done
          (progn (undo-amalgamate-change-group group) (accept-change-group group))
        (cancel-change-group group)
        (dolist (r reverts) (when (pi-ide-review--revert-at r) (set-marker (pi-ide-review--revert-at r) nil)))))
    (setq lines (nreverse lines))
    (cl-loop for o in overlays
             for line in lines
             for r in reverts
             do (setq pi-ide-review--reverted
                      (pi-ide-state-remember-revert pi-ide-review--reverted (pi-ide-review--revert-entry r)
                                                    (pi-ide-review--revert-hunk r) line
                                                    (alist-get (plist-get (pi-ide-review--revert-entry r) :pid)
                                                               pi-ide-review--pi-fields)))
             (setf (pi-ide-review--revert-record r) (car (last pi-ide-review--reverted)))
             (push r pi-ide-review--reverts)
             (delete-overlay o))
    (funcall pi-ide-review-changed-function)
    lines))

(defconst pi-ide-review--undo-note "(in the buffer; undo brings it back, save to keep it)"
  "How a revert is told: what it changed and how to take it back.")

(defun pi-ide-review-revert-at-point ()
  "Revert pi's hunk on the line of point, in the buffer; the line to tell the user.
One change: one undo brings pi's version back."
  (let* ((overlays (pi-ide-review--at-point))
         (edited (cl-find-if #'pi-ide-review--edited-p overlays)))
    (cond
     ((null overlays)
      "(pi-ide) no hunk of pi's under the cursor (M-x pi-ide-hunks lists them)")
     (edited (concat "(pi-ide) " (pi-ide-review--refusal edited)))
     (buffer-read-only "(pi-ide) the buffer is read-only; not reverted")
     (t
      (let ((lines (pi-ide-review--revert overlays)))
        (format "(pi-ide) reverted %s at line %d %s"
                (if (cdr overlays) (format "%d of pi's hunks" (length overlays)) "pi's hunk")
                (apply #'min lines) pi-ide-review--undo-note))))))

(defun pi-ide-review-revert-buffer-hunks ()
  "Revert every hunk of pi's marked in the current buffer that is still pi's.
Those the user edited are refused and stay.  The line to tell the user."
  (let* ((overlays (save-restriction (widen) (pi-ide-review--in-order (overlays-in (point-min) (point-max)))))
         (edited (cl-remove-if-not #'pi-ide-review--edited-p overlays))
         (kept (cl-set-difference overlays edited)))
    (cond
     ((null overlays) "(pi-ide) no hunks of pi's to revert here (M-x pi-ide-hunks lists them)")
     (buffer-read-only "(pi-ide) the buffer is read-only; not reverted")
     (t
      (when kept (pi-ide-review--revert (pi-ide-review--in-order kept)))
      (concat (format "(pi-ide) reverted %d of pi's hunks %s" (length kept)
                      (if kept "(in the buffer; undo brings them back, save to keep it)" "in this buffer"))
              (if edited (format "; %d refused: %s" (length edited) (pi-ide-review--refusal (car (last edited)))) ""))))))

;;;; Undo of a revert

(defun pi-ide-review--key (entry hunk)
  "Return the name of HUNK of ENTRY in every reading of pi's change set."
  (list (plist-get entry :pid) (plist-get entry :run) (alist-get 'id hunk)))

(defun pi-ide-review--marks-of (revert beg end)
  "Return the review overlays of REVERT's hunk from BEG to END."
  (let ((key (pi-ide-review--key (pi-ide-review--revert-entry revert) (pi-ide-review--revert-hunk revert))))
    (cl-remove-if-not (lambda (o) (and (overlay-get o 'pi-ide-review)
                                       (equal (pi-ide-review--key (overlay-get o 'pi-ide-review-entry)
                                                                  (overlay-get o 'pi-ide-review-hunk))
                                              key)))
                      (overlays-in beg end))))

(defun pi-ide-review--mark-again (revert goto last-line start)
  "Mark the hunk of REVERT, undone, at line START of the current buffer.
Only while its run is still the file's newest in pi's change set, and not
when it is marked there already (a look before, or pi's change set read
again).  GOTO and LAST-LINE are as in `pi-ide-review--place'."
  (let* ((was (pi-ide-review--revert-entry revert))
         (entry (pi-ide-state-newest-entry pi-ide-review--sets (plist-get was :file)))
         (key (pi-ide-review--key was (pi-ide-review--revert-hunk revert)))
         (hunk (and entry pi-ide-review-marks
                    (cl-find-if (lambda (h) (equal (pi-ide-review--key entry h) key)) (plist-get entry :hunks)))))
    (when hunk
      ;; The line its mark starts on.
      (funcall goto (max 1 (min start last-line)))
      (unless (pi-ide-review--marks-of revert (point) (min (point-max) (1+ (line-end-position))))
        (pi-ide-review--place goto last-line entry hunk start)
        (cl-pushnew (current-buffer) pi-ide-review--marked)))))

(defun pi-ide-review--start (revert)
  "The line of REVERT's marker in the current buffer (widened), moving there.
The line its baseline's lines were put back on, or where pi's are back."
  (goto-char (pi-ide-review--revert-at revert))
  ;; Past the end of a last line without its newline: lines put back there, an undo took them and that newline
  ;; away.
  (if (bolp) (line-number-at-pos nil t) (1+ (line-number-at-pos nil t))))

(defun pi-ide-review--mark-where-back (reverts &optional by-undo)
  "Mark the hunks of REVERTS, undone, where pi's version is back at their place.
All of the current buffer (widened); never on lines the user edited.
BY-UNDO: called by the undo of REVERTS, the buffer as just before them: a
deletion, which left no lines of pi's to check, is marked at its place as
the revert found it (the user's edits beside it, before the revert, kept)."
  (let* ((last-line (count-lines (point-min) (point-max)))
         (goto (pi-ide-approval-goto-line-function))
         (reader (pi-ide-approval-line-reader goto last-line))
         (baselines nil))
    ;; In buffer order: GOTO moves on from the line before, the buffer is read once, not once a revert.
    (dolist (r (sort (copy-sequence reverts)
                     (lambda (a b) (< (pi-ide-review--revert-at a) (pi-ide-review--revert-at b)))))
      (let* ((hunk (pi-ide-review--revert-hunk r))
             (entry (pi-ide-review--revert-entry r))
             (start (pi-ide-review--start r))
             (deletion (null (alist-get 'new_text hunk)))
             ;; A deletion has no lines of pi's: the baseline's around it, split once an entry.
             (baseline (and deletion (not by-undo)
                            (or (cdr (assq entry baselines))
                                (cdar (push (cons entry (pi-ide-review--baseline-lines entry)) baselines))))))
        (when (if (and deletion by-undo)
                  t
                (pi-ide-review--pi-version-p reader last-line baseline hunk start))
          (pi-ide-review--mark-again r goto last-line start))))))

(defun pi-ide-review--undo-entry (fun reverts)
  "Put (apply FUN REVERTS) on the current buffer's undo list, unless it has none.
Emacs's undo calls FUN with REVERTS when it gets to it."
  (unless (eq buffer-undo-list t)
    (push (list 'apply fun reverts) buffer-undo-list)))

(defun pi-ide-review--followed (reverts)
  "The reverts among REVERTS still followed: in `reverted', their buffer live."
  (cl-remove-if-not (lambda (r) (and (memq r pi-ide-review--reverts)
                                     (memq (pi-ide-review--revert-record r) pi-ide-review--reverted)
                                     (marker-buffer (pi-ide-review--revert-at r))))
                    reverts))

(defmacro pi-ide-review--in-undo (&rest body)
  "Run BODY, called by Emacs's undo; an error is told, never stops the undo."
  (declare (indent 0) (debug t))
  `(condition-case err
       (save-excursion (save-restriction (widen) ,@body))
     (error (message "(pi-ide) internal error, please report it: %s" (error-message-string err)))))

(defun pi-ide-review--undone (reverts)
  "Leave REVERTS out of the state file: Emacs's undo took their change back.
Called from the entry of Emacs's undo that `pi-ide-review--revert' puts
with their change, oldest in it: the undo has put pi's version back by
then.  pi never tells its model of them, or is told they were undone;
while a revert's run is still the file's newest in pi's change set, its
hunk is marked again where pi's lines are back.  Puts its own inverse on
the undo list (`pi-ide-review--redone'): the undo of this undo, a redo, is
told too.  The undo history alone decides: the user's edits never make a
revert, or its undo."
  (pi-ide-review--undo-entry #'pi-ide-review--redone reverts)
  (pi-ide-review--in-undo
    (let ((taken (cl-remove-if #'pi-ide-review--revert-undone (pi-ide-review--followed reverts))))
      (when taken
        (dolist (r taken) (setf (pi-ide-review--revert-undone r) t))
        (pi-ide-review--mark-where-back taken t)
        (funcall pi-ide-review-changed-function)))))

(defun pi-ide-review--redone (reverts)
  "List REVERTS again, their hunks unmarked: Emacs's undo redid them.
Called from the entry `pi-ide-review--undone' put; puts its inverse back."
  (pi-ide-review--undo-entry #'pi-ide-review--undone reverts)
  (pi-ide-review--in-undo
    (let ((back (cl-remove-if-not #'pi-ide-review--revert-undone (pi-ide-review--followed reverts))))
      (when back
        (dolist (r back)
          (setf (pi-ide-review--revert-undone r) nil)
          (mapc #'delete-overlay (pi-ide-review--marks-of r (point-min) (point-max))))
        (funcall pi-ide-review-changed-function)))))

(defun pi-ide-review--look-at-reverts ()
  "Forget the reverts out of `reverted'; mark again the undone ones' hunks.
An undone revert whose marks were taken away since (pi's change set read
again, `pi-ide-review-marks'), in a buffer changed since the last look, is
marked again where pi's version is at its place.  Whether a revert holds is
never decided here (`pi-ide-review--undone').  The text of the buffers is
never changed here."
  ;; A revert out of `reverted' (the hunk reverted again, or past the newest 50) is forgotten.  One in a killed
  ;; buffer stays as it was last seen: its undo is not taken back by the buffer going.
  (setq pi-ide-review--reverts
        (cl-remove-if-not (lambda (r) (or (memq (pi-ide-review--revert-record r) pi-ide-review--reverted)
                                          (progn (set-marker (pi-ide-review--revert-at r) nil) nil)))
                          pi-ide-review--reverts))
  (dolist (buffer (delete-dups (delq nil (mapcar (lambda (r) (and (pi-ide-review--revert-undone r)
                                                                  (marker-buffer (pi-ide-review--revert-at r))))
                                                 pi-ide-review--reverts))))
    (with-current-buffer buffer
      (let ((tick (buffer-chars-modified-tick)))
        (unless (eql tick pi-ide-review--looked)
          (save-excursion
            (save-restriction
              (widen)
              (pi-ide-review--mark-where-back
               (cl-remove-if-not (lambda (r) (and (pi-ide-review--revert-undone r)
                                                  (eq (marker-buffer (pi-ide-review--revert-at r)) buffer)))
                                 pi-ide-review--reverts))))
          (setq pi-ide-review--looked tick))))))

(defun pi-ide-review-buffer-saved ()
  "The current buffer was saved: its reverts its file now has, or no longer has."
  (dolist (r pi-ide-review--reverts)
    (when (eq (marker-buffer (pi-ide-review--revert-at r)) (current-buffer))
      (setf (pi-ide-review--revert-saved r) (not (pi-ide-review--revert-undone r))))))

(defun pi-ide-review-buffer-killed ()
  "The current buffer is being killed: see `pi-ide-review--text-replaced'."
  (pi-ide-review--text-replaced (current-buffer)))

(defun pi-ide-review--text-replaced (buffer)
  "BUFFER's text was thrown away for its file's: reverted, or killed.
A revert its file does not have (none of the buffer's saves since had it)
is gone with the text: out of `reverted', so pi never tells its model of a
revert the file and buffer do not hold.  One the file has holds, even if
undone in the text thrown away."
  (let ((changed nil))
    (dolist (r (copy-sequence pi-ide-review--reverts))
      (when (eq (marker-buffer (pi-ide-review--revert-at r)) buffer)
        (cond
         ((not (pi-ide-review--revert-saved r))
          (when (and (memq (pi-ide-review--revert-record r) pi-ide-review--reverted)
                     (not (pi-ide-review--revert-undone r)))
            (setq changed t))
          (setq pi-ide-review--reverted (delq (pi-ide-review--revert-record r) pi-ide-review--reverted)
                pi-ide-review--reverts (delq r pi-ide-review--reverts))
          (set-marker (pi-ide-review--revert-at r) nil))
         ((pi-ide-review--revert-undone r)
          (setf (pi-ide-review--revert-undone r) nil)
          (setq changed t)))))
    (when changed (funcall pi-ide-review-changed-function))))

(defun pi-ide-review--listed ()
  "Return the reverts the state file lists, newest last: those not undone."
  (pi-ide-review--look-at-reverts)
  (let ((undone (cl-loop for r in pi-ide-review--reverts
                         when (pi-ide-review--revert-undone r) collect (pi-ide-review--revert-record r))))
    (cl-remove-if (lambda (record) (memq record undone)) pi-ide-review--reverted)))

(defconst pi-ide-review-baseline-buffer "*pi-ide baseline*" "The buffer `pi-ide-baseline' shows.")

(defun pi-ide-review-show-hunks ()
  "List pi's hunks of its newest run in a buffer, displayed, not selected.
With them (issue 26) the merges' conflicts: where pi's hunk touched your
unsaved lines, which were kept.  Returns nil, or the line to tell the user
when pi changed nothing here."
  (let ((lines (append (pi-ide-state-hunk-list pi-ide-review--sets)
                       (and (fboundp 'pi-ide-inbox-conflict-lines) (pi-ide-inbox-conflict-lines)))))
    (if (null lines)
        "(pi-ide) pi changed no files in its last runs (or no pi is connected)"
      (with-current-buffer (get-buffer-create pi-ide-review-hunks-buffer)
        (let ((inhibit-read-only t))
          (erase-buffer)
          (insert (mapconcat #'identity lines "\n") "\n")
          ;; Visiting a hunk is the user's RET on its line: nothing is opened before that.
          (compilation-mode)
          (setq header-line-format
                "pi's hunks of its last run, and merges' conflicts: RET visits one; M-x pi-ide-revert-hunk on a hunk")
          (goto-char (point-min))))
      (display-buffer pi-ide-review-hunks-buffer)
      nil)))

(defun pi-ide-review-show-baseline ()
  "Show the current buffer's file as it was before pi's newest run that changed it.
Read-only, displayed, not selected; nothing is written.  Returns nil, or the
line to tell the user when there is no baseline to show."
  (let* ((file (and buffer-file-name (expand-file-name buffer-file-name)))
         (entry (and file (pi-ide-state-newest-entry pi-ide-review--sets file))))
    (cond
     ((null entry) "(pi-ide) pi has not changed this buffer's file in its last runs")
     ((and (null (plist-get entry :baseline)) (plist-get entry :hunks))
      ;; Hunks but no baseline: pi created the file.
      (pi-ide-review--baseline-buffer entry "")
      nil)
     ((null (plist-get entry :baseline))
      "(pi-ide) pi's change set carries no baseline for this file (binary, too large or new)")
     (t (pi-ide-review--baseline-buffer entry (plist-get entry :baseline)) nil))))

(defun pi-ide-review--baseline-buffer (entry text)
  "Show TEXT, the baseline of ENTRY, in the read-only baseline buffer."
  (with-current-buffer (get-buffer-create pi-ide-review-baseline-buffer)
    (let ((inhibit-read-only t))
      (erase-buffer)
      (insert text)
      (fundamental-mode)
      (setq header-line-format
            (format "%s before pi's run %d (read-only)"
                    (pi-ide-state-inert (let ((file-name-handler-alist nil))
                                          (abbreviate-file-name (plist-get entry :file))))
                    (plist-get entry :run)))
      (setq buffer-read-only t)
      (set-buffer-modified-p nil)
      (goto-char (point-min))))
  (display-buffer pi-ide-review-baseline-buffer))

(defun pi-ide-review-summary-lines ()
  "Lines for `pi-ide-status'."
  (let ((n (length (pi-ide-state-hunk-list pi-ide-review--sets))) (k (length (pi-ide-review--listed))))
    (append (and (> n 0) (list (format "pi's last run: %d %s (M-x pi-ide-hunks; M-x pi-ide-revert-hunk on one)"
                                       n (if (= n 1) "hunk" "hunks"))))
            (and (> k 0) (list (format "reverted here: %d of pi's hunks, told to pi in the state file" k))))))

(defun pi-ide-review-report ()
  "The state file's `reverted', or nil without one (none made, or all undone)."
  (let ((listed (pi-ide-review--listed)))
    (and listed (vconcat listed))))

(provide 'pi-ide-review)
;;; pi-ide-review.el ends here
