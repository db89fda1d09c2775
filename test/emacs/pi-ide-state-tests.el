;;; pi-ide-state-tests.el --- ERT tables for pi-ide's pure builders -*- lexical-binding: t; -*-

;;; Commentary:

;; Run by test/emacs/batch.test.ts in `emacs --batch'.  Tables of cases, one `ert-deftest' per rule, for
;; pi-ide-state.el, pi-ide-protocol.el and the inbox's, approval's and review's rules files; the
;; expected values are the Neovim client's for the same situation (editors/nvim/lua/pi-ide/state.lua,
;; selection.lua, inbox.lua) and PROTOCOL.md's.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'pi-ide-state)
(require 'pi-ide-inbox-rules)
(require 'pi-ide-approval-rules)
(require 'pi-ide-review-rules)

(defun pi-ide-tests--lines (text)
  "A line reader over TEXT for `pi-ide-state-region-selection'."
  (let ((lines (split-string text "\n")))
    (lambda (first last)
      (cl-subseq lines (1- first) (min last (length lines))))))

(ert-deftest pi-ide-state-test-pid-of-name ()
  "Canonical decimal pids only, the table of test/fixtures/state-dir-cases.ts."
  (dolist (c '(("42.json" nil 42) ("1.json" nil 1) ("2147483647.json" nil 2147483647)
               ("2147483648.json" nil nil) ("042.json" nil nil) ("0.json" nil nil) ("+1.json" nil nil)
               ("-1.json" nil nil) ("42.json.tmp" nil nil) ("42.JSON" nil nil) ("1e3.json" nil nil)
               ("12a.json" nil nil) (".json" nil nil) (" 42.json" nil nil) ("99999999999.json" nil nil)
               ("pi-42.json" "pi-" 42) ("pi-042.json" "pi-" nil) ("pi-.json" "pi-" nil)
               ("PI-42.json" "pi-" nil) ("pi-pi-42.json" "pi-" nil) ("42.json" "pi-" nil)
               ("pi-42.json\n" "pi-" nil)))
    (should (equal (list (car c) (pi-ide-state-pid-of-name (nth 0 c) (nth 1 c)))
                   (list (car c) (nth 2 c))))))

(ert-deftest pi-ide-state-test-language ()
  "Major modes map to the ids the other clients send; derived modes inherit; unknown is nil."
  (define-derived-mode pi-ide-tests-my-python-mode python-mode "MyPy")
  (dolist (c '((python-mode "python") (typescript-mode "typescript") (tsx-ts-mode "typescriptreact")
               (js-mode "javascript") (lua-mode "lua") (js-json-mode "json") (json-mode "json")
               (markdown-mode "markdown") (emacs-lisp-mode "lisp") (sh-mode "sh") (c++-mode "cpp")
               (rust-mode "rust") (go-mode "go") (yaml-mode "yaml") (pi-ide-tests-my-python-mode "python")
               (fundamental-mode nil) (no-such-mode nil)))
    (should (equal (list (car c) (pi-ide-state-language (car c))) c))))

(ert-deftest pi-ide-state-test-filter-argv ()
  "Daemon plumbing goes, everything the user typed stays."
  (dolist (c '((("src/main.ts") ("src/main.ts"))
               (("--daemon") ())
               (("--daemon=work" "-nw" "a.txt") ("-nw" "a.txt"))
               (("--fg-daemon" "--bg-daemon=x" "--eval" "(foo)") ("--eval" "(foo)"))
               (("--daemonic") ("--daemonic"))))
    (should (equal (pi-ide-state-filter-argv (car c)) (cadr c)))))

(ert-deftest pi-ide-state-test-fit ()
  "The encoded size is capped at a character boundary, escaping included."
  (dolist (c '(("abc" 10 "abc" nil)
               ("abcdef" 3 "abc" t)
               ("a\"b" 2 "a" t)                    ; \" takes 2 bytes
               ("\u0001\u0001" 6 "\u0001" t)       ; \u0001 takes 6
               ("éé" 3 "é" t)                      ; 2 bytes each, never half of one
               ("日本語" 6 "日本" t)
               ("" 0 "" nil)))
    (let ((got (pi-ide-state-fit (nth 0 c) (nth 1 c))))
      (should (equal (list (nth 0 c) (car got) (cdr got)) (list (nth 0 c) (nth 2 c) (nth 3 c))))
      (should (<= (pi-ide-state-encoded-size (car got)) (nth 1 c))))))

