;;; pi-ide-review-tests.el --- Seeded random test of pi's hunks reverted in a buffer -*- lexical-binding: t; -*-

;;; Commentary:

;; Run by test/emacs/batch.test.ts in `emacs --batch'.  For random files and random hunks of pi's shape (the
;; generator and the hunks-applied oracle of pi-ide-approval-tests.el: no context lines, never touching each
;; other, insertions at the start and after the last line), the buffer holds pi's version and is marked
;; (pi-ide-review.el); a random subset of the marked hunks is reverted with point on each, in random order.  The
;; buffer must then be the baseline with only the other hunks applied, computed on its own from the hunks;
;; every revert is listed in `reverted', and undoing each brings pi's version back.  Undone, a revert is no
;; longer one: `reverted' leaves it out and its hunk is marked again where it was marked before; a redo lists it
;; again and takes that mark away.  Which reverts count as undone is decided on its own from the lines (a
;; revert whose place reads as pi's version, `pi-ide-review-tests--shows-pi-p').  A hunk whose lines the user
;; edited is refused and leaves the buffer as it was.  PI_IDE_SEED replays a failure; planted defects (a
;; deletion put back after the line that followed it, not before; the place of a revert followed by a marker
;; that an undo's text moves) are caught.  A table undoes and redoes reverts at the edges of the buffer.

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

(defun pi-ide-review-tests--shows-pi-p (lines base h at)
  "The oracle: do LINES show pi's version of hunk H, its baseline put back at line AT?
BASE: the baseline's lines.  pi's new lines from AT on; for a deletion, the
lines put back are not at AT, and the baseline's line that followed the
deleted ones is at AT (for lines deleted at the end: LINES end before AT,
with the line that came before them, if any)."
  (let* ((old (alist-get 'old_text h)) (new (alist-get 'new_text h))
         (before (1- (alist-get 'old_start h))) (after (+ (alist-get 'old_start h) (length old)))
         (from (lambda (k) (cl-subseq lines (min (1- at) (length lines)) (min (+ at -1 k) (length lines))))))
    (if new
        (equal (funcall from (length new)) new)
      (and lines
           (not (equal (funcall from (length old)) old))
           (if (<= after (length base))
               (equal (nth (1- at) lines) (nth (1- after) base))
             (and (= at (1+ (length lines)))
                  (or (< before 1) (equal (nth (- at 2) lines) (nth (1- before) base)))))))))

(defun pi-ide-review-tests--places (hunks chosen)
  "Where each of CHOSEN (of HUNKS) has its baseline's lines, with only CHOSEN reverted: (HUNK . LINE)."
  (let ((shift 0) (out nil))
    (dolist (h hunks)
      (if (memq h chosen)
          (push (cons h (+ (alist-get 'old_start h) shift)) out)
        (setq shift (+ shift (- (length (alist-get 'new_text h)) (length (alist-get 'old_text h)))))))
    out))

(defun pi-ide-review-tests--overlay-of (hunk)
  "The review overlay of HUNK in the current buffer, or nil."
  (cl-find-if (lambda (o) (eq (overlay-get o 'pi-ide-review-hunk) hunk)) (overlays-in (point-min) (point-max))))

(ert-deftest pi-ide-review-test-revert-random ()
  "Seeded: reverting hunks leaves the baseline with the other hunks applied; undo restores pi's version."
  (let ((seed (or (and (getenv "PI_IDE_SEED") (string-to-number (getenv "PI_IDE_SEED"))) 20261202))
        (reverts 0)
        (undone 0))
    (dotimes (run 1500)
      (random (format "pi-ide-review-%d-%d" seed run))
      (let* ((base (pi-ide-approval-tests--random-lines (random 10)))
             (hunks (pi-ide-approval-tests--random-hunks base))
             (pi-version (pi-ide-approval-tests--apply base hunks))
             (entry (list :pid 7 :run 3 :file "/p/a.txt" :baseline (pi-ide-review-tests--text base) :hunks hunks))
             (pi-ide-review--sets `((7 (:run 3 :files ((:file "/p/a.txt" :baseline ,(plist-get entry :baseline)
                                                             :hunks ,hunks))))))
             (pi-ide-review--reverted nil)
             (pi-ide-review--reverts nil)
             (pi-ide-review-changed-function #'ignore)
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
                       (said (pi-ide-review-revert-at-point)))
                  (undo-boundary)
                  (push (length on-line) steps)
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
              (undo-start)
              (undo-more 1)             ; past the boundary at the head, as `undo' does
              (undo-more (length steps))
              (unless (equal (buffer-string) (pi-ide-review-tests--text pi-version))
                (ert-fail (list :seed seed :run run :base base :hunks hunks :undone (buffer-string))))
              ;; Undone: pi's version at each revert's place (the hunk's new_start), so out of `reverted' and
              ;; marked again as before, but for a deletion whose put-back lines read as pi's version.
              (let* ((held (cl-remove-if (lambda (h) (pi-ide-review-tests--shows-pi-p pi-version base h
                                                                                       (alist-get 'new_start h)))
                                         chosen))
                     (listed (pi-ide-review-tests--ids (append (pi-ide-review-report) nil)))
                     (want-marks (cl-remove-if (lambda (m) (member (car m) (pi-ide-review-tests--ids held)))
                                               as-marked)))
                (cl-incf undone (- (length chosen) (length held)))
                (unless (and (equal listed (pi-ide-review-tests--ids held))
                             (equal (pi-ide-review-tests--marks) want-marks))
                  (ert-fail (list :seed seed :run run :base base :hunks hunks :reverted chosen :undo-listed listed
                                  :marks (pi-ide-review-tests--marks) :want-marks want-marks))))
              ;; Redone: the reverts again, listed again and unmarked, but for a revert whose baseline lines read
              ;; as pi's version at its place.
              (undo-boundary)
              (undo-start)
              (undo-more 1)
              (undo-more 1)
              (let* ((lines (pi-ide-approval-tests--apply base (cl-remove-if (lambda (h) (memq h chosen)) hunks)))
                     (seen-undone (mapcar #'car (cl-remove-if-not
                                                 (lambda (p) (pi-ide-review-tests--shows-pi-p lines base (car p) (cdr p)))
                                                 (pi-ide-review-tests--places hunks chosen))))
                     (listed (pi-ide-review-tests--ids (append (pi-ide-review-report) nil)))
                     (want-ids (pi-ide-review-tests--ids (cl-set-difference chosen seen-undone)))
                     (marked-ids (sort (mapcar #'car (pi-ide-review-tests--marks)) #'string<))
                     (want-marked (pi-ide-review-tests--ids
                                   (append seen-undone (cl-remove-if (lambda (h) (memq h chosen)) marked)))))
                (unless (and (equal (buffer-string) (pi-ide-review-tests--text lines))
                             (equal listed want-ids) (equal marked-ids want-marked))
                  (ert-fail (list :seed seed :run run :base base :hunks hunks :reverted chosen :redo-listed listed
                                  :want want-ids :marked marked-ids :want-marked want-marked :text (buffer-string))))))
            ;; The user edits the lines of a hunk still marked: refused, nothing changes.
            (let ((h (cl-find-if (lambda (h) (and (alist-get 'new_text h) (not (memq h chosen)))) hunks)))
              (when h
                (goto-char (overlay-start (pi-ide-review-tests--overlay-of h)))
                (insert "mine ")
                (let ((before (buffer-string)) (said (pi-ide-review-revert-at-point)))
                  (unless (and (string-match-p "you changed these lines" said) (equal before (buffer-string)))
                    (ert-fail (list :said said :before before :after (buffer-string) :seed seed :run run :edited h))))))))))
    ;; The runs did revert hunks of every kind, not nothing.
    (should (> reverts 900))
    ;; And undid nearly all of them: a revert left listed after its undo is a deletion whose lines read as pi's.
    (should (> undone (* 0.9 reverts)))))

(ert-deftest pi-ide-review-test-undo-edges ()
  "A revert undone and redone at the edges of the buffer: listed or not, marked again or not."
  ;; name, baseline, pi's version, pi's hunk, the line reverted, still listed once undone
  (dolist (c '(("lines deleted after a last line without its newline" "a\nb\nc" "a\nb"
                ((id . "h1") (old_start . 3) (old_text "c") (new_start . 3) (new_text)) 2 nil)
               ("a line added at the end" "a\n" "a\nb\n"
                ((id . "h1") (old_start . 2) (old_text) (new_start . 2) (new_text "b")) 2 nil)
               ("the first line changed" "a\nb\n" "A\nb\n"
                ((id . "h1") (old_start . 1) (old_text "a") (new_start . 1) (new_text "A")) 1 nil)
               ;; The baseline's line after the deletion is the line deleted: the buffer reads as the revert does.
               ("one of two equal lines deleted: its undo is not told from the revert" "x\nx\n" "x\n"
                ((id . "h1") (old_start . 1) (old_text "x") (new_start . 1) (new_text)) 1 t)))
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
                         (list (car c) (nth 2 c) (and (nth 5 c) '("h1")) (if (nth 5 c) nil as-marked))))
          (undo-boundary)
          (undo-start)
          (undo-more 1)
          (undo-more 1)
          (should (equal (list (car c) (buffer-string) (funcall listed) (pi-ide-review-tests--marks))
                         (list (car c) (nth 1 c) '("h1") nil))))))))

(provide 'pi-ide-review-tests)
;;; pi-ide-review-tests.el ends here
