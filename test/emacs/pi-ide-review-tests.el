;;; pi-ide-review-tests.el --- Seeded random test of pi's hunks reverted in a buffer -*- lexical-binding: t; -*-

;;; Commentary:

;; Run by test/emacs/batch.test.ts in `emacs --batch'.  For random files and random hunks of pi's shape (the
;; generator and the hunks-applied oracle of pi-ide-approval-tests.el: no context lines, never touching each
;; other, insertions at the start and after the last line), the buffer holds pi's version and is marked
;; (pi-ide-review.el); a random subset of the marked hunks is reverted with point on each, in random order.  The
;; buffer must then be the baseline with only the other hunks applied, computed on its own from the hunks;
;; every revert is listed in `reverted', and undoing each brings pi's version back.  Undone one at a time, and
;; looked at after each undo as the state file is after each command, the reverts are checked against the stack
;; rule of test/fixtures/revert-oracle.ts: those of the steps not undone are listed, the hunks of those undone
;; marked again (where they were marked before, once all are undone); redone, all are listed again and unmarked.
;; That check is made in every run, also where lines repeat (every other run has its lines numbered, the others
;; draw from few lines): Emacs's undo tells the undo, never the text.  A hunk whose lines the user edited is
;; refused and leaves the buffer as it was.  PI_IDE_SEED replays a failure; planted defects (a deletion put back
;; after the line that followed it, not before; the place of a revert followed by a marker that an undo's text
;; moves) are caught.  A table undoes and redoes reverts at the edges of the buffer, and another beside the
;; user's own edits (before the revert, next to its place; after the undo, in pi's lines).

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'pi-ide-review)
(require 'pi-ide-approval-tests)

(defvar pi-ide-review-marks t)

(defun pi-ide-review-tests--text (lines)
  "LINES as a file's text: each with its newline."
  (mapconcat (lambda (l) (concat l "\n")) lines ""))

(defun pi-ide-review-tests--marks ()
  "The review marks of the current buffer: (ID FIRST-LINE LINES), in order."
  (sort (mapcar (lambda (o) (list (alist-get 'id (overlay-get o 'pi-ide-review-hunk)) (line-number-at-pos (overlay-start o))
                                  (count-lines (overlay-start o) (overlay-end o))))
                (cl-remove-if-not (lambda (o) (overlay-get o 'pi-ide-review)) (overlays-in (point-min) (point-max))))
        (lambda (a b) (or (< (nth 1 a) (nth 1 b)) (and (= (nth 1 a) (nth 1 b)) (string< (car a) (car b)))))))

(defun pi-ide-review-tests--ids (hunks)
  "The ids of HUNKS (or of `reverted' entries), sorted."
  (sort (mapcar (lambda (h) (alist-get 'id h)) hunks) #'string<))

(defun pi-ide-review-tests--numbered (base hunks)
  "(BASE . HUNKS) with every line numbered, so each is unlike the others."
  (let* ((k 0)
         (numbered (cl-loop for l in base for i from 1 collect (format "%s %d" l i))))
    (cons numbered
          (mapcar (lambda (h)
                    (let ((h (copy-alist h)) (at (1- (alist-get 'old_start h))))
                      (setf (alist-get 'old_text h) (cl-subseq numbered at (+ at (length (alist-get 'old_text h))))
                            (alist-get 'new_text h) (mapcar (lambda (l) (format "%s +%d" l (cl-incf k)))
                                                            (alist-get 'new_text h)))
                      h))
                  hunks))))

(defun pi-ide-review-tests--distinct-p (lines)
  "Does every one of LINES differ from the others?"
  (= (length lines) (length (delete-dups (copy-sequence lines)))))

(defun pi-ide-review-tests--overlay-of (hunk)
  "The review overlay of HUNK in the current buffer, or nil."
  (cl-find-if (lambda (o) (eq (overlay-get o 'pi-ide-review-hunk) hunk)) (overlays-in (point-min) (point-max))))

(ert-deftest pi-ide-review-test-revert-random ()
  "Seeded: reverting hunks leaves the baseline with the other hunks applied; undo restores pi's version."
  (let ((seed (or (and (getenv "PI_IDE_SEED") (string-to-number (getenv "PI_IDE_SEED"))) 20261202))
        (reverts 0)
        (undone 0)
        (undone-repeated 0))
    (dotimes (run 1500)
      (random (format "pi-ide-review-%d-%d" seed run))
      (let* ((base (pi-ide-approval-tests--random-lines (random 10)))
             (hunks (pi-ide-approval-tests--random-hunks base))
             ;; Every other run with its lines numbered, each unlike the others; the others with lines repeated.
             (numbered (if (cl-oddp run) (pi-ide-review-tests--numbered base hunks) (cons base hunks)))
             (base (car numbered))
             (hunks (cdr numbered))
             (pi-version (pi-ide-approval-tests--apply base hunks))
             (entry (list :pid 7 :run 3 :file "/p/a.txt" :baseline (pi-ide-review-tests--text base) :hunks hunks))
             (pi-ide-review--sets `((7 (:run 3 :files ((:file "/p/a.txt" :baseline ,(plist-get entry :baseline)
                                                             :hunks ,hunks))))))
             (pi-ide-review--reverted nil)
             (pi-ide-review--reverts nil)
             (pi-ide-review-changed-function #'ignore)
             (repeated (not (pi-ide-review-tests--distinct-p
                             (append base (mapcan (lambda (h) (copy-sequence (alist-get 'new_text h))) hunks)))))
             (steps nil))
        (with-temp-buffer
          (buffer-enable-undo)
          (insert (pi-ide-review-tests--text pi-version))
          (undo-boundary)
          (pi-ide-review--mark-hunks entry)
          (let* ((marked (cl-remove-if-not #'pi-ide-review-tests--overlay-of hunks))
                 (as-marked (pi-ide-review-tests--marks))
                 ;; The oracle's own rule for what is marked: every hunk leaving lines; a deletion when a line
                 ;; is left to carry its mark.
                 (expected (cl-remove-if-not (lambda (h) (or (alist-get 'new_text h) pi-version)) hunks))
                 (chosen (cl-remove-if (lambda (_) (= 0 (random 2))) (copy-sequence marked)))
                 (order (sort (mapcar (lambda (h) (cons (random 1000) h)) chosen) (lambda (a b) (< (car a) (car b))))))
            (unless (equal marked expected)
              (ert-fail (list :seed seed :run run :base base :hunks hunks :marked marked)))
            ;; A line can carry two deletions' marks (one before it, one after the last line): a revert there
            ;; takes both back, and a hunk already taken back along with another is not asked for again.
            (dolist (c order)
              (when (pi-ide-review-tests--overlay-of (cdr c))
                (goto-char (overlay-start (pi-ide-review-tests--overlay-of (cdr c))))
                (let* ((on-line (cl-remove-if-not
                                 (lambda (h) (let ((o (pi-ide-review-tests--overlay-of h)))
                                               (and o (= (line-number-at-pos (overlay-start o))
                                                         (line-number-at-pos)))))
                                 hunks))
                       (before pi-ide-review--reverted)
                       (said (pi-ide-review-revert-at-point)))
                  (undo-boundary)
                  (push (cl-loop for r in pi-ide-review--reverted unless (memq r before) collect (alist-get 'id r))
                        steps)
                  (setq chosen (cl-union chosen on-line))
                  (unless (string-match-p "reverted \\(pi's hunk\\|2 of pi's hunks\\)" said)
                    (ert-fail (list :said said :seed seed :run run :base base :hunks hunks :hunk (cdr c)))))))
            (let ((want (pi-ide-review-tests--text
                         (pi-ide-approval-tests--apply base (cl-remove-if (lambda (h) (memq h chosen)) hunks)))))
              (unless (equal (buffer-string) want)
                (ert-fail (list :seed seed :run run :base base :hunks hunks :reverted chosen
                                :got (buffer-string) :want want))))
            (unless (equal (sort (mapcar (lambda (r) (alist-get 'id r)) pi-ide-review--reverted) #'string<)
                           (sort (mapcar (lambda (h) (alist-get 'id h)) chosen) #'string<))
              (ert-fail (list :seed seed :run run :reverted-list pi-ide-review--reverted)))
            (setq reverts (+ reverts (length chosen)))
            (when steps
              ;; Undone one revert at a time, looked at after each as the state file is written after each
              ;; command: the stack oracle lists the reverts of the steps not undone, and marks again the hunks of
              ;; those undone.
              (undo-start)
              (undo-more 1)             ; past the boundary at the head, as `undo' does
              (let ((left steps))
                (while left
                  (undo-more 1)
                  (setq left (cdr left))
                  (let ((listed (mapcar (lambda (r) (alist-get 'id r)) (pi-ide-review-report)))
                        (want (apply #'append (reverse left)))
                        (marked-ids (sort (mapcar #'car (pi-ide-review-tests--marks)) #'string<))
                        (want-marked (sort (cl-remove-if (lambda (id) (member id (apply #'append left)))
                                                         (mapcar #'car as-marked))
                                           #'string<)))
                    (unless (and (equal listed want) (equal marked-ids want-marked))
                      (ert-fail (list :seed seed :run run :base base :hunks hunks :steps (reverse steps)
                                      :undone (- (length steps) (length left)) :listed listed :want want
                                      :marked marked-ids :want-marked want-marked))))))
              ;; All undone: pi's version, marked where it was marked before.
              (unless (and (equal (buffer-string) (pi-ide-review-tests--text pi-version))
                           (equal (pi-ide-review-tests--marks) as-marked))
                (ert-fail (list :seed seed :run run :base base :hunks hunks :undone (buffer-string)
                                :marks (pi-ide-review-tests--marks) :as-marked as-marked)))
              (cl-incf undone (length chosen))
              (when repeated (cl-incf undone-repeated (length chosen)))
              ;; Redone, all at once (the undos above were one command): the reverts again, listed again in the
              ;; order made and unmarked.
              (undo-boundary)
              (undo-start)
              (undo-more 1)
              (undo-more 1)
              (let* ((lines (pi-ide-approval-tests--apply base (cl-remove-if (lambda (h) (memq h chosen)) hunks)))
                     (listed (mapcar (lambda (r) (alist-get 'id r)) (pi-ide-review-report)))
                     (want (apply #'append (reverse steps)))
                     (marked-ids (sort (mapcar #'car (pi-ide-review-tests--marks)) #'string<))
                     (want-marked (pi-ide-review-tests--ids (cl-remove-if (lambda (h) (memq h chosen)) marked))))
                (unless (equal (buffer-string) (pi-ide-review-tests--text lines))
                  (ert-fail (list :seed seed :run run :base base :hunks hunks :reverted chosen :text (buffer-string))))
                (unless (and (equal listed want) (equal marked-ids want-marked))
                  (ert-fail (list :seed seed :run run :base base :hunks hunks :reverted chosen :redo-listed listed
                                  :want want :marked marked-ids :want-marked want-marked)))))
            ;; The user edits the lines of a hunk still marked: refused, nothing changes.
            (let ((h (cl-find-if (lambda (h) (and (alist-get 'new_text h) (not (memq h chosen)))) hunks)))
              (when h
                (goto-char (overlay-start (pi-ide-review-tests--overlay-of h)))
                (insert "mine ")
                (let ((before (buffer-string)) (said (pi-ide-review-revert-at-point)))
                  (unless (and (string-match-p "you changed these lines" said) (equal before (buffer-string)))
                    (ert-fail (list :said said :before before :after (buffer-string) :seed seed :run run :edited h))))))))))
    ;; The runs did revert hunks of every kind, not nothing.
    (message "pi-ide-review-test-revert-random: %d reverts, %d undone and redone against the stack, %d with lines repeated"
             reverts undone undone-repeated)
    (should (> reverts 900))
    ;; And undid and redid them all against the stack, many where lines repeat.
    (should (= undone reverts))
    (should (> undone-repeated 100))))

(ert-deftest pi-ide-review-test-undo-edges ()
  "A revert undone and redone at the edges of the buffer: listed or not, marked again or not."
  ;; name, baseline, pi's version, pi's hunk, the line reverted
  (dolist (c '(("lines deleted after a last line without its newline" "a\nb\nc" "a\nb"
                ((id . "h1") (old_start . 3) (old_text "c") (new_start . 3) (new_text)) 2)
               ("a line added at the end" "a\n" "a\nb\n"
                ((id . "h1") (old_start . 2) (old_text) (new_start . 2) (new_text "b")) 2)
               ("the first line changed" "a\nb\n" "A\nb\n"
                ((id . "h1") (old_start . 1) (old_text "a") (new_start . 1) (new_text "A")) 1)
               ;; The baseline's line after the deletion is the line deleted: the buffer reads as the revert does,
               ;; Emacs's undo tells them apart.
               ("one of two equal lines deleted" "x\nx\n" "x\n"
                ((id . "h1") (old_start . 1) (old_text "x") (new_start . 1) (new_text)) 1)
               ("an added line equal to the one after it" "a\nb\n" "a\nb\nb\n"
                ((id . "h1") (old_start . 2) (old_text) (new_start . 2) (new_text "b")) 2)
               ("a changed line among equal lines" "x\nx\nx\n" "x\ny\nx\n"
                ((id . "h1") (old_start . 2) (old_text "x") (new_start . 2) (new_text "y")) 2)))
    (let* ((hunk (nth 3 c))
           (pi-ide-review--sets `((7 (:run 3 :files ((:file "/p/a.txt" :baseline ,(nth 1 c) :hunks (,hunk)))))))
           (pi-ide-review--reverted nil)
           (pi-ide-review--reverts nil)
           (pi-ide-review-changed-function #'ignore)
           (listed (lambda () (mapcar (lambda (r) (alist-get 'id r)) (pi-ide-review-report)))))
      (with-temp-buffer
        (buffer-enable-undo)
        (insert (nth 2 c))
        (undo-boundary)
        (pi-ide-review--mark-hunks (pi-ide-state-newest-entry pi-ide-review--sets "/p/a.txt"))
        (let ((as-marked (pi-ide-review-tests--marks)))
          (goto-char (point-min))
          (forward-line (1- (nth 4 c)))
          (pi-ide-review-revert-at-point)
          (undo-boundary)
          (should (equal (list (car c) (buffer-string) (funcall listed)) (list (car c) (nth 1 c) '("h1"))))
          (undo-start)
          (undo-more 1)
          (undo-more 1)
          (should (equal (list (car c) (buffer-string) (funcall listed) (pi-ide-review-tests--marks))
                         (list (car c) (nth 2 c) nil as-marked)))
          (undo-boundary)
          (undo-start)
          (undo-more 1)
          (undo-more 1)
          (should (equal (list (car c) (buffer-string) (funcall listed) (pi-ide-review-tests--marks))
                         (list (car c) (nth 1 c) '("h1") nil))))))))

(ert-deftest pi-ide-review-test-undo-beside-edits ()
  "A revert's undo and redo told apart from the user's edits beside and in the hunk, step by step."
  ;; name, baseline, pi's version, pi's hunks, steps: (edit LINE) appends \"!\" to LINE, (type LINE TEXT) types
  ;; TEXT over LINE, (revert LINE), (undo) or (undo N) (`undo-only'), (redo), (plain-undo) (`undo', on from the
  ;; last step's when that was one too); each its own command, with the ids listed after it.
  (dolist (c '(("the line above a deletion edited before the revert: its undo seen" "a\nb\nc\n" "a\nc\n"
                (((id . "h1") (old_start . 2) (old_text "b") (new_start . 2) (new_text)))
                ((edit 1) nil (revert 2) ("h1") (undo) nil (redo) ("h1")))
               ("the line after a deletion edited before the revert: its undo seen" "a\nb\nc\n" "a\nc\n"
                (((id . "h1") (old_start . 2) (old_text "b") (new_start . 2) (new_text)))
                ((edit 2) nil (revert 2) ("h1") (undo) nil (redo) ("h1")))
               ("pi's changed line edited after the undo: still undone" "a\nb\nc\n" "a\nB\nc\n"
                (((id . "h1") (old_start . 2) (old_text "b") (new_start . 2) (new_text "B")))
                ((revert 2) ("h1") (undo) nil (edit 2) nil (undo) nil (redo) nil))
               ("the line above an added line edited before the revert: its redo seen" "a\nc\n" "a\nb\nc\n"
                (((id . "h1") (old_start . 2) (old_text) (new_start . 2) (new_text "b")))
                ((edit 1) nil (revert 2) ("h1") (undo) nil (redo) ("h1") (undo) nil (redo) ("h1")))
               ;; The text is pi's again, but no undo took the revert back: the user's edits never decide.
               ("pi's line typed back by the user: still a revert until its undo" "a\nb\nc\n" "a\nB\nc\n"
                (((id . "h1") (old_start . 2) (old_text "b") (new_start . 2) (new_text "B")))
                ((revert 2) ("h1") (type 2 "B") ("h1") (undo) ("h1") (undo) nil (redo) ("h1")))
               ("an undo of the user's edit beside a revert undone: still undone" "a\nb\nc\n" "a\nc\n"
                (((id . "h1") (old_start . 2) (old_text "b") (new_start . 2) (new_text)))
                ((revert 2) ("h1") (undo) nil (edit 1) nil (undo) nil (edit 2) nil (undo) nil (redo) nil))
               ;; Several steps in one command: each revert's own undo entry tells it, not the text at the end; that
               ;; undo is one step, and so is its redo, while `undo-only' goes back through the reverts one by one.
               ("two reverts undone by one command (a step of its own), then redone" "a\nb\nc\nd\n" "a\nB\nc\nD\n"
                (((id . "h1") (old_start . 2) (old_text "b") (new_start . 2) (new_text "B"))
                 ((id . "h2") (old_start . 4) (old_text "d") (new_start . 4) (new_text "D")))
                ((revert 4) ("h2") (revert 2) ("h2" "h1") (undo 2) nil (redo) ("h2" "h1") (undo) ("h2") (undo) nil (redo) ("h2") (redo) ("h2" "h1")))
               ("an undo of an undo (`undo' on after another command) is a redo" "a\nb\n" "a\nB\n"
                (((id . "h1") (old_start . 2) (old_text "b") (new_start . 2) (new_text "B")))
                ((revert 2) ("h1") (undo) nil (edit 1) nil (plain-undo) nil (plain-undo) ("h1") (plain-undo) nil))))
    (let* ((pi-ide-review--sets `((7 (:run 3 :files ((:file "/p/a.txt" :baseline ,(nth 1 c) :hunks ,(nth 3 c)))))))
           (pi-ide-review--reverted nil)
           (pi-ide-review--reverts nil)
           (pi-ide-review-changed-function #'ignore)
           (trail nil))
      (with-temp-buffer
        (buffer-enable-undo)
        (insert (nth 2 c))
        (undo-boundary)
        (pi-ide-review--mark-hunks (pi-ide-state-newest-entry pi-ide-review--sets "/p/a.txt"))
        (cl-loop for (step want) on (nth 4 c) by #'cddr
                 do (pcase step
                      (`(edit ,line) (goto-char (point-min)) (forward-line (1- line)) (end-of-line) (insert "!"))
                      (`(type ,line ,text) (goto-char (point-min)) (forward-line (1- line))
                       (delete-region (point) (line-end-position)) (insert text))
                      (`(revert ,line) (goto-char (point-min)) (forward-line (1- line)) (pi-ide-review-revert-at-point))
                      ('(undo) (undo-only 1))
                      (`(undo ,n) (undo-only n))
                      ('(plain-undo) (setq last-command (if (equal (car (car trail)) '(plain-undo)) 'undo 'ignore))
                       (undo))
                      ('(redo) (undo-redo 1)))
                 (undo-boundary)
                 (push (list step (buffer-string)) trail)
                 (should (equal (list (car c) (reverse trail) (mapcar (lambda (r) (alist-get 'id r)) (pi-ide-review-report)))
                                (list (car c) (reverse trail) want))))))))

(provide 'pi-ide-review-tests)
;;; pi-ide-review-tests.el ends here