(ert-deftest pi-ide-state-test-fit-random ()
  "Seeded: the cut is the longest prefix within the cap (oracle: a linear scan)."
  (let ((alphabet (vconcat "ab\"\\\n\t/" (list ?é ?日 ?\u0001 ?\U0001F600))))
    (random "pi-ide")
    (dotimes (_ 200)
      (let* ((s (apply #'string (cl-loop repeat (random 30) collect (aref alphabet (random (length alphabet))))))
             (max (random 60))
             (got (car (pi-ide-state-fit s max)))
             (oracle (cl-loop for n downfrom (length s) to 0
                              when (<= (pi-ide-state-encoded-size (substring s 0 n)) max)
                              return (substring s 0 n))))
        (should (equal (list s max got) (list s max oracle)))))))

(ert-deftest pi-ide-state-test-sanitize ()
  "Raw bytes and surrogates become U+FFFD so `json-serialize' never fails."
  (dolist (c `(("plain" "plain")
               (,(string ?a (unibyte-char-to-multibyte #xC8) ?b) "a\uFFFDb")
               (,(string #xD800) "\uFFFD")))
    (should (equal (pi-ide-state-sanitize (car c)) (cadr c)))
    (should (stringp (json-serialize (pi-ide-state-sanitize (car c)))))))

(ert-deftest pi-ide-state-test-region-selection ()
  "Regions (0-based char columns, end exclusive) become the protocol's selection."
  (let ((text "def f():\n    return 1\n\nété ok\nlast"))
    (dolist (c '(;; name, beg-line beg-col end-line end-col -> start end text
                 ("one line, exact range" (1 4 1 5) (1 . 5) (1 . 5) "f")
                 ("one line, a word" (2 4 2 10) (2 . 5) (2 . 10) "return")
                 ("multi-line: whole lines, edge columns" (1 4 2 6) (1 . 5) (2 . 6) "def f():\n    return 1")
                 ("ending at a line start ends on the line before" (1 0 3 0) (1 . 1) (2 . 12) "def f():\n    return 1")
                 ("UTF-8 byte columns, last byte of the last char" (4 0 4 3) (4 . 1) (4 . 5) "été")
                 ("after a multibyte character" (4 1 4 2) (4 . 3) (4 . 3) "t")
                 ("an empty line inside" (2 0 4 2) (2 . 1) (4 . 3) "    return 1\n\nété ok")
                 ("ending on an empty line" (2 4 3 0) (2 . 5) (2 . 12) "return 1")
                 ("last line without newline" (5 0 5 4) (5 . 1) (5 . 4) "last")))
      (pcase-let* ((`(,name (,bl ,bc ,el ,ec) ,start ,end ,want) c)
                   (sel (pi-ide-state-region-selection (pi-ide-tests--lines text) bl bc el ec 99 1000)))
        (should (equal (list name (plist-get sel :start) (plist-get sel :end) (plist-get sel :text)
                             (plist-get sel :at))
                       (list name start end want 99)))))))

