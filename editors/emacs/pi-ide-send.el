;;; pi-ide-send.el --- Send to pi from Emacs (protocol v0.5) -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The pi-ide-context authors
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; The other direction: the user hands the pi connected to this Emacs the region (or the line of point), the
;; diagnostic under point (Flymake's or Flycheck's, as the client reads them for the state file), pi's hunk
;; under point or the whole file, with words typed in the minibuffer.  Written as <state dir>/<pid>.send.json
;; by the state file's rules (`pi-ide-writer-write-named': 0600, an exclusive temp file then one rename, in a
;; checked directory; removed with the state file).  pi puts it into its input as a draft, or with a prefix
;; argument sends it at once (a prompt when idle, a follow-up when busy), and says what became of it in its
;; message (`sent'): `pi-ide-send-answered' shows that in one line.  pi holds the ignore rules: a file they
;; exclude is refused by pi, and said so here in one line.  The Neovim client's rules
;; (editors/nvim/lua/pi-ide/send.lua).  The commands are in pi-ide.el.

;;; Code:

(require 'cl-lib)
(require 'pi-ide-protocol)
(require 'pi-ide-state)
(require 'pi-ide-writer)
(require 'pi-ide-diagnostics)
(require 'pi-ide-inbox)
(require 'pi-ide-review)

(defconst pi-ide-send-max-text-bytes (* 256 1024)
  "What `item.text' may take once JSON-encoded: the selection's cap.")

(defconst pi-ide-send-max-prompt-bytes (* 16 1024)
  "The typed prompt's cap in bytes of UTF-8.")

(defvar pi-ide-send--chosen nil "The identity of the pi picked when several name this Emacs.")
(defvar pi-ide-send--pending nil "Ids sent and not yet answered.")
(defvar pi-ide-send--count 0 "Sends made by this Emacs.")
(defvar pi-ide-send--last nil "The last send: a plist :id :pi :kind :file :fate.")

(defconst pi-ide-send--fates
  '(("draft" . "in pi's input as a draft")
    ("prompt" . "sent to pi as a prompt")
    ("follow-up" . "queued for pi as a follow-up"))
  "What pi did with a send, as the user is told.")

(defun pi-ide-send--cut-bytes (s max)
  "S cut at a character boundary to at most MAX bytes of UTF-8."
  (if (<= (string-bytes s) max)
      s
    (let ((lo 0) (hi (min (length s) max)))
      (while (< lo hi)
        (let ((mid (/ (+ lo hi 1) 2)))
          (if (<= (string-bytes (substring s 0 mid)) max) (setq lo mid) (setq hi (1- mid)))))
      (substring s 0 lo))))

(defun pi-ide-send--lines-text (first last)
  "Lines FIRST..LAST of the current buffer joined, cut to the cap: (TEXT . CUT)."
  (pi-ide-state-fit
   (pi-ide-state-sanitize
    (save-excursion
      (save-restriction
        (widen)
        (goto-char (point-min))
        (forward-line (1- first))
        (let ((beg (point)))
          (forward-line (- last first))
          (buffer-substring-no-properties beg (line-end-position))))))
   pi-ide-send-max-text-bytes))

(defun pi-ide-send--diagnostic-at (line)
  "The most severe diagnostic on LINE of the current buffer, an alist, or nil."
  (let ((d (pi-ide-diagnostics-collect (current-buffer))))
    (and (consp d)
         ;; Listed errors first (`pi-ide-state-diagnostics'): the first covering LINE is the most severe.
         (cl-find-if (lambda (i)
                       (let ((end (alist-get 'end_line i)))
                         (<= (alist-get 'line i) line (if (integerp end) end (alist-get 'line i)))))
                     (alist-get 'items d)))))

(defun pi-ide-send--hunk-at-point ()
  "(FIRST . LAST), the lines of pi's hunk under point, or nil."
  (let ((o (car (pi-ide-review--at-point))))
    (when o
      (let ((first (line-number-at-pos (overlay-start o) t))
            (end (overlay-end o)))
        ;; A mark over whole lines ends at the start of the line after its last.
        (cons first (max first (line-number-at-pos (if (and (> end (overlay-start o))
                                                             (save-excursion (goto-char end) (bolp)))
                                                        (1- end)
                                                      end)
                                                    t)))))))

(defun pi-ide-send-item (what)
  "The item to send for WHAT, or (nil . WHY) when there is none.
WHAT is nil (the region when active, else the line of point),
`diagnostic', `hunk' or `file'.  Returns (ITEM . nil) or (nil . WHY)."
  (let ((file buffer-file-name)
        (row (line-number-at-pos nil t))
        (kind "line") first last (message :null))
    (setq first row last row)
    (cond
     ((null file) (cons nil "(pi-ide) not a file buffer: nothing sent"))
     (t
      (pcase what
        ;; The empty line after a final newline is no line of the file.
        ('file (setq kind "file" first 1
                     last (save-excursion (save-restriction (widen) (goto-char (point-max))
                                                            (when (and (bolp) (> (point) (point-min))) (backward-char))
                                                            (line-number-at-pos (point) t)))))
        ('diagnostic
         (let ((d (pi-ide-send--diagnostic-at row)))
           (if (null d)
               (setq kind nil)
             (setq kind "diagnostic" first (alist-get 'line d) message (alist-get 'message d)
                   last (let ((end (alist-get 'end_line d))) (max first (if (integerp end) end first)))))))
        ('hunk
         (let ((h (pi-ide-send--hunk-at-point)))
           (if h (setq kind "hunk" first (car h) last (cdr h)) (setq kind 'no-hunk))))
        (_ (when (use-region-p)
             (let ((beg (region-beginning)) (end (region-end)))
               (setq kind "selection"
                     first (line-number-at-pos beg t)
                     ;; A region ending at the start of a line (whole lines marked) does not take that line.
                     last (max (line-number-at-pos beg t)
                               (line-number-at-pos (if (and (> end beg) (save-excursion (goto-char end) (bolp)))
                                                       (1- end)
                                                     end)
                                                   t)))))))
      (cond
       ((null kind) (cons nil "(pi-ide) no diagnostic under the cursor: nothing sent"))
       ((eq kind 'no-hunk) (cons nil "(pi-ide) no hunk of pi's under the cursor: nothing sent"))
       (t
        (let ((text (pi-ide-send--lines-text first last)))
          (cons `((kind . ,kind) (file . ,(pi-ide-state-sanitize (expand-file-name file)))
                  (start_line . ,first) (end_line . ,(max first last))
                  (text . ,(car text)) (truncated . ,(if (cdr text) t :false))
                  (message . ,(if (stringp message) (pi-ide-state-sanitize message) :null)))
                nil))))))))

(defun pi-ide-send-write (pi item mode prompt)
  "Write the request for PI (`pi-ide-inbox-all's entry): ITEM, MODE, PROMPT.
MODE is \"draft\" or \"now\".  Returns the id, or (nil . WHY)."
  (let* ((dir (pi-ide-writer-state-dir (getenv "XDG_RUNTIME_DIR")))
         (problem (pi-ide-writer-ensure-dir dir)))
    (if problem
        (cons nil (concat "(pi-ide) not sending: " (cdr problem)))
      (setq pi-ide-send--count (1+ pi-ide-send--count))
      (let* ((id (format "s%d-%d-%d" (emacs-pid) (floor (* 1000 (float-time))) pi-ide-send--count))
             (text (json-serialize
                    `((protocol . "0.5") (kind . "send") (pid . ,(emacs-pid))
                      ,@(plist-get pi :fields)
                      (id . ,id) (timestamp . ,(float-time)) (mode . ,mode)
                      (prompt . ,(pi-ide-send--cut-bytes (pi-ide-state-sanitize prompt) pi-ide-send-max-prompt-bytes))
                      (item . ,item))))
             (problem (pi-ide-writer-write-named dir (format "%d.send.json" (emacs-pid)) text)))
        (if problem
            (cons nil (concat "(pi-ide) not sending: " (cdr problem)))
          (push id pi-ide-send--pending)
          (setq pi-ide-send--last (list :id id :pi (plist-get pi :pid) :kind (alist-get 'kind item)
                                        :file (alist-get 'file item) :fate nil))
          id)))))

(defun pi-ide-send--which-pi ()
  "The pi to send to, or (nil . WHY).
The only one naming this Emacs, the one picked before while it still does,
or the one the user picks now (asked once, remembered)."
  (let ((all (pi-ide-inbox-all)))
    (cond
     ((null all) (cons nil "(pi-ide) no pi is connected to this Emacs: nothing sent"))
     ((null (cdr all)) (car all))
     ((cl-find pi-ide-send--chosen all :key (lambda (p) (plist-get p :key))))
     (t
      (let* ((names (mapcar (lambda (p)
                              (cons (pi-ide-state-inert
                                     (format "pi %d%s in %s" (plist-get p :pid)
                                             (let ((ns (alist-get 'pi_ns (plist-get p :fields))))
                                               (if ns (format " (%s)" ns) ""))
                                             (plist-get p :cwd)))
                                    p))
                            all))
             (picked (cdr (assoc (completing-read "Send to which pi? " names nil t) names))))
        (if (null picked)
            (cons nil "(pi-ide) no pi picked: nothing sent")
          (setq pi-ide-send--chosen (plist-get picked :key))
          picked))))))

(defun pi-ide-send-run (what now prompt)
  "Send WHAT (see `pi-ide-send-item') to pi with PROMPT; at once when NOW.
Returns the one line told to the user, or nil when the send was written."
  (let ((said
         (condition-case err
             (pcase-let ((`(,item . ,why) (pi-ide-send-item what)))
               (if (null item)
                   why
                 (let ((pi (pi-ide-send--which-pi)))
                   (if (null (car pi))
                       (cdr pi)
                     (let ((id (pi-ide-send-write pi item (if now "now" "draft") (or prompt ""))))
                       (and (consp id) (cdr id)))))))
           (quit "(pi-ide) nothing sent")
           (error (format "(pi-ide) send failed: %s" (error-message-string err))))))
    (when said (message "%s" said))
    said))

(defun pi-ide-send-answered (msg)
  "If pi's message MSG answers one of our sends, say what became of it."
  (let* ((sent (alist-get 'sent msg))
         (id (and (consp sent) (alist-get 'id sent))))
    (when (and (stringp id) (member id pi-ide-send--pending)
               (eql (alist-get 'editor_pid sent) (emacs-pid)))
      (setq pi-ide-send--pending (delete id pi-ide-send--pending))
      (let* ((fate (let ((f (alist-get 'fate sent))) (if (stringp f) f "?")))
             (done (cdr (assoc fate pi-ide-send--fates)))
             (reason (alist-get 'reason sent)))
        (when (equal (plist-get pi-ide-send--last :id) id)
          (setq pi-ide-send--last (plist-put pi-ide-send--last :fate fate)))
        (message "%s"
                 (pi-ide-state-inert
                  (cond
                   (done (format "(pi-ide) %s %s" (or (plist-get pi-ide-send--last :kind) "send") done))
                   ((equal fate "excluded") "(pi-ide) not sent: the file is excluded by pi's ignore rules")
                   (t (concat "(pi-ide) pi refused the send: " (if (stringp reason) reason fate))))))))))

(defun pi-ide-send-summary-lines ()
  "Lines for `pi-ide-status': the last send and its fate."
  (let ((l pi-ide-send--last))
    (and l (list (pi-ide-state-inert
                  (format "last send: %s of %s to pi %d: %s" (plist-get l :kind)
                          (abbreviate-file-name (plist-get l :file)) (plist-get l :pi)
                          (or (plist-get l :fate) "no answer yet")))))))

(provide 'pi-ide-send)
;;; pi-ide-send.el ends here
