/**
 * The conformance kit's adapter for the Emacs client (editors/emacs): a real `emacs --daemon` (Debian 12's
 * Emacs 28) running the client byte-compiled, as package.el installs it, with a tty client frame in tmux as its
 * UI, driven through test/helpers/emacs.ts. A "command" is a form evaluated in the UI frame's selected window
 * followed by `post-command-hook`, as the command loop runs it; diagnostics come from a Flymake backend of the test driver (test/emacs/driver.el), which reports what
 * the case publishes for the buffer's current content. `flycheckAdapter` is the same client started as a Debian
 * user's Emacs starts (Debian's elpa-flycheck activated) with the diagnostics published through a Flycheck
 * checker of the driver instead; it is not in `adapters` (the whole kit would run twice):
 * test/emacs/kit-flycheck.test.ts runs the kit's diagnostics cases through it.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { EMACS_BIN, type Emacs, elispString, startEmacs } from "../../helpers/emacs.ts";
import type {
	Capability,
	ClientAdapter,
	ClientSession,
	KitDiagnostic,
	KitSend,
	Position,
	StartOptions,
} from "../client.ts";

/** "28" for Emacs 28.2: the major version, for the adapter's name. */
function emacsMajor(): string {
	try {
		const first = execFileSync(EMACS_BIN, ["--version"], { encoding: "utf8" }).split("\n")[0] ?? "";
		return /GNU Emacs (\d+)/.exec(first)?.[1] ?? "?";
	} catch {
		return "?";
	}
}

/** Files that carried a large `setLines` text into Emacs, numbered. */
let carriers = 0;

const buffer = (file: string) => `(find-buffer-visiting ${elispString(file)})`;

/** How a variant publishes a case's diagnostics: the driver's Flymake backend, or its Flycheck checker. */
const PUBLISH = {
	flymake: "pi-ide-test-set-diagnostics",
	flycheck: "pi-ide-test-flycheck-set-diagnostics",
} as const;

type Checker = keyof typeof PUBLISH;

function session(e: Emacs, checker: Checker): ClientSession {
	return {
		pid: e.pid,
		open: (file) => e.act(`(find-file ${elispString(file)})`),
		moveCursor: (to: Position) =>
			e.act(`(progn (deactivate-mark) (goto-char (pi-ide-test-pos ${to.line} ${to.column})))`),
		select: (start, end) => e.act(`(pi-ide-test-select ${start.line} ${start.column} ${end.line} ${end.column})`),
		clearSelection: () => e.act("(deactivate-mark)"),
		setLines: (file, lines) => {
			const text = `${lines.join("\n")}\n`;
			// A text too large for emacsclient's command line (the 2 MiB cases) comes through a file of the test's.
			if (text.length <= 64 * 1024) {
				return e.act(
					`(with-current-buffer ${buffer(file)} (let ((inhibit-read-only t)) (erase-buffer) (insert ${elispString(text)})))`,
				);
			}
			const carrier = join(e.dir, `set-lines-${++carriers}.txt`);
			writeFileSync(carrier, text);
			return e.act(
				`(with-current-buffer ${buffer(file)} (let ((inhibit-read-only t) (coding-system-for-read 'utf-8-unix)) (erase-buffer) (insert-file-contents ${elispString(carrier)})))`,
			);
		},
		save: (file) => e.act(`(with-current-buffer ${buffer(file)} (save-buffer))`),
		buffer: async (file) => {
			const b = await e.json<{ text: string; modified: boolean } | null>(
				`(let ((b ${buffer(file)})) (and b (with-current-buffer b (list :text (buffer-string) :modified (if (buffer-modified-p) t :false)))))`,
			);
			return b ?? undefined;
		},
		loadedFiles: async () =>
			(await e.json<string[] | null>("(vconcat (delq nil (mapcar #'buffer-file-name (buffer-list))))")) ?? [],
		setDiagnostics: async (file, items: KitDiagnostic[]) => {
			const list = items
				.map((d) => `(${d.line} ${d.column} ${elispString(d.severity)} ${elispString(d.message)})`)
				.join(" ");
			await e.eval(`(${PUBLISH[checker]} ${elispString(file)} '(${list}))`);
		},
		messages: () => e.messages(),
		/** The places pi showed, as the `*pi-ide shown*` buffer holds them (each line's `pi-ide-place`). */
		shownPlaces: async () =>
			(await e.json<{ file: string; line: number; end_line: number | null; text: string }[] | null>(
				"(vconcat (mapcar (lambda (p) (list :file (plist-get p :file) :line (plist-get p :line) :end_line (plist-get p :end) :text (plist-get p :text))) (pi-ide-ask-places)))",
			)) ?? [],
		// ---- approval: M-x pi-ide-approve / pi-ide-reject, their reply; every overlay, by face or property ----
		approve: async () => (await e.json<string | null>("(call-interactively #'pi-ide-approve)")) ?? "",
		reject: async () => (await e.json<string | null>("(call-interactively #'pi-ide-reject)")) ?? "",
		approvalMarks: async (file) =>
			(await e.json<{ name: string; line: number }[] | null>(
				`(with-current-buffer ${buffer(file)}
				  (vconcat (mapcar (lambda (o)
				    (let ((face (overlay-get o 'face)) (props (overlay-properties o)) (keys nil))
				      (while props (push (symbol-name (car props)) keys) (setq props (cddr props)))
				      (list :name (if (and face (symbolp face)) (symbol-name face) (mapconcat (function identity) (nreverse keys) " "))
				            :line (line-number-at-pos (overlay-start o) t))))
				    (overlays-in (point-min) (point-max)))))`,
			)) ?? [],
		// ---- end approval ----
		// M-x pi-ide-send (C-u for at once) as the command loop runs it, the prompt given as read in the minibuffer;
		// a selection is the region over the lines (the start of the first to the end of the last).
		sendToPi: (file, send: KitSend) => {
			const what = send.form ? `pi-ide-send-${send.form}` : "pi-ide-send";
			const region = send.lines
				? `(goto-char (point-min)) (forward-line ${send.lines[0] - 1}) (push-mark (point) t t) (forward-line ${send.lines[1] - send.lines[0]}) (end-of-line)`
				: "(deactivate-mark)";
			return e.act(
				`(progn (switch-to-buffer ${buffer(file)}) ${region} (${what} ${send.mode === "now" ? "'(4)" : "nil"} ${elispString(send.prompt)}))`,
			);
		},
		attachUi: () => e.attachUi(),
		quit: () => e.quit(),
		dispose: () => e.dispose(),
		...reviewMethods(e),
	};
}

