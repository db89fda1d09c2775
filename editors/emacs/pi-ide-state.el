;;; pi-ide-state.el --- Pure builders for pi-ide's state file -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The pi-ide-context authors
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Data in, data out: a snapshot of the editor (a plist) becomes the protocol's payload (an alist for
;; `json-serialize'), and the payload becomes the file's text; with them the rules of what the file lists
;; (the inbox's `files' reports, diagnostics).  Nothing here reads a buffer, a window or the file system,
;; so every rule can be tested with literal data (ERT tables in test/emacs/pi-ide-state-tests.el).  The
;; rules are PROTOCOL.md's; the Neovim client (editors/nvim/lua/pi-ide/state.lua, selection.lua,
;; inbox.lua) is the reference for the same situation.  The protocol's limits and the validation of pi's
;; files are in pi-ide-protocol.el; the pure rules of each feature that acts on pi's files in
;; pi-ide-inbox-rules.el, pi-ide-approval-rules.el and pi-ide-review-rules.el, beside its UI file.

;;; Code:

(require 'cl-lib)
(require 'pi-ide-protocol)

;;;; Languages

(defconst pi-ide-state-languages
  '((python-mode . "python") (python-ts-mode . "python")
    (typescript-mode . "typescript") (typescript-ts-mode . "typescript")
    (tsx-ts-mode . "typescriptreact")
    (js-mode . "javascript") (js2-mode . "javascript") (js-ts-mode . "javascript")
    (javascript-mode . "javascript") (rjsx-mode . "javascriptreact") (js-jsx-mode . "javascriptreact")
    (lua-mode . "lua") (lua-ts-mode . "lua")
    (json-mode . "json") (js-json-mode . "json") (json-ts-mode . "json")
    (markdown-mode . "markdown") (gfm-mode . "markdown")
    (rust-mode . "rust") (rust-ts-mode . "rust") (rustic-mode . "rust")
    (go-mode . "go") (go-ts-mode . "go")
    (c-mode . "c") (c-ts-mode . "c") (c++-mode . "cpp") (c++-ts-mode . "cpp")
    (csharp-mode . "csharp") (java-mode . "java") (java-ts-mode . "java")
    (kotlin-mode . "kotlin") (swift-mode . "swift")
    (ruby-mode . "ruby") (ruby-ts-mode . "ruby") (enh-ruby-mode . "ruby")
    (php-mode . "php")
    (html-mode . "html") (mhtml-mode . "html") (web-mode . "html")
    (css-mode . "css") (css-ts-mode . "css") (scss-mode . "scss") (less-css-mode . "less")
    (yaml-mode . "yaml") (yaml-ts-mode . "yaml")
    (toml-mode . "toml") (conf-toml-mode . "toml") (toml-ts-mode . "toml")
    (sh-mode . "sh") (bash-ts-mode . "bash") (fish-mode . "fish")
    (powershell-mode . "powershell") (bat-mode . "bat")
    (vimrc-mode . "vim") (sql-mode . "sql")
    (makefile-mode . "make") (makefile-gmake-mode . "make") (makefile-bsdmake-mode . "make")
    (cmake-mode . "cmake") (cmake-ts-mode . "cmake")
    (elixir-mode . "elixir") (elixir-ts-mode . "elixir") (erlang-mode . "erlang")
    (haskell-mode . "haskell") (tuareg-mode . "ocaml") (caml-mode . "ocaml")
    (scala-mode . "scala") (clojure-mode . "clojure") (clojurescript-mode . "clojure")
    (dart-mode . "dart") (zig-mode . "zig") (nix-mode . "nix") (julia-mode . "julia")
    (perl-mode . "perl") (cperl-mode . "perl")
    (vue-mode . "vue") (svelte-mode . "svelte")
    (latex-mode . "tex") (LaTeX-mode . "tex") (tex-mode . "tex") (plain-tex-mode . "tex")
    (bibtex-mode . "bibtex") (graphql-mode . "graphql") (protobuf-mode . "proto")
    (terraform-mode . "terraform") (hcl-mode . "hcl")
    (nxml-mode . "xml") (xml-mode . "xml") (sgml-mode . "xml")
    (diff-mode . "diff") (fsharp-mode . "fsharp") (objc-mode . "objc") (d-mode . "d")
    (elm-mode . "elm") (nim-mode . "nim") (fortran-mode . "fortran") (f90-mode . "fortran")
    (dockerfile-mode . "dockerfile") (dockerfile-ts-mode . "dockerfile")
    (emacs-lisp-mode . "lisp") (lisp-interaction-mode . "lisp") (lisp-mode . "lisp")
    (scheme-mode . "scheme") (text-mode . "text") (org-mode . "org")
    (git-commit-mode . "gitcommit") (conf-unix-mode . "conf") (conf-mode . "conf"))
  "Language ids by major mode, as the other clients send them for the same files.
Emacs Lisp is \"lisp\", as Neovim's filetype for .el files.  A mode not
listed here is looked up through its parents, then sent as null.")

(defun pi-ide-state-language (mode)
  "The protocol's language id for major MODE, or nil.
Follows `derived-mode-parent' so a mode derived from a listed one (a user's own
`my-python-mode') gets its parent's id."
  (let ((m mode) (id nil) (seen 0))
    (while (and m (not id) (< seen 20))
      (setq id (cdr (assq m pi-ide-state-languages))
            m (get m 'derived-mode-parent)
            seen (1+ seen)))
    id))

;;;; Argv

(defconst pi-ide-state-plumbing-args
  '("--daemon" "--fg-daemon" "--bg-daemon")
  "Launch arguments that start a server rather than say what the user works on.
Their \"=NAME\" forms are plumbing too.")

(defun pi-ide-state-filter-argv (args)
  "The protocol's `argv': ARGS (without the program name) less daemon plumbing."
  (cl-remove-if (lambda (a)
                  (cl-some (lambda (p) (or (equal a p) (string-prefix-p (concat p "=") a)))
                           pi-ide-state-plumbing-args))
                args))

;;;; Text that JSON can carry

(defconst pi-ide-state--unencodable
  ;; Written as a complement: a range of raw-byte characters does not match them in a multibyte string.
  (rx (not (any (0 . #xD7FF) (#xE000 . #x10FFFF))))
  "Characters `json-serialize' refuses: surrogates, raw bytes of undecodable files.")

(defun pi-ide-state-sanitize (s)
  "S with characters JSON cannot carry (raw bytes, surrogates) replaced by U+FFFD."
  (if (string-match-p pi-ide-state--unencodable s)
      (replace-regexp-in-string pi-ide-state--unencodable "\uFFFD" s t t)
    s))

(defun pi-ide-state-encoded-size (s)
  "Bytes S takes inside a JSON string from `json-serialize', quotes excluded."
  (- (string-bytes (json-serialize s)) 2))

(defun pi-ide-state-fit (s max)
  "S cut at a character boundary so its JSON encoding takes at most MAX bytes.
Returns (TEXT . CUT).  Escaping grows text (a few percent for source code, six
times for control bytes), so a cap on the raw text does not bound the file:
the cut is found by bisection over the encoded size."
  (if (<= (pi-ide-state-encoded-size s) max)
      (cons s nil)
    ;; Each character encodes to at least one byte: MAX characters is an upper bound.
    (let ((lo 0) (hi (min (length s) max)))
      (while (< lo hi)
        (let ((mid (/ (+ lo hi 1) 2)))
          (if (<= (pi-ide-state-encoded-size (substring s 0 mid)) max)
              (setq lo mid)
            (setq hi (1- mid)))))
      (cons (substring s 0 lo) t))))

;;;; The payload

(defun pi-ide-state-selection (sel max-bytes)
  "The protocol's selection object from SEL, a plist, or :null.
SEL has :start and :end (each (LINE . BYTE-COLUMN), 1-based, inclusive), :text
\(already whole lines for a multi-line selection), :read-cut (the text was
already cut while reading it) and :at (unix seconds, or nil when unknown).
The text is cut to MAX-BYTES once encoded, with `truncated' set."
  (if (null sel)
      :null
    (let* ((fitted (pi-ide-state-fit (pi-ide-state-sanitize (plist-get sel :text)) max-bytes))
           (cut (or (cdr fitted) (plist-get sel :read-cut)))
           (start (plist-get sel :start))
           (end (plist-get sel :end)))
      `((start . ((line . ,(car start)) (column . ,(cdr start))))
        (end . ((line . ,(car end)) (column . ,(cdr end))))
        (text . ,(car fitted))
        (selected_at . ,(or (plist-get sel :at) :null))
        ,@(and cut '((truncated . t)))))))

(defun pi-ide-state-build (snap)
  "The protocol v0.2 payload (without `timestamp') from SNAP, a plist.
SNAP holds :pid :pid-ns (or nil) :cwd :argv :file (absolute path or nil)
:name :language (or nil) :line :column (1-based, byte column) :selection
\(see `pi-ide-state-selection') :modified :lines-total
:max-selection-bytes."
  (let ((file (plist-get snap :file)))
    `((pid . ,(plist-get snap :pid))
      ;; v0.5: the pid namespace `pid' is in, left out where /proc does not say.
      ,@(and (plist-get snap :pid-ns) `((pid_ns . ,(plist-get snap :pid-ns))))
      (cwd . ,(pi-ide-state-sanitize (plist-get snap :cwd)))
      (app . "emacs")
      (argv . ,(vconcat (mapcar #'pi-ide-state-sanitize (plist-get snap :argv))))
      (active_buffer
       . ((file . ,(if file (pi-ide-state-sanitize file) :null))
          (name . ,(pi-ide-state-sanitize (plist-get snap :name)))
          (language . ,(or (plist-get snap :language) :null))
          (cursor . ((line . ,(plist-get snap :line)) (column . ,(plist-get snap :column))))
          (selection . ,(pi-ide-state-selection
                         (plist-get snap :selection)
                         (or (plist-get snap :max-selection-bytes) pi-ide-state-max-selection-bytes)))
          (modified . ,(if (plist-get snap :modified) t :false))
          (lines_total . ,(plist-get snap :lines-total)))))))

(defun pi-ide-state--selection-cell (payload)
  "The cons cell holding PAYLOAD's selection."
  (assq 'selection (alist-get 'active_buffer payload)))

(defun pi-ide-state-encode (payload timestamp)
  "Encode PAYLOAD at TIMESTAMP (unix seconds).
Returns (CONTENT . TEXT): CONTENT is everything but `timestamp' (compared to
skip writes that would change nothing), TEXT the file with `timestamp' spliced
in front.  When the file would exceed `pi-ide-state-max-file-bytes' the
selection is cut further, then the oldest `files' reports are dropped; when
even that cannot help, returns (nil . WHY): a file pi refuses would make this
editor vanish from pi."
  (let* ((content (json-serialize payload))
         (prefix (format "{\"timestamp\":%.3f," timestamp))
         (over (lambda () (- (+ (string-bytes prefix) (string-bytes content) -1) pi-ide-state-max-file-bytes)))
         (cell (pi-ide-state--selection-cell payload))
         (sel (cdr cell)))
    (when (and (> (funcall over) 0) (consp sel) (not (equal (alist-get 'text sel) "")))
      (let* ((text (alist-get 'text sel))
             ;; 32 bytes of slack for "truncated":true when it was not there yet.
             (room (max 0 (- (pi-ide-state-encoded-size text) (funcall over) 32))))
        (setf (alist-get 'text (cdr cell)) (car (pi-ide-state-fit text room)))
        (setf (alist-get 'truncated (cdr cell)) t)
        (setq content (json-serialize payload))))
    ;; Many reports with many diagnostics (pi writing 200 files at once): the oldest go first, pi has most
    ;; likely read them already.  Each report is measured once, so one more encode makes it fit.
    (let* ((files-cell (assq 'files payload))
           (files (cdr files-cell)))
      (when (and (> (funcall over) 0) (vectorp files) (> (length files) 0))
        (let ((excess (funcall over)) (drop 0))
          (while (and (> excess 0) (< drop (length files)))
            (setq excess (- excess (string-bytes (json-serialize (aref files drop))) 1)
                  drop (1+ drop)))
          (if (< drop (length files))
              (setcdr files-cell (substring files drop))
            (setq payload (assq-delete-all 'files payload)))
          (setq content (json-serialize payload)))))
    (if (> (funcall over) 0)
        (cons nil (format "the state would take %d bytes, over pi's limit of %d; not written"
                          (+ (string-bytes prefix) (string-bytes content) -1) pi-ide-state-max-file-bytes))
      (cons content (concat prefix (substring content 1))))))

;;;; Selections from a region

(defun pi-ide-state-region-selection (lines beg-line beg-col end-line end-col at max-bytes)
  "A selection plist (see `pi-ide-state-selection') for a region, or nil.
LINES is a function (FIRST LAST) returning those lines' text (1-based,
inclusive) as a list.  The region runs from BEG-LINE/BEG-COL to
END-LINE/END-COL, both 0-based character columns, the end exclusive, as Emacs
positions are.  AT is when the user made it.  MAX-BYTES bounds the raw text
read.

The rules are the Neovim client's (PROTOCOL.md, \"The selection and its
clock\"): a single-line region is its exact character range; a multi-line
one is its whole lines, the columns marking where it starts and ends on its
edge lines; columns are 1-based UTF-8 byte columns, the end column on the
last byte of the last character.  A region ending at the start of a line
ends on the line before (its newline was the last character selected).  An
empty region selects nothing."
  (when (and (= end-col 0) (> end-line beg-line))
    (setq end-line (1- end-line)
          end-col (1+ (length (car (funcall lines end-line end-line))))))
  (unless (and (= beg-line end-line) (>= beg-col end-col))
    (let* ((first (or (car (funcall lines beg-line beg-line)) ""))
           (last (if (= beg-line end-line) first (or (car (funcall lines end-line end-line)) "")))
           (byte-col (lambda (line col) (1+ (string-bytes (substring line 0 (min col (length line)))))))
           ;; The last byte of the last character; past the line's end (its newline) the last byte of the
           ;; line, and column 1 on an empty line (columns are 1-based).
           (end-byte (lambda (line col)
                       (max 1 (if (< col (length line))
                                  (+ (funcall byte-col line col) (string-bytes (string (aref line col))) -1)
                                (string-bytes line)))))
           (start (cons beg-line (funcall byte-col first beg-col)))
           (end (cons end-line (funcall end-byte last (1- end-col)))))
      (if (= beg-line end-line)
          (let ((raw (substring first (min beg-col (length first)) (min end-col (length first)))))
            ;; Only a newline selected: no text of the line, nothing to send.
            (unless (equal raw "")
              (list :start start :end end :text raw :at at)))
        (let ((parts nil) (total 0) (cut nil) (n beg-line))
          ;; Whole lines, read in chunks and only up to MAX-BYTES: a huge region costs about that much work.
          (while (and (<= n end-line) (not cut))
            (dolist (l (funcall lines n (min end-line (+ n 999))))
              (unless cut
                (let ((sep (if parts 1 0)))
                  (if (> (+ total sep (string-bytes l)) max-bytes)
                      (let ((room (- max-bytes total sep)))
                        (when (> room 0)
                          (push (substring l 0 (min (length l) room)) parts))
                        (setq cut t))
                    (push l parts)
                    (setq total (+ total sep (string-bytes l)))))))
            (setq n (+ n 1000)))
          (list :start start :end end :text (mapconcat #'identity (nreverse parts) "\n")
                :read-cut cut :at at))))))

;;;; The inbox's reports (protocol v0.3)

(defun pi-ide-state-retain-reports (reports listed)
  "Which of REPORTS (newest last) to keep.
Each pi's newest `pi-ide-state-kept-reports', and those on a change (file
and seq) that pi's newest message lists: LISTED is an alist from a pi's
identity (`pi-ide-state-key-of-record') to its `changed' entries (alists
with `file' and `seq').  At most `pi-ide-state-max-reports', the newest.  No
clock (PROTOCOL.md `files', v0.5): a pi slow to read finds every answer it
lists, and a second pi's reports never push out the first's."
  (let ((per-pi nil) (kept nil) (n-kept 0))
    (dolist (r (reverse reports))
      (when (< n-kept pi-ide-state-max-reports)
        (let* ((key (or (pi-ide-state-key-of-record r) 0))
               (n (1+ (or (alist-get key per-pi) 0))))
          (setf (alist-get key per-pi) n)
          (when (or (<= n pi-ide-state-kept-reports)
                    (let ((file (alist-get 'file r)) (seq (alist-get 'seq r)))
                      (cl-some (lambda (c) (and (equal (alist-get 'file c) file) (eql (alist-get 'seq c) seq)))
                               (alist-get key listed))))
            (push r kept)
            (setq n-kept (1+ n-kept))))))
    kept))

(defun pi-ide-state-remember-report (reports report listed)
  "REPORTS (newest last) with REPORT added, then retained by LISTED.
REPORT replaces this pi's earlier report on the same file (another pi's
stays); see `pi-ide-state-retain-reports'."
  (let ((file (alist-get 'file report))
        (pi-pid (pi-ide-state-key-of-record report)))
    (pi-ide-state-retain-reports
     (append (cl-remove-if (lambda (r) (and (equal (alist-get 'file r) file)
                                            (eql (pi-ide-state-key-of-record r) pi-pid)))
                           reports)
             (list report))
     listed)))

;;;; Diagnostics

(defconst pi-ide-state--severity-rank '(("error" . 0) ("warning" . 1) ("info" . 2) ("hint" . 3)))

(defun pi-ide-state-diagnostics (items version)
  "The protocol's diagnostics object for ITEMS at buffer VERSION.
ITEMS are alists with severity line column end_line end_column message source
code.  Errors first, then by line and column; at most
`pi-ide-state-max-diagnostics' listed, messages cut to
`pi-ide-state-max-diagnostic-message' characters; `total' counts them all.
Exact duplicates (every field equal, source and code included: two
backends or checkers reporting one problem under one name) are listed and
counted once, as PROTOCOL.md asks."
  (let* ((items (delete-dups (copy-sequence items)))
         (rank (lambda (d) (or (cdr (assoc (alist-get 'severity d) pi-ide-state--severity-rank)) 4)))
         (sorted (sort (copy-sequence items)
                       (lambda (a b)
                         (let ((ra (funcall rank a)) (rb (funcall rank b)))
                           (if (/= ra rb) (< ra rb)
                             (if (/= (alist-get 'line a) (alist-get 'line b))
                                 (< (alist-get 'line a) (alist-get 'line b))
                               (< (alist-get 'column a) (alist-get 'column b))))))))
         (listed (cl-subseq sorted 0 (min (length sorted) pi-ide-state-max-diagnostics))))
    `((version . ,version)
      (total . ,(length items))
      (items . ,(vconcat
                 (mapcar (lambda (d)
                           (let ((m (pi-ide-state-sanitize (alist-get 'message d))))
                             (cons (cons 'message (if (> (length m) pi-ide-state-max-diagnostic-message)
                                                      (substring m 0 pi-ide-state-max-diagnostic-message)
                                                    m))
                                   (assq-delete-all 'message (copy-sequence d)))))
                         listed))))))

(provide 'pi-ide-state)
;;; pi-ide-state.el ends here
