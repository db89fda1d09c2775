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
;; files are in pi-ide-protocol.el.

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
SNAP holds :pid :cwd :argv :file (absolute path or nil) :name :language (or
nil) :line :column (1-based, byte column) :selection (see
`pi-ide-state-selection') :modified :lines-total :max-selection-bytes."
  (let ((file (plist-get snap :file)))
    `((pid . ,(plist-get snap :pid))
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

;;;; pi's messages: reloads and reports (protocol v0.3)

(defun pi-ide-state-reload-verdict (was now)
  "May a buffer be re-read from its path?  \"reload\", \"gone\" or \"refused\".
WAS is what the path was when the buffer was read (a plist :type :real, or
nil: read before the client saw it), NOW what it is (a plist :type :real
:resolves-to, or nil: gone).  Types are `file', `link' and others.  The path
must still be what it was: a regular file then and now, or a symlink then
and now that resolves to the same real path, a regular file; without a
record a symlink is refused (PROTOCOL.md, v0.3)."
  (cond
   ((null now) "gone")
   ((or (not (eq (plist-get now :resolves-to) 'file))
        (not (memq (plist-get now :type) '(file link))))
    "refused")
   ((null was) (if (eq (plist-get now :type) 'file) "reload" "refused"))
   ((or (not (eq (plist-get was :type) (plist-get now :type)))
        (and (eq (plist-get now :type) 'link)
             (not (equal (plist-get was :real) (plist-get now :real)))))
    "refused")
   (t "reload")))

(defun pi-ide-state-newest-changes (changed handled)
  "The newest change per file in CHANGED with a seq above HANDLED, in seq order."
  (let ((newest nil))
    (dolist (c changed)
      (let* ((file (alist-get 'file c)) (old (assoc file newest)))
        (when (and (> (alist-get 'seq c) handled)
                   (or (null old) (< (alist-get 'seq (cdr old)) (alist-get 'seq c))))
          (setq newest (cons (cons file c) (assoc-delete-all file newest))))))
    (sort (mapcar #'cdr newest) (lambda (a b) (< (alist-get 'seq a) (alist-get 'seq b))))))

(defun pi-ide-state-retain-reports (reports now)
  "Which of REPORTS (newest last, each with `at', when it was made) to keep at NOW.
Each pi's newest `pi-ide-state-kept-reports', and any younger than
`pi-ide-state-report-hold' seconds; at most `pi-ide-state-max-reports', the
newest.  A second pi's reports never push out the first's newest."
  (let ((per-pi nil) (kept nil))
    (dolist (r (reverse reports))
      (let* ((pi-pid (or (alist-get 'pi_pid r) 0))
             (n (1+ (or (alist-get pi-pid per-pi) 0))))
        (setf (alist-get pi-pid per-pi) n)
        (when (or (<= n pi-ide-state-kept-reports)
                  (let ((at (alist-get 'at r))) (and (numberp at) (< (- now at) pi-ide-state-report-hold))))
          (push r kept))))
    (last kept pi-ide-state-max-reports)))

(defun pi-ide-state-remember-report (reports report now)
  "REPORTS (newest last) with REPORT added at NOW, then retained.
REPORT replaces this pi's earlier report on the same file (another pi's
stays); `at' is set to NOW; see `pi-ide-state-retain-reports'."
  (let ((file (alist-get 'file report))
        (pi-pid (alist-get 'pi_pid report)))
    (pi-ide-state-retain-reports
     (append (cl-remove-if (lambda (r) (and (equal (alist-get 'file r) file) (eql (alist-get 'pi_pid r) pi-pid)))
                           reports)
             (list (cons (cons 'at now) (assq-delete-all 'at (copy-sequence report)))))
     now)))

;;;; Approval (protocol v0.4)

(defconst pi-ide-state-max-proposed-lines 20
  "Most proposed lines of one hunk shown in the file's buffer.")

(defun pi-ide-state-lines-at-p (lines at expected)
  "Does the text of LINES hold EXPECTED (a list of lines) from line AT on?
LINES is a function (FIRST LAST) returning those lines (1-based, inclusive)
as a list, fewer past the end.  No lines are always there."
  (or (null expected)
      (and (>= at 1) (equal (funcall lines at (+ at (length expected) -1)) expected))))

(defun pi-ide-state-hunks-match-p (lines hunks)
  "Do HUNKS' old lines stand where they say in the text of LINES?
LINES is as in `pi-ide-state-lines-at-p'.  Then the buffer holds the text
pi read, and its marks fall on the right lines."
  (cl-every (lambda (h) (pi-ide-state-lines-at-p lines (alist-get 'old_start h) (alist-get 'old_text h)))
            hunks))

(defun pi-ide-state-proposed-lines (new-text)
  "The proposed lines NEW-TEXT as shown in the buffer: \"+ \" each, capped.
At most `pi-ide-state-max-proposed-lines', then one line saying how many more."
  (let ((n (length new-text)) (max pi-ide-state-max-proposed-lines))
    (append (cl-loop for l in new-text repeat max collect (concat "+ " (pi-ide-state-inert l)))
            (and (> n max) (list (format "+ ... %d more lines" (- n max)))))))

(defun pi-ide-state-proposal-diff (request)
  "REQUEST (see `pi-ide-state-validate-approval') as the lines of a unified diff."
  (let ((file (pi-ide-state-inert (plist-get request :file))))
    (append (list (concat "--- " file) (concat "+++ " file " (pi's proposal)"))
            (and (plist-get request :note) (list (format "(no preview: %s)" (plist-get request :note))))
            (cl-loop for h in (plist-get request :hunks)
                     append (append (list (format "@@ -%d,%d +%d,%d @@"
                                                  (alist-get 'old_start h) (length (alist-get 'old_text h))
                                                  (alist-get 'new_start h) (length (alist-get 'new_text h))))
                                    (mapcar (lambda (l) (concat "-" l)) (alist-get 'old_text h))
                                    (mapcar (lambda (l) (concat "+" l)) (alist-get 'new_text h)))))))

(defun pi-ide-state-remember-decision (decisions pi-pid id decision)
  "DECISIONS (newest last) with PI-PID's request ID answered DECISION.
At most `pi-ide-state-max-decisions', the newest."
  (last (append decisions (list `((pi_pid . ,pi-pid) (id . ,id) (decision . ,decision))))
        pi-ide-state-max-decisions))

(defun pi-ide-state-decided-p (decisions pi-pid id)
  "Did DECISIONS already answer PI-PID's request ID?"
  (cl-some (lambda (d) (and (eql (alist-get 'pi_pid d) pi-pid) (equal (alist-get 'id d) id))) decisions))

(defun pi-ide-state-current-request (requests)
  "The request of REQUESTS (plists) shown first: the earliest expiry."
  (car (sort (copy-sequence requests) (lambda (a b) (< (plist-get a :expires) (plist-get b :expires))))))

(defun pi-ide-state-describe-request (request)
  "(WHAT . SIZE) of REQUEST in words: \"edit\"/\"write\"/\"creation\" and \"2 hunks\"."
  (let ((n (plist-get request :hunks-total)))
    (cons (if (plist-get request :created) "creation" (pi-ide-state-inert (plist-get request :tool)))
          (if (plist-get request :note)
              (format "(%s)" (pi-ide-state-inert (plist-get request :note)))
            (format "%d %s" n (if (= n 1) "hunk" "hunks"))))))

;;;; pi's change set, for review (protocol v0.4)

(defun pi-ide-state-newest-entry (change-sets file)
  "Return the newest change of FILE in the change set list CHANGE-SETS, or nil.
That is the change of the newest run that changed FILE.
CHANGE-SETS is an alist: pi pid -> runs (see `pi-ide-state-validate-review').
Returns a plist :pid :run :file :baseline :hunks."
  (let ((best nil))
    (dolist (set change-sets)
      (dolist (run (cdr set))
        (dolist (f (plist-get run :files))
          (when (and (equal (plist-get f :file) file)
                     (or (null best) (> (plist-get run :run) (plist-get best :run))))
            (setq best (append (list :pid (car set) :run (plist-get run :run)) f))))))
    best))

(defun pi-ide-state-text-lines (text)
  "TEXT's lines as pi counts them: without terminators, none for \"\"."
  (let ((lines (split-string text "\n")))
    (if (equal (car (last lines)) "") (butlast lines) lines)))

(defun pi-ide-state-deletion-at-p (lines last-line baseline hunk &optional start)
  "Does the text of LINES stand around deletion HUNK as pi left it?
LINES is as in `pi-ide-state-lines-at-p', LAST-LINE its number of lines and
BASELINE the vector of the baseline's lines.  The line that followed the
deleted lines in the baseline must be at START (default the hunk's
new_start); for lines deleted at the end, the text ends at START - 1 with
the line that came before them.  Then the mark of the deletion falls where
pi deleted."
  (let* ((start (or start (alist-get 'new_start hunk)))
         (after (+ (alist-get 'old_start hunk) (length (alist-get 'old_text hunk))))
         (before (1- (alist-get 'old_start hunk))))
    (and (> last-line 0) (>= start 1)
         (if (<= after (length baseline))
             (pi-ide-state-lines-at-p lines start (list (aref baseline (1- after))))
           (and (= last-line (1- start))
                (or (< before 1)
                    (and (<= before (length baseline))
                         (pi-ide-state-lines-at-p lines last-line (list (aref baseline (1- before)))))))))))

(defun pi-ide-state-hunk-kind (hunk)
  "What HUNK did: `added' (no old lines), `deleted' (no new lines) or `changed'."
  (cond ((null (alist-get 'old_text hunk)) 'added)
        ((null (alist-get 'new_text hunk)) 'deleted)
        (t 'changed)))

(defun pi-ide-state-remember-revert (reverted entry hunk line)
  "REVERTED (newest last) with HUNK of ENTRY reverted at buffer LINE.
ENTRY is from `pi-ide-state-newest-entry'.  At most
`pi-ide-state-max-reverted', the newest.  A hunk reverted again (after an
undo of its revert) is listed once, as the newest: keyed by pi_pid, run and
id, as pi and every client key a revert (test/fixtures/revert-key.ts)."
  (let ((key (list (plist-get entry :pid) (plist-get entry :run) (alist-get 'id hunk))))
    (last (append (cl-remove key reverted
                             :test #'equal
                             :key (lambda (r) (list (alist-get 'pi_pid r) (alist-get 'run r) (alist-get 'id r))))
                  (list `((pi_pid . ,(plist-get entry :pid)) (run . ,(plist-get entry :run))
                          (id . ,(alist-get 'id hunk)) (file . ,(plist-get entry :file))
                          (line . ,line) (lines . ,(length (alist-get 'new_text hunk))))))
          pi-ide-state-max-reverted)))

;; Written as `compilation-mode' reads a location: RET on a line visits it, when the user asks.
(defun pi-ide-state-hunk-list (change-sets)
  "The lines listing pi's hunks of its newest run in CHANGE-SETS.
CHANGE-SETS is as in `pi-ide-state-newest-entry'.  Each line is
\"FILE:LINE: pi +ADDED -REMOVED  FIRST LINE\", in pi's order."
  (let ((newest nil))
    (dolist (set change-sets)
      (let ((run (car (last (cdr set)))))
        (when (and run (or (null newest) (> (plist-get run :run) (plist-get newest :run))))
          (setq newest run))))
    (cl-loop for f in (plist-get newest :files)
             append (cl-loop for h in (plist-get f :hunks)
                             for new = (alist-get 'new_text h)
                             for old = (alist-get 'old_text h)
                             collect (format "%s:%d: pi +%d -%d  %s" (pi-ide-state-inert (plist-get f :file))
                                             (max 1 (alist-get 'new_start h)) (length new) (length old)
                                             (pi-ide-state-inert (or (car new) (car old) "")))))))

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