// ---- capability "review" (protocol v0.4; cases/review.ts) ----

/** Commands in the buffer holding `file`, shown in the UI frame's window, as the user gives them there. */
const inWindow = (file: string, body: string) =>
	`(progn (switch-to-buffer ${buffer(file)}) (undo-boundary) ${body} (undo-boundary))`;

function reviewMethods(e: Emacs): Pick<ClientSession, "reviewMarks" | "editLines" | "revertHunk" | "undo"> {
	return {
		// The client's overlays (property `pi-ide-review`) that draw something (a face or a line prefix).
		reviewMarks: async (file) =>
			(await e.json<number[] | null>(`(let ((b ${buffer(file)}) (lines nil))
				(when b (with-current-buffer b
					(dolist (o (overlays-in (point-min) (point-max)))
						(when (and (overlay-get o 'pi-ide-review) (or (overlay-get o 'face) (overlay-get o 'line-prefix)))
							(let ((first (line-number-at-pos (overlay-start o) t)))
								(dotimes (i (max 1 (count-lines (overlay-start o) (overlay-end o))))
									(push (+ first i) lines)))))))
				(vconcat (sort (delete-dups lines) #'<)))`)) ?? [],
		editLines: (file, line, remove, insert) =>
			e.act(
				inWindow(
					file,
					`(save-excursion (goto-char (point-min)) (forward-line ${line - 1})
						(delete-region (point) (progn (forward-line ${remove}) (point)))
						(insert ${elispString(
							insert
								.map(
									(l) => `${l}
`,
								)
								.join(""),
						)}))`,
				),
			),
		revertHunk: (file, line) =>
			e.act(inWindow(file, `(goto-char (point-min)) (forward-line ${line - 1}) (pi-ide-revert-hunk)`)),
		undo: (file) => e.act(inWindow(file, "(undo 1)")),
	};
}

const CAPABILITIES: ReadonlySet<Capability> = new Set<Capability>([
	"selection",
	"edit",
	"reload",
	"diagnostics",
	"ui-gate",
	"editor-per-row",
	"review",
	"approval",
	"approval-marks",
	"pi-identity",
	"send",
	"unsaved-buffers",
	"merge",
	"show",
	"ask",
]);

function emacsAdapter(checker: Checker): ClientAdapter {
	return {
		name: checker === "flymake" ? `emacs ${emacsMajor()}` : `emacs ${emacsMajor()} + Flycheck`,
		expectedSeconds: 50,
		rowLanes: 3,
		app: "emacs",
		capabilities: CAPABILITIES,
		missing: {},
		start: async (options: StartOptions): Promise<ClientSession> => {
			const e = await startEmacs(undefined, {
				cwd: options.cwd,
				env: options.env,
				runtimeDir: options.env["XDG_RUNTIME_DIR"] ?? null,
				ui: !options.headless,
				file: options.file,
				// An Emacs per case: the client byte-compiled (as package.el installs it) starts in two thirds of the time.
				compiled: true,
				...(checker === "flycheck" ? { sitePackages: true, preEval: ["(pi-ide-test-flycheck-kit-setup)"] } : {}),
			});
			if (options.file && options.headless) await e.act(`(find-file ${elispString(options.file)})`);
			return session(e, checker);
		},
	};
}

export const adapters: ClientAdapter[] = [emacsAdapter("flymake")];

/** The diagnostics through Flycheck (see the header); run by test/emacs/kit-flycheck.test.ts. */
export const flycheckAdapter: ClientAdapter = emacsAdapter("flycheck");