(ert-deftest pi-ide-state-test-region-none ()
  "An empty region, or one holding only a newline, selects nothing."
  (dolist (c '((1 3 1 3) (1 8 2 0)))
    (should-not (apply #'pi-ide-state-region-selection (pi-ide-tests--lines "def f():\nx") (append c '(1 100))))))

(ert-deftest pi-ide-state-test-region-read-cap ()
  "A huge multi-line region is read only up to the cap and marked cut."
  (let* ((text (mapconcat (lambda (i) (format "line %d" i)) (number-sequence 1 5000) "\n"))
         (sel (pi-ide-state-region-selection (pi-ide-tests--lines text) 1 0 5000 3 nil 100)))
    (should (<= (string-bytes (plist-get sel :text)) 100))
    (should (plist-get sel :read-cut))
    (should (equal (plist-get sel :end) '(5000 . 3)))))

(defun pi-ide-tests--snap (&rest overrides)
  "A snapshot plist with OVERRIDES."
  (let ((snap (list :pid 4242 :cwd "/home/u/p" :argv '("a.py") :file "/home/u/p/a.py" :name "a.py"
                    :language "python" :line 3 :column 5 :selection nil :modified nil :lines-total 10)))
    (while overrides
      (setq snap (plist-put snap (pop overrides) (pop overrides))))
    snap))

(ert-deftest pi-ide-state-test-build ()
  "The payload's shape: nulls, booleans, the selection object."
  (let* ((p (json-parse-string (json-serialize (pi-ide-state-build (pi-ide-tests--snap))) :object-type 'alist))
         (b (alist-get 'active_buffer p)))
    (should (equal (alist-get 'app p) "emacs"))
    (should (equal (alist-get 'argv p) ["a.py"]))
    (should (equal (alist-get 'selection b) :null))
    (should (equal (alist-get 'modified b) :false))
    (should (equal (alist-get 'cursor b) '((line . 3) (column . 5)))))
  (let* ((sel (list :start '(1 . 1) :end '(2 . 3) :text "ab\ncde" :at 1700000000.5))
         (p (json-parse-string (json-serialize (pi-ide-state-build (pi-ide-tests--snap :file nil :name "*scratch*"
                                                                                       :language nil :modified t
                                                                                       :selection sel)))
                               :object-type 'alist))
         (b (alist-get 'active_buffer p)))
    (should (equal (alist-get 'file b) :null))
    (should (equal (alist-get 'language b) :null))
    (should (eq (alist-get 'modified b) t))
    (should (equal (alist-get 'selection b)
                   '((start (line . 1) (column . 1)) (end (line . 2) (column . 3)) (text . "ab\ncde")
                     (selected_at . 1700000000.5))))))

(ert-deftest pi-ide-state-test-selection-cap ()
  "The encoded selection is capped with `truncated'; the range describes the whole selection."
  (dolist (c '(("small" 10 "0123456789" nil) ("cut" 4 "0123456789" t) ("escapes count" 4 "\"\"\"" t)))
    (let ((sel (pi-ide-state-selection (list :start '(1 . 1) :end '(1 . 10) :text (nth 2 c) :at nil)
                                       (nth 1 c))))
      (should (equal (list (car c) (alist-get 'truncated sel) (alist-get 'selected_at sel))
                     (list (car c) (nth 3 c) :null)))
      (should (<= (pi-ide-state-encoded-size (alist-get 'text sel)) (nth 1 c)))))
  (let ((sel (pi-ide-state-selection (list :start '(1 . 1) :end '(9 . 9) :text "x" :read-cut t :at 5) 100)))
    (should (eq (alist-get 'truncated sel) t))))

(ert-deftest pi-ide-state-test-encode ()
  "The timestamp is spliced in front; content without it is what unchanged writes compare."
  (let* ((enc (pi-ide-state-encode (pi-ide-state-build (pi-ide-tests--snap)) 1700000000.25)))
    (should (string-prefix-p "{\"timestamp\":1700000000.250,\"pid\":4242," (cdr enc)))
    (should (equal (json-parse-string (car enc) :object-type 'alist)
                   (assq-delete-all 'timestamp (json-parse-string (cdr enc) :object-type 'alist))))))

(ert-deftest pi-ide-state-test-encode-file-cap ()
  "Long paths make room: the selection is cut further; when nothing helps, nothing is written."
  (let* ((long (make-string (* 900 1024) ?x))
         (sel (list :start '(1 . 1) :end '(1 . 9) :text (make-string (* 250 1024) ?y) :at 1))
         (enc (pi-ide-state-encode (pi-ide-state-build (pi-ide-tests--snap :cwd long :selection sel)) 1.0)))
    (should (car enc))
    (should (<= (string-bytes (cdr enc)) pi-ide-state-max-file-bytes))
    (should (eq t (alist-get 'truncated (alist-get 'selection (alist-get 'active_buffer
                                                                          (json-parse-string (cdr enc) :object-type 'alist)))))))
  (let ((enc (pi-ide-state-encode (pi-ide-state-build (pi-ide-tests--snap :cwd (make-string (* 1100 1024) ?x))) 1.0)))
    (should-not (car enc))
    (should (string-match-p "over pi's limit" (cdr enc)))))

(ert-deftest pi-ide-state-test-encode-reports-budget ()
  "200 reports with many diagnostics: the oldest are dropped, as few as make the file fit 1 MiB."
  (let* ((report (lambda (i)
                   `((file . ,(format "/p/f%03d" i)) (seq . ,i) (pi_pid . 9) (status . "reloaded")
                     (diagnostics . ((version . 1) (total . 100)
                                     (items . ,(make-vector 100 `((severity . "error") (line . 1) (column . 1)
                                                                  (message . ,(make-string 60 ?m))))))))))
         (files (vconcat (cl-loop for i below 200 collect (funcall report i))))
         (payload (lambda (files) (nconc (pi-ide-state-build (pi-ide-tests--snap)) `((files . ,files)))))
         (enc (pi-ide-state-encode (funcall payload files) 1.0))
         (kept (alist-get 'files (json-parse-string (cdr enc) :object-type 'alist :array-type 'list)))
         (dropped (- 200 (length kept))))
    (should (car enc))
    (should (<= (string-bytes (cdr enc)) pi-ide-state-max-file-bytes))
    (should (< 0 dropped 200))
    (should (equal (mapcar (lambda (r) (alist-get 'seq r)) kept) (number-sequence dropped 199)))
    ;; One report fewer dropped would not fit (the file is the content with "timestamp":1.000, spliced in).
    (should (> (+ (string-bytes (json-serialize (funcall payload (substring files (1- dropped)))))
                  (length "\"timestamp\":1.000,"))
               pi-ide-state-max-file-bytes))))

(ert-deftest pi-ide-state-test-validate-message ()
  "pi's messages: each malformed field has its reason; a good one passes."
  (let ((good '((protocol . "0.3") (kind . "pi") (pid . 42) (cwd . "/p") (editor_pid . 7) (seq . 3)
                (changed ((file . "/p/a") (seq . 3) (tool . "edit"))) (last_turn "/p/a"))))
    (should-not (pi-ide-state-validate-message good 42))
    (dolist (c `(("not an object" ["x"] "not a JSON object")
                 ("wrong kind" ((kind . "vim")) "kind is not")
                 ("no protocol" ,(assq-delete-all 'protocol (copy-alist good)) "no protocol")
                 ("pid mismatch" ,(cons '(pid . 43) good) "does not match")
                 ("editor_pid a string" ,(cons '(editor_pid . "7") good) "editor_pid")
                 ("seq negative" ,(cons '(seq . -1) good) "seq")
                 ("seq a float" ,(cons '(seq . 1.5) good) "seq")
                 ("changed missing" ,(assq-delete-all 'changed (copy-alist good)) "changed is not")
                 ("changed too long" ,(cons (cons 'changed (make-list 51 '((file . "/a") (seq . 1)))) good)
                  "changed is not")
                 ("relative file" ,(cons '(changed ((file . "a") (seq . 1))) good) "changed entry")
                 ("seq 0 in changed" ,(cons '(changed ((file . "/a") (seq . 0))) good) "changed entry")
                 ("last_turn not strings" ,(cons '(last_turn 1 2) good) "last_turn")))
      (let ((why (pi-ide-state-validate-message (nth 1 c) 42)))
        (should (equal (list (car c) (and why (string-match-p (regexp-quote (nth 2 c)) why) t))
                       (list (car c) t)))))
    (should-not (pi-ide-state-validate-message (cons '(editor_pid . :null) good) 42))))

(ert-deftest pi-ide-state-test-reload-verdict ()
  "The reload rule of PROTOCOL.md v0.3, the table of the Neovim client's test."
  (let ((file '(:type file :real "/r/a" :resolves-to file))
        (link '(:type link :real "/r/a" :resolves-to file))
        (link-elsewhere '(:type link :real "/r/b" :resolves-to file))
        (dir '(:type dir :real "/r/a" :resolves-to dir))
        (fifo '(:type fifo :real "/r/a" :resolves-to fifo))
        (link-to-dir '(:type link :real "/r/d" :resolves-to dir)))
    (dolist (c `(("gone" (:type file :real "/r/a") nil "gone")
                 ("a file then and now" (:type file :real "/r/a") ,file "reload")
                 ("no record, a file" nil ,file "reload")
                 ("no record, a symlink" nil ,link "refused")
                 ("a file now a symlink" (:type file :real "/r/a") ,link "refused")
                 ("a symlink then and now, same target" (:type link :real "/r/a") ,link "reload")
                 ("a symlink re-pointed" (:type link :real "/r/a") ,link-elsewhere "refused")
                 ("a symlink now a file" (:type link :real "/r/a") ,file "refused")
                 ("now a directory" (:type file :real "/r/a") ,dir "refused")
                 ("now a FIFO" (:type file :real "/r/a") ,fifo "refused")
                 ("a symlink to a directory" (:type link :real "/r/d") ,link-to-dir "refused")))
      (should (equal (list (car c) (pi-ide-state-reload-verdict (nth 1 c) (nth 2 c)))
                     (list (car c) (nth 3 c)))))))

(ert-deftest pi-ide-state-test-newest-changes ()
  "The newest change per file above the handled seq, in seq order."
  (let ((changed '(((file . "/a") (seq . 1)) ((file . "/b") (seq . 2)) ((file . "/a") (seq . 3))
                   ((file . "/c") (seq . 4)))))
    (dolist (c '((0 (("/b" . 2) ("/a" . 3) ("/c" . 4))) (2 (("/a" . 3) ("/c" . 4))) (4 ())))
      (should (equal (mapcar (lambda (x) (cons (alist-get 'file x) (alist-get 'seq x)))
                             (pi-ide-state-newest-changes changed (car c)))
                     (cadr c))))))

(defun pi-ide-tests--remember-all (events)
  "Reports after EVENTS, each (PI FILE SEQ LISTED), remembered in order; as (PI FILE SEQ).
LISTED is what PI's newest message lists from then on, as (FILE . SEQ) pairs."
  (let ((reports nil) (listed nil))
    (dolist (e events)
      (setf (alist-get (nth 0 e) listed) (mapcar (lambda (c) `((file . ,(car c)) (seq . ,(cdr c)))) (nth 3 e)))
      (setq reports (pi-ide-state-remember-report
                     reports `((file . ,(nth 1 e)) (pi_pid . ,(nth 0 e)) (seq . ,(nth 2 e))) listed)))
    (mapcar (lambda (r) (list (alist-get 'pi_pid r) (alist-get 'file r) (alist-get 'seq r))) reports)))

(ert-deftest pi-ide-state-test-remember-report ()
  "One report per pi and file, newest last; each pi's newest 20 and those its message lists; 200 at most.
The shared table of the rule is test/fixtures/report-retention-cases.ts
\(test/emacs/report-retention.test.ts); these are the steps of `remember'."
  (let* ((burst (lambda (pi-pid n) (cl-loop for i below n collect (list pi-pid (format "/f%d" i) (1+ i)))))
         (listing (lambda (events) (mapcar (lambda (e) (cons (nth 1 e) (nth 2 e))) events)))
         (listed-burst (lambda (pi-pid n) (let ((b (funcall burst pi-pid n)))
                                            (mapcar (lambda (e) (append e (list (funcall listing b)))) b))))
         (cases
          `(("a report replaces the same pi's on the same file, and moves to the end"
             ((1 "/a" 1 nil) (1 "/b" 2 nil) (1 "/a" 3 nil)) ((1 "/b" 2) (1 "/a" 3)))
            ("another pi's report on the same file stays"
             ((1 "/a" 1 nil) (2 "/a" 1 nil)) ((1 "/a" 1) (2 "/a" 1)))
            ("a burst of 30 its message lists: all 30 stay" ,(funcall listed-burst 1 30) ,(funcall burst 1 30))
            ("the next report from a message listing only itself leaves that pi's newest 20"
             (,@(funcall listed-burst 1 30) (1 "/late" 31 (("/late" . 31))))
             (,@(cl-subseq (funcall burst 1 30) 11) (1 "/late" 31)))
            ("a second pi's burst never pushes out the first pi's newest 20"
             (,@(funcall burst 1 25) ,@(funcall burst 2 25))
             (,@(cl-subseq (funcall burst 1 25) 5) ,@(cl-subseq (funcall burst 2 25) 5)))
            ("250 listed by five pis: the newest 200"
             ,(cl-loop for p from 1 to 5 append (funcall listed-burst p 50))
             ,(cl-subseq (cl-loop for p from 1 to 5 append (funcall burst p 50)) 50)))))
    (dolist (c cases)
      (should (equal (list (car c) (pi-ide-tests--remember-all (nth 1 c))) (list (car c) (nth 2 c)))))))

(defun pi-ide-tests--reports-oracle (history listed)
  "What must be kept after HISTORY, a list of (PI FILE SEQ), newest first.
LISTED: alist PI -> (FILE . SEQ) pairs its newest message lists (a pi
that exited has none).  Built from the whole history, not step by step:
the last report of each pi and file, and of those each pi's newest 20
and those its listing names; oldest first, before the cap of 200."
  (let ((seen (make-hash-table :test #'equal)) (per-pi (make-hash-table)) (out nil))
    (dolist (e history)
      (unless (gethash (cons (car e) (nth 1 e)) seen)
        (puthash (cons (car e) (nth 1 e)) t seen)
        (let ((n (1+ (gethash (car e) per-pi 0))))
          (puthash (car e) n per-pi)
          (when (or (<= n 20) (member (cons (nth 1 e) (nth 2 e)) (alist-get (car e) listed)))
            (push e out)))))
    out))

(ert-deftest pi-ide-state-test-reports-random ()
  "Seeded random report sequences (three pis writing files) agree with a history-based oracle.
Each pi lists its newest 50 changes, as pi does; the third exits now and
then (lists nothing).  Exactly the oracle's reports while it never asked
for more than 200; once the cap has cut, only the oracle's and never more
than 200."
  (let ((seed (or (and (getenv "PI_IDE_SEED") (string-to-number (getenv "PI_IDE_SEED"))) 20261205)))
    (dotimes (run 16)
      (random (format "pi-ide-%d-%d" seed run))
      (let ((reports nil) (history nil) (listed nil) (seqs nil) (gone nil) (capped nil))
        (dotimes (step (if (= 3 (% run 4)) 400 (+ 20 (random 260))))
          (let* ((pi-pid (1+ (random (if gone 2 3))))
                 (seq (setf (alist-get pi-pid seqs) (1+ (or (alist-get pi-pid seqs) 0))))
                 (file (format "/f%d" (random (if (= 0 (% run 2)) 40 150))))
                 (mine (cl-remove-if (lambda (c) (equal (car c) file)) (alist-get pi-pid listed)))
                 (mine (append mine (list (cons file seq)))))
            (setf (alist-get pi-pid listed) (last mine 50))
            (push (list pi-pid file seq) history)
            (setq reports (pi-ide-state-remember-report
                           reports `((file . ,file) (pi_pid . ,pi-pid) (seq . ,seq))
                           (mapcar (lambda (l) (cons (car l) (mapcar (lambda (c) `((file . ,(car c)) (seq . ,(cdr c))))
                                                                    (cdr l))))
                                   listed))))
          (when (and (not gone) (= 0 (random 150)))
            ;; pi 3 exits: the next state write retains without its listing.
            (setq gone t listed (assq-delete-all 3 listed)
                  reports (pi-ide-state-retain-reports
                           reports (mapcar (lambda (l) (cons (car l) (mapcar (lambda (c) `((file . ,(car c)) (seq . ,(cdr c))))
                                                                           (cdr l))))
                                           listed))))
          (when (or (/= 3 (% run 4)) (= 0 (% step 10)))
            (let* ((got (mapcar (lambda (r) (list (alist-get 'pi_pid r) (alist-get 'file r) (alist-get 'seq r)))
                                reports))
                   (want (pi-ide-tests--reports-oracle history listed)))
              (when (> (length want) 200) (setq capped t))
              (unless (if capped
                          (let ((wanted (make-hash-table :test #'equal)))
                            (dolist (w want) (puthash w t wanted))
                            (and (<= (length got) 200) (cl-every (lambda (g) (gethash g wanted)) got)))
                        (equal got want))
                (ert-fail (list :seed seed :run run :steps (length history) :capped capped
                                :missing (cl-set-difference want got :test #'equal)
                                :extra (cl-set-difference got want :test #'equal)))))))))))

;;;; Approval (protocol v0.4)

(ert-deftest pi-ide-state-test-pid-of-approval-name ()
  "pi-<pid>.approval.json with the pid spelled as in every state file name; nothing else."
  (dolist (c '(("pi-42.approval.json" 42) ("pi-2147483647.approval.json" 2147483647)
               ("pi-2147483648.approval.json" nil) ("pi-042.approval.json" nil) ("pi-0.approval.json" nil)
               ("pi-42.json" nil) ("42.approval.json" nil) ("pi-42.approval.json.tmp" nil)
               ("pi-42.review.json" nil) ("PI-42.approval.json" nil) ("pi-42.APPROVAL.json" nil)
               ("pi-42.approval.json\n" nil) ("pi-.approval.json" nil) (nil nil)))
    (should (equal (list (car c) (pi-ide-state-pid-of-approval-name (car c))) c))))

(defconst pi-ide-tests--approval
  '((protocol . "0.4") (kind . "pi-approval") (pid . 42) (editor_pid . 7) (timestamp . 100.5)
    (request (id . "req-1") (tool . "edit") (file . "/p/a.txt") (created . :false) (note . :null)
             (hunks_total . 2) (timeout_s . 120) (expires . 220.5)
             (hunks ((id . "h1") (old_start . 2) (old_lines . 1) (new_start . 2) (new_lines . 1)
                     (old_text "two") (new_text "TWO"))
                    ((id . "h2") (old_start . 4) (old_lines . 0) (new_start . 4) (new_lines . 1)
                     (old_text) (new_text "four")))))
  "A request as `json-parse-string' gives it, the one of test/nvim/approval.test.ts.")

(defun pi-ide-tests--approval-with (key value)
  "`pi-ide-tests--approval' with the request's KEY set to VALUE (top level when KEY is a cons)."
  (let ((msg (copy-tree pi-ide-tests--approval)))
    (if (consp key)
        (cons (cons (car key) value) (assq-delete-all (car key) msg))
      (setf (alist-get key (alist-get 'request msg)) value)
      msg)))

(ert-deftest pi-ide-state-test-validate-approval ()
  "pi's request for approval: each malformed field has its reason, a run-out one too; a good one passes."
  (let ((got (pi-ide-state-validate-approval pi-ide-tests--approval 42 150)))
    (should (null (cdr got)))
    (should (equal (cl-loop for (k v) on (car got) by #'cddr unless (eq k :hunks) append (list k v))
                   '(:pi-pid 42 :pi-key 42 :pi-fields ((pi_pid . 42)) :editor-pid 7 :id "req-1" :tool "edit" :file "/p/a.txt" :created nil :note nil
                             :hunks-total 2 :timeout 120 :expires 220.5)))
    (should (equal (mapcar (lambda (h) (alist-get 'id h)) (plist-get (car got) :hunks)) '("h1" "h2"))))
  (dolist (c `(("not an object" ["x"] "not a pi approval request")
               ("pi's message, not a request" ((kind . "pi") (pid . 42)) "not a pi approval request")
               ("pid not the name's" ,(pi-ide-tests--approval-with '(pid) 43) "does not match the file name")
               ("no editor_pid" ,(pi-ide-tests--approval-with '(editor_pid) :null) "editor_pid")
               ("editor_pid 0" ,(pi-ide-tests--approval-with '(editor_pid) 0) "editor_pid")
               ("request a list" ,(pi-ide-tests--approval-with '(request) '(1 2)) "request is not an object")
               ("id empty" ,(pi-ide-tests--approval-with 'id "") "request.id")
               ("id of 65" ,(pi-ide-tests--approval-with 'id (make-string 65 ?x)) "request.id")
               ("id a number" ,(pi-ide-tests--approval-with 'id 1) "request.id")
               ("relative file" ,(pi-ide-tests--approval-with 'file "a.txt") "request.file")
               ("timeout 0" ,(pi-ide-tests--approval-with 'timeout_s 0) "timeout_s")
               ("expires missing" ,(pi-ide-tests--approval-with 'expires :null) "expires")
               ("hunks an object" ,(pi-ide-tests--approval-with 'hunks :null) "request.hunks")
               ("run out" ,(pi-ide-tests--approval-with 'expires 149.9) "ran out")))
    (let ((got (pi-ide-state-validate-approval (nth 1 c) 42 150)))
      (should (equal (list (car c) (car got) (and (cdr got) (string-match-p (regexp-quote (nth 2 c)) (cdr got)) t))
                     (list (car c) nil t)))))
  ;; A malformed hunk is dropped, the request still counts (the user is asked all the same).
  (let* ((bad '(((id . "ok") (old_start . 1) (new_start . 1) (old_text "a") (new_text "b"))
                ((id . "no-start") (new_start . 1) (old_text "a") (new_text "b"))
                ((id . "text not lines") (old_start . 1) (new_start . 1) (old_text . "a") (new_text "b"))
                ((id . "numbers") (old_start . 1) (new_start . 1) (old_text 1) (new_text "b"))
                ((old_start . 1) (new_start . 1) (old_text "a") (new_text "b"))
                "a string"))
         (r (car (pi-ide-state-validate-approval
                  (pi-ide-tests--approval-with 'hunks_total :null)
                  42 150)))
         (r2 (car (pi-ide-state-validate-approval
                   (let ((m (pi-ide-tests--approval-with 'hunks bad)))
                     (setf (alist-get 'hunks_total (alist-get 'request m)) :null)
                     m)
                   42 150))))
    (should (equal (plist-get r :hunks-total) 2))
    (should (equal (mapcar (lambda (h) (alist-get 'id h)) (plist-get r2 :hunks)) '("ok")))
    (should (equal (plist-get r2 :hunks-total) 1)))
  (let ((created (car (pi-ide-state-validate-approval
                       (pi-ide-tests--approval-with 'created t) 42 150))))
    (should (eq (plist-get created :created) t))
    (should (equal (pi-ide-state-describe-request created) '("creation" . "2 hunks"))))
  (let ((noted (car (pi-ide-state-validate-approval (pi-ide-tests--approval-with 'note "too large") 42 150))))
    (should (equal (pi-ide-state-describe-request noted) '("edit" . "(too large)")))))

(ert-deftest pi-ide-state-test-hunks-match ()
  "Marks go only on a buffer holding the lines pi read, where pi read them."
  (let ((lines (pi-ide-tests--lines "one\ntwo\nthree"))
        (h (lambda (start old) `((id . "h") (old_start . ,start) (new_start . ,start) (old_text ,@old) (new_text "x")))))
    (dolist (c `(("the request's two hunks" ,(plist-get (car (pi-ide-state-validate-approval
                                                                pi-ide-tests--approval 42 0))
                                                        :hunks)
                  t)
                 ("a replaced line where pi read it" (,(funcall h 2 '("two"))) t)
                 ("two lines" (,(funcall h 2 '("two" "three"))) t)
                 ("the line elsewhere" (,(funcall h 1 '("two"))) nil)
                 ("the user edited it" (,(funcall h 2 '("TWO"))) nil)
                 ("past the end" (,(funcall h 4 '("three" "four"))) nil)
                 ("an insertion at the start" (,(funcall h 1 nil)) t)
                 ("an insertion at line 0 (before the start)" (,(funcall h 0 nil)) t)
                 ("old_start 0 with old lines" (,(funcall h 0 '("one"))) nil)
                 ("one of two hunks off" (,(funcall h 1 '("one")) ,(funcall h 3 '("two"))) nil)
                 ("no hunks" () t)))
      (should (equal (list (car c) (pi-ide-state-hunks-match-p lines (nth 1 c))) (list (car c) (nth 2 c)))))))

;;;; pi's change set (v0.4)

(defconst pi-ide-tests--review
  '((protocol . "0.4") (kind . "pi-review") (pid . 42) (editor_pid . 7) (timestamp . 100.5)
    (runs ((run . 3) (files ((file . "/p/a.txt") (baseline . "one\ntwo\n") (note . :null) (hunks_total . 1)
                             (hunks ((id . "h1") (old_start . 2) (old_lines . 1) (new_start . 2) (new_lines . 1)
                                     (old_text "two") (new_text "TWO"))))))
          ((run . 5) (files ((file . "/p/b.txt") (baseline . :null) (note . "too large") (hunks_total . 0)
                             (hunks))
                            ((file . "/p/a.txt") (baseline . "one\nTWO\n") (note . :null) (hunks_total . 2)
                             (hunks ((id . "h2") (old_start . 1) (old_lines . 1) (new_start . 1) (new_lines . 0)
                                     (old_text "one") (new_text))
                                    ((id . "bad") (old_start . "2") (new_start . 1) (old_text) (new_text "x"))
                                    ((id . "h3") (old_start . 3) (old_lines . 0) (new_start . 2) (new_lines . 1)
                                     (old_text) (new_text "three"))))))))
  "A change set as `json-parse-string' gives it: two runs, a note, a malformed hunk.")

(ert-deftest pi-ide-state-test-validate-review ()
  "A change set of the pi its name says, with the malformed parts dropped; else why not."
  (let ((runs (car (pi-ide-state-validate-review pi-ide-tests--review 42))))
    (should (equal (mapcar (lambda (r) (plist-get r :run)) runs) '(3 5)))
    (should (equal (mapcar (lambda (f) (list (plist-get f :file) (plist-get f :baseline)
                                             (mapcar (lambda (h) (alist-get 'id h)) (plist-get f :hunks))))
                           (plist-get (nth 1 runs) :files))
                   '(("/p/b.txt" nil nil) ("/p/a.txt" "one\nTWO\n" ("h2" "h3"))))))
  (dolist (c `(("another pi's" ,pi-ide-tests--review 43 "pid field 42 does not match the file name")
               ("pi's message" ((kind . "pi") (pid . 42)) 42 "not a pi change set")
               ("not an object" [1 2] 42 "not a pi change set")
               ("a string" "x" 42 "not a pi change set")
               ("runs not a list" ((kind . "pi-review") (pid . 42) (runs . "x")) 42 "runs is not a list")))
    (should (equal (list (car c) (cdr (pi-ide-state-validate-review (nth 1 c) (nth 2 c)))) (list (car c) (nth 3 c)))))
  (dolist (c '(("a run without its number" ((kind . "pi-review") (pid . 1) (runs ((files)))) nil)
               ("a relative path" ((kind . "pi-review") (pid . 1) (runs ((run . 1) (files ((file . "a") (hunks)))))) (()))
               ("hunks not a list" ((kind . "pi-review") (pid . 1) (runs ((run . 1) (files ((file . "/a") (hunks . 3))))))
                (()))
               ("no runs" ((kind . "pi-review") (pid . 1) (runs)) nil)))
    (should (equal (list (car c) (mapcar (lambda (r) (plist-get r :files))
                                         (car (pi-ide-state-validate-review (nth 1 c) 1))))
                   (list (car c) (nth 2 c))))))

(ert-deftest pi-ide-state-test-newest-entry ()
  "A file's change of the newest run that changed it, across pis; nil for files pi did not change."
  (let* ((runs (car (pi-ide-state-validate-review pi-ide-tests--review 42)))
         (older (list (list :run 4 :files (list (list :file "/p/c.txt" :baseline "" :hunks nil))))))
    (dolist (c `(("newest run of two" ((42 . ,runs)) "/p/a.txt" (42 5 ("h2" "h3")))
                 ("only in the older run" ((42 . ,(list (car runs)))) "/p/a.txt" (42 3 ("h1")))
                 ("another pi's run" ((42 . ,runs) (9 . ,older)) "/p/c.txt" (9 4 nil))
                 ("not changed" ((42 . ,runs)) "/p/d.txt" nil)
                 ("no change sets" () "/p/a.txt" nil)))
      (let ((e (pi-ide-state-newest-entry (nth 1 c) (nth 2 c))))
        (should (equal (list (car c) (and e (list (plist-get e :pid) (plist-get e :run)
                                                  (mapcar (lambda (h) (alist-get 'id h)) (plist-get e :hunks)))))
                       (list (car c) (nth 3 c))))))))

(ert-deftest pi-ide-state-test-hunk-kind ()
  "Added, deleted or changed, from the hunk's lines."
  (dolist (c '((((old_text) (new_text "a")) added) (((old_text "a") (new_text)) deleted)
               (((old_text "a") (new_text "b" "c")) changed)))
    (should (equal (pi-ide-state-hunk-kind (car c)) (nth 1 c)))))

(ert-deftest pi-ide-state-test-remember-revert ()
  "PROTOCOL.md's fields, newest last, at most 50."
  (let ((entry '(:pid 42 :run 5 :file "/p/a.txt")))
    (should (equal (pi-ide-state-remember-revert nil entry '((id . "h3") (old_text) (new_text "x" "y")) 7)
                   '(((pi_pid . 42) (run . 5) (id . "h3") (file . "/p/a.txt") (line . 7) (lines . 2)))))
    (should (equal (alist-get 'lines (car (pi-ide-state-remember-revert nil entry '((id . "h") (old_text "a")) 1)))
                   0))
    (let ((many nil))
      (dotimes (i 60)
        (setq many (pi-ide-state-remember-revert many entry `((id . ,(format "h%d" i)) (new_text "x")) i)))
      (should (= (length many) 50))
      (should (equal (alist-get 'id (car many)) "h10"))
      (should (equal (alist-get 'id (car (last many))) "h59")))
    ;; Reverted again after an undo: one entry for the hunk, the newest; another pi's or run's hunk of that id
    ;; is another hunk.
    (let* ((h '((id . "h3") (new_text "x")))
           (twice (pi-ide-state-remember-revert
                   (pi-ide-state-remember-revert
                    (pi-ide-state-remember-revert
                     (pi-ide-state-remember-revert nil entry h 7)
                     '(:pid 42 :run 6 :file "/p/a.txt") h 1)
                    '(:pid 43 :run 5 :file "/p/a.txt") h 2)
                   entry h 9)))
      (should (equal (mapcar (lambda (r) (list (alist-get 'pi_pid r) (alist-get 'run r) (alist-get 'line r))) twice)
                     '((42 6 1) (43 5 2) (42 5 9)))))))

(ert-deftest pi-ide-state-test-hunk-list ()
  "The newest run's hunks, every file, as compilation-mode locations."
  (let* ((runs (car (pi-ide-state-validate-review pi-ide-tests--review 42)))
         (older (list (list :run 4 :files (list (list :file "/p/c\nd.txt" :baseline ""
                                                      :hunks '(((id . "h9") (new_start . 0) (old_text "x")
                                                                (new_text)))))))))
    (dolist (c `(("the newest run of one pi" ((42 . ,runs)) ("/p/a.txt:1: pi +0 -1  one" "/p/a.txt:2: pi +1 -0  three"))
                 ("its older run alone" ((42 . ,(list (car runs)))) ("/p/a.txt:2: pi +1 -1  TWO"))
                 ("another pi's run; a path made one line" ((9 . ,older)) ("/p/c?d.txt:1: pi +0 -1  x"))
                 ("newest across pis" ((9 . ,older) (42 . ,runs)) ("/p/a.txt:1: pi +0 -1  one" "/p/a.txt:2: pi +1 -0  three"))
                 ("nothing" () ())))
      (should (equal (list (car c) (pi-ide-state-hunk-list (nth 1 c))) (list (car c) (nth 2 c)))))))

(ert-deftest pi-ide-state-test-deletion-at ()
  "A deletion's mark only where the buffer has the baseline's lines around the deleted ones."
  ;; Baseline a b c d e; pi deleted c (now before line 3) or d e (at the end, after line 3).
  (let ((baseline ["a" "b" "c" "d" "e"])
        (mid '((old_start . 3) (old_text "c") (new_start . 3) (new_text)))
        (end '((old_start . 4) (old_text "d" "e") (new_start . 4) (new_text)))
        (all '((old_start . 1) (old_text "a" "b" "c" "d" "e") (new_start . 1) (new_text))))
    (dolist (c `(("pi's version" "a\nb\nd\ne" ,mid t)
                 ("a line typed above" "x\na\nb\nd\ne" ,mid nil)
                 ("the following line edited" "a\nb\nD\ne" ,mid nil)
                 ("at the end, pi's version" "a\nb\nc" ,end t)
                 ("at the end, a line added since" "a\nb\nc\nx" ,end nil)
                 ("at the end, the last line edited" "a\nb\nC" ,end nil)
                 ("everything deleted: no line to mark" "" ,all nil)
                 ;; Asked at another line (where a revert of the deletion put the lines back): as at new_start.
                 ("a line typed above, asked one line down" "x\na\nb\nd\ne" ,mid t 4)
                 ("pi's version, asked one line down" "a\nb\nd\ne" ,mid nil 4)
                 ("at the end, a line typed above, asked one line down" "x\na\nb\nc" ,end t 5)
                 ("at the end, asked one line up" "a\nb\nc" ,end nil 3)))
      (let* ((lines (pi-ide-state-text-lines (nth 1 c)))
             (reader (pi-ide-tests--lines (nth 1 c))))
        (should (equal (list (car c) (pi-ide-state-deletion-at-p reader (length lines) baseline (nth 2 c) (nth 4 c)))
                       (list (car c) (nth 3 c))))))))

(ert-deftest pi-ide-state-test-text-lines ()
  "Lines as pi counts them."
  (dolist (c '(("" ()) ("a" ("a")) ("a\n" ("a")) ("a\n\n" ("a" "")) ("a\nb" ("a" "b"))))
    (should (equal (pi-ide-state-text-lines (car c)) (nth 1 c)))))

(ert-deftest pi-ide-state-test-lines-at ()
  "Lines stand at a place, or not; no lines always do."
  (let ((lines (pi-ide-tests--lines "one\ntwo\nthree")))
    (dolist (c '((2 ("two") t) (2 ("two" "three") t) (1 ("two") nil) (3 ("three" "four") nil)
                 (0 ("one") nil) (0 nil t) (9 nil t)))
      (should (equal (list c (pi-ide-state-lines-at-p lines (car c) (nth 1 c))) (list c (nth 2 c)))))))

(ert-deftest pi-ide-state-test-proposed-lines ()
  "The proposed lines shown in the buffer: \"+ \" each, control characters inert, 20 at most."
  (should (equal (pi-ide-state-proposed-lines '("TWO" "a\tb\rc")) '("+ TWO" "+ a?b?c")))
  (should (equal (pi-ide-state-proposed-lines nil) nil))
  (let ((shown (pi-ide-state-proposed-lines (cl-loop for i below 25 collect (format "l%d" i)))))
    (should (= (length shown) 21))
    (should (equal (nth 19 shown) "+ l19"))
    (should (equal (nth 20 shown) "+ ... 5 more lines"))))

(ert-deftest pi-ide-state-test-proposal-diff ()
  "The proposal as a unified diff: the header names the file, each hunk its ranges and lines."
  (let ((r (car (pi-ide-state-validate-approval pi-ide-tests--approval 42 0))))
    (should (equal (pi-ide-state-proposal-diff r)
                   '("--- /p/a.txt" "+++ /p/a.txt (pi's proposal)"
                     "@@ -2,1 +2,1 @@" "-two" "+TWO" "@@ -4,0 +4,1 @@" "+four")))
    (should (equal (pi-ide-state-proposal-diff (plist-put (plist-put (copy-sequence r) :hunks nil) :note "binary"))
                   '("--- /p/a.txt" "+++ /p/a.txt (pi's proposal)" "(no preview: binary)")))))

(ert-deftest pi-ide-state-test-decisions ()
  "Decisions: newest last, at most 20, each {pi_pid, id, decision}; a decided request is known."
  (let ((ds nil))
    (dotimes (i 25)
      (setq ds (pi-ide-state-remember-decision ds (if (cl-evenp i) 42 43) (format "r%d" i)
                                               (if (cl-evenp i) "accept" "reject"))))
    (should (= (length ds) 20))
    (should (equal (car ds) '((pi_pid . 43) (id . "r5") (decision . "reject"))))
    (should (equal (car (last ds)) '((pi_pid . 42) (id . "r24") (decision . "accept"))))
    (should (equal (json-serialize (vconcat (last ds 1))) "[{\"pi_pid\":42,\"id\":\"r24\",\"decision\":\"accept\"}]"))
    (dolist (c '((42 "r24" t) (43 "r24" nil) (43 "r5" t) (42 "r4" nil)))
      (should (equal (list c (and (pi-ide-state-decided-p ds (car c) (nth 1 c)) t)) (list c (nth 2 c)))))))

(ert-deftest pi-ide-state-test-current-request ()
  "Of several waiting pis, the request that runs out first is the one shown and answered."
  (dolist (c '((() nil) (((:id "a" :expires 10)) "a")
               (((:id "a" :expires 10) (:id "b" :expires 5) (:id "c" :expires 7)) "b")))
    (should (equal (plist-get (pi-ide-state-current-request (car c)) :id) (cadr c)))))

(provide 'pi-ide-state-tests)
;;; pi-ide-state-tests.el ends here
