;;; pi-ide-ask.el --- pi shows a place and asks what is open (protocol v0.5) -*- lexical-binding: t; -*-

;;; Commentary:

;; While pi's `ide_show' or `ide_open_files' tool waits (at most 1 s), pi writes pi-<pid>.ask.json naming
;; this Emacs; the inbox (pi-ide-inbox.el) reads it under the checks of pi's messages and hands it here.
;; Each request is answered once, in <state dir>/<pid>.answers.json (written like the state file), keyed by
;; pi and the request's id.
;;
;; show: the place goes to the buffer `*pi-ide shown*', a `grep-mode' buffer (a compilation buffer:
;;       RET, `next-error' and `M-g n' visit its places), which becomes `next-error''s list, as Neovim's
;;       quickfix list becomes the current one.  A buffer and not the mark ring or a register: it keeps every
;;       place with pi's note, in order, and visiting one is Emacs's usual `next-error' walk.  The buffer is
;;       never displayed and no file is visited: the selected window, its buffer and point stay.  One inert
;;       message line says so.  With `pi-ide-show-follow' the place is also displayed.
;; ask:  the file-visiting buffers (modified flag, `buffer-chars-modified-tick'), the selected window's first,
;;       and the diagnostics (Flymake or Flycheck, as the state file has them) of the named file, of every
;;       one, or none.
;;
;; Nothing is opened, created or run because pi said so (but the user's `pi-ide-show-follow').  Nothing runs
;; per keystroke: only when pi's request file changes.

;;; Code:

(require 'cl-lib)
(require 'grep)
(require 'pi-ide-protocol)
(require 'pi-ide-writer)
(require 'pi-ide-diagnostics)

(defvar pi-ide-show-follow)

;; PROTOCOL.md, Limits (src/protocol/limits.ts; held together by test/emacs/limits-agree.test.ts).
(defconst pi-ide-ask-max-bytes (* 64 1024) "Largest request file read, bytes.")
(defconst pi-ide-ask-max-requests 8 "Most requests in one request file.")
(defconst pi-ide-ask-max-note-bytes 1024 "Longest note of a show, bytes of UTF-8.")
(defconst pi-ide-ask-max-answers 16 "Most answers kept in the answers file.")
(defconst pi-ide-ask-max-file-bytes (* 1024 1024) "Largest answers file, bytes.")
(defconst pi-ide-ask-max-buffers 200 "Most buffers listed in an ask's answer.")
(defconst pi-ide-ask-max-items 200 "Most diagnostics in an ask's answer, in all.")
(defconst pi-ide-ask--max-done 64 "How many answered requests are remembered.")

(defconst pi-ide-ask-buffer-name "*pi-ide shown*" "The buffer pi's places go to.")

(defvar pi-ide-ask--dir nil "The state directory answered in, or nil.")
(defvar pi-ide-ask--answers nil "The answers written, newest last.")
(defvar pi-ide-ask--done nil "\"<pi key>:<id>\" of the requests answered, newest first.")

;;;; Rules (pure)

(defun pi-ide-ask--line-p (v)
  "Is V a 1-based line number?"
  (and (integerp v) (<= 1 v pi-ide-state-max-line)))

(defun pi-ide-ask--path-p (v)
  "Is V an absolute path?"
  (and (stringp v) (string-prefix-p "/" v) (<= (length v) 4095) (not (string-search "\0" v))))

(defun pi-ide-ask--validate-request (r)
  "(REQUEST . nil) for one request R of pi's, or (nil . why it is malformed)."
  (let ((id (alist-get 'id r)) (expires (alist-get 'expires r)) (kind (alist-get 'kind r)))
    (cond
     ((not (and (consp r) (pi-ide-state--id-p id)))
      (cons nil (format "a request's id is not 1 to %d bytes" pi-ide-state-max-id-bytes)))
     ((not (numberp expires)) (cons nil "a request has no expires"))
     ((equal kind "show")
      (let ((file (alist-get 'file r)) (line (alist-get 'line r))
            (end (alist-get 'end_line r :null)) (note (alist-get 'note r :null)))
        (cond
         ((not (and (pi-ide-ask--path-p file) (pi-ide-ask--line-p line)))
          (cons nil "a show has no absolute file and line"))
         ((not (or (eq end :null) (and (pi-ide-ask--line-p end) (>= end line))))
          (cons nil "a show's end_line is not a line at or after its line"))
         ((not (or (eq note :null)
                   (and (stringp note) (<= (string-bytes (encode-coding-string note 'utf-8))
                                           pi-ide-ask-max-note-bytes))))
          (cons nil (format "a show's note is not text of at most %d bytes" pi-ide-ask-max-note-bytes)))
         (t (cons (list :id id :kind 'show :file file :line line :end (and (integerp end) end)
                        :note (and (stringp note) note) :expires expires)
                  nil)))))
     ((equal kind "ask")
      (let ((d (alist-get 'diagnostics r)) (file (alist-get 'file r)))
        (cond
         ((not (member d '("file" "all" "none")))
          (cons nil "an ask's diagnostics is not file, all or none"))
         ((and (equal d "file") (not (pi-ide-ask--path-p file)))
          (cons nil "an ask for a file's diagnostics names no absolute file"))
         (t (cons (list :id id :kind 'ask :diagnostics (intern d) :file (and (equal d "file") file)
                        :expires expires)
                  nil)))))
     (t (cons nil "a request's kind is not show or ask")))))

(defun pi-ide-ask-validate (msg key)
  "Check MSG, pi's decoded request file, of pi identity KEY (the name's).
Returns (EDITOR-PID REQUESTS . PROBLEM): the malformed requests left out,
the first's problem said; or (nil nil . WHY) when the file is refused whole."
  (let ((requests (and (consp msg) (alist-get 'requests msg))))
    (cond
     ((not (and (consp msg) (equal (alist-get 'kind msg) "pi-ask")))
      (cons nil (cons nil "kind is not \"pi-ask\"")))
     ((not (eql (alist-get 'pid msg) (pi-ide-state-key-pid key)))
      (cons nil (cons nil "pid does not match the file name")))
     ((pi-ide-state-ns-disagrees msg key) (cons nil (cons nil (pi-ide-state-ns-disagrees msg key))))
     ((not (integerp (alist-get 'editor_pid msg))) (cons nil (cons nil "editor_pid is not a pid")))
     ((not (and (listp requests) (<= (length requests) pi-ide-ask-max-requests)))
      (cons nil (cons nil (format "requests is not a list of at most %d" pi-ide-ask-max-requests))))
     (t (let ((out nil) (problem nil))
          (dolist (raw requests)
            (pcase-let ((`(,r . ,bad) (pi-ide-ask--validate-request raw)))
              (if r (push r out) (setq problem (or problem bad)))))
          (cons (alist-get 'editor_pid msg) (cons (nreverse out) problem)))))))

;;;; Answers

(defun pi-ide-ask--file-buffers ()
  "The file-visiting buffers, the selected window's first: (BUFFER . FILE)."
  (let* ((current (window-buffer (selected-window)))
         (all (cl-loop for b in (buffer-list)
                       for f = (buffer-file-name b)
                       when (and f (buffer-live-p b) (not (file-remote-p f)))
                       collect (cons b (expand-file-name f)))))
    (append (cl-remove-if-not (lambda (e) (eq (car e) current)) all)
            (cl-remove-if (lambda (e) (eq (car e) current)) all))))

(defun pi-ide-ask--shows-p (file target)
  "Is FILE the file TARGET names (by name, then by true name)?"
  (or (equal file target)
      (equal (ignore-errors (file-truename file)) (ignore-errors (file-truename target)))))

(defun pi-ide-ask--answer-ask (r)
  "The answer to ask R."
  (let* ((current (window-buffer (selected-window)))
         (all (pi-ide-ask--file-buffers))
         (room pi-ide-ask-max-items)
         (out nil))
    (dolist (e (seq-take all pi-ide-ask-max-buffers))
      (with-current-buffer (car e)
        (let ((b `((file . ,(cdr e))
                   (modified . ,(if (buffer-modified-p) t :false))
                   (version . ,(buffer-chars-modified-tick))
                   (lines_total . ,(save-restriction (widen) (max 1 (count-lines (point-min) (point-max)))))
                   (active . ,(if (eq (car e) current) t :false)))))
          (when (or (eq (plist-get r :diagnostics) 'all)
                    (and (eq (plist-get r :diagnostics) 'file) (pi-ide-ask--shows-p (cdr e) (plist-get r :file))))
            ;; As the state file has them: dated with the content version they were computed for.
            (let ((d (pi-ide-diagnostics-collect (current-buffer))))
              (unless (eq d :null)
                (let ((items (alist-get 'items d)))
                  (when (> (length items) room)
                    (setq d `((version . ,(alist-get 'version d)) (total . ,(alist-get 'total d))
                              (items . ,(seq-take items (max 0 room))))))
                  (setq room (- room (length (alist-get 'items d))))))
              (setq b (append b `((diagnostics . ,d))))))
          (push b out))))
    `((kind . "ask") (buffers . ,(vconcat (nreverse out))) (buffers_total . ,(length all)))))

(defun pi-ide-ask--follow (r)
  "Display the place of show R (`pi-ide-show-follow'); non-nil when shown."
  (condition-case nil
      (let* ((large-file-warning-threshold nil)
             (buf (find-file-noselect (plist-get r :file))))
        (pop-to-buffer buf)
        (goto-char (point-min))
        (forward-line (1- (plist-get r :line)))
        t)
    (error nil)))

(defun pi-ide-ask--shown-buffer ()
  "The buffer pi's places go to, made when missing; never displayed."
  (or (get-buffer pi-ide-ask-buffer-name)
      (with-current-buffer (get-buffer-create pi-ide-ask-buffer-name)
        (grep-mode)
        (setq-local default-directory "/")
        (let ((inhibit-read-only t))
          (insert "pi's places (RET or M-g n visits one)\n"))
        (current-buffer))))

(defun pi-ide-ask-places ()
  "The places pi showed, oldest first: plists :file :line :end :text."
  (let ((buf (get-buffer pi-ide-ask-buffer-name)) (out nil))
    (when buf
      (with-current-buffer buf
        (save-excursion
          (goto-char (point-min))
          (while (not (eobp))
            (let ((p (get-text-property (point) 'pi-ide-place)))
              (when p (push p out)))
            (forward-line 1)))))
    (nreverse out)))

(defun pi-ide-ask--answer-show (r)
  "The answer to show R: its place into `*pi-ide shown*', one message line."
  (let* ((note (and (plist-get r :note) (pi-ide-state-inert (plist-get r :note))))
         (line (plist-get r :line)) (end (plist-get r :end))
         (lines (if (and end (/= end line)) (format "%d-%d" line end) (number-to-string line)))
         (text (concat "pi" (if end (format " (lines %s)" lines) "") (if note (concat ": " note) "")))
         (buf (pi-ide-ask--shown-buffer))
         (count 0))
    (with-current-buffer buf
      (let ((inhibit-read-only t))
        (save-excursion
          (goto-char (point-max))
          (insert (propertize (format "%s:%d: %s\n" (pi-ide-state-inert (plist-get r :file)) line text)
                              'pi-ide-place (list :file (plist-get r :file) :line line :end end :text text)))))
      (setq count (length (pi-ide-ask-places))))
    ;; `next-error' (M-g n) walks pi's places now, as Neovim's `:cc' its quickfix list.
    (setq next-error-last-buffer buf)
    (let ((opened (and pi-ide-show-follow (pi-ide-ask--follow r)))
          (message-log-max (if (integerp message-log-max) message-log-max 1000)))
      (message "%s" (format "(pi-ide) pi shows %s:%s%s%s"
                            (pi-ide-state-inert (abbreviate-file-name (plist-get r :file))) lines
                            (if note (concat ": " note) "")
                            (if opened "" (format " (%d in %s, M-g n)" count pi-ide-ask-buffer-name))))
      `((kind . "show") (status . ,(if opened "opened" "listed")) (list . "next-error")))))

(defun pi-ide-ask--encode (pid)
  "The answers file's text for this Emacs, PID; oldest answers dropped to fit."
  (let (text)
    (while (progn
             (setq text (json-serialize `((protocol . "0.5") (kind . "editor-answers") (pid . ,pid)
                                          (timestamp . ,(float-time))
                                          (answers . ,(vconcat pi-ide-ask--answers)))))
             (and (> (string-bytes text) pi-ide-ask-max-file-bytes) pi-ide-ask--answers))
      (pop pi-ide-ask--answers))
    (and (<= (string-bytes text) pi-ide-ask-max-file-bytes) text)))

(defun pi-ide-ask-receive (msg key now)
  "Answer each new request of pi KEY's request file MSG that names this Emacs.
The inbox checked the file and that pi lives; NOW is `float-time'.  Returns
nil, or why the file (or a request in it) was not used."
  (pcase-let ((`(,editor-pid ,requests . ,bad) (pi-ide-ask-validate msg key)))
    (cond
     ((null editor-pid) bad)
     ((/= editor-pid (emacs-pid)) nil)
     (t
      (let ((fields (pi-ide-state-pi-fields key msg)) (answered nil))
        (dolist (r requests)
          (let ((done-key (format "%s:%s" key (plist-get r :id))))
            (unless (or (member done-key pi-ide-ask--done) (< (plist-get r :expires) now))
              (push done-key pi-ide-ask--done)
              (let ((a (condition-case err
                           (if (eq (plist-get r :kind) 'show) (pi-ide-ask--answer-show r) (pi-ide-ask--answer-ask r))
                         (error (if (eq (plist-get r :kind) 'show)
                                    `((kind . "show") (status . "refused") (list . :null)
                                      (reason . ,(format "the editor failed: %s" (error-message-string err))))
                                  '((kind . "ask") (buffers . []) (buffers_total . 0)))))))
                (setq pi-ide-ask--answers
                      (append pi-ide-ask--answers (list (append a fields `((id . ,(plist-get r :id)))))))
                (setq answered t)))))
        (setq pi-ide-ask--done (seq-take pi-ide-ask--done pi-ide-ask--max-done))
        (when (> (length pi-ide-ask--answers) pi-ide-ask-max-answers)
          (setq pi-ide-ask--answers (last pi-ide-ask--answers pi-ide-ask-max-answers)))
        (or (and answered pi-ide-ask--dir
                 (let ((text (pi-ide-ask--encode (emacs-pid))))
                   (if (null text) "the answers would not fit in their file"
                     (cdr (pi-ide-writer-write-named pi-ide-ask--dir (format "%d.answers.json" (emacs-pid))
                                                     text)))))
            bad))))))

(defun pi-ide-ask-start (dir)
  "Answer into DIR from now on."
  (setq pi-ide-ask--dir dir))

(defun pi-ide-ask-reset ()
  "Forget every answer; the answers file is removed with the state file."
  (setq pi-ide-ask--dir nil pi-ide-ask--answers nil pi-ide-ask--done nil))

(provide 'pi-ide-ask)
;;; pi-ide-ask.el ends here
