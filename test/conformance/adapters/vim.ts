/**
 * The conformance kit's adapter for the Vim 9 client (editors/vim), driving real Vim (Debian 12's vim-nox)
 * through the test driver of test/vim (test/helpers/vim.ts): Vim in tmux, the user's acts typed as keys
 * (`{byte offset}go` moves to a protocol position exactly, multibyte included), questions and edits through a
 * JSON channel.
 *
 * Selections: `select` leaves Vim in visual mode (a live selection, `selected_at` = now); `clearSelection`
 * presses Escape. As PROTOCOL.md says for marks, Vim then keeps reporting the last selection with the time the
 * user left visual mode (the Neovim client does the same); it is "none" only once its text is deleted or replaced.
 *
 * Diagnostics: through a real ALE (`packadd ale`) and a checker the adapter defines for every file it opens
 * (test/helpers/vim-ale.ts): `setDiagnostics` makes the checker report exactly those items for that file and
 * has ALE lint the buffer, as ALE does when the user saves or edits.
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startVim, type Vim, vimString } from "../../helpers/vim.ts";
import { aleLint, aleVimrc, setAleItems } from "../../helpers/vim-ale.ts";
import type {
	Capability,
	ClientAdapter,
	ClientSession,
	KitDiagnostic,
	KitSend,
	Position,
	StartOptions,
} from "../client.ts";

async function offset(vim: Vim, to: Position): Promise<number> {
	return Number(await vim.expr(`line2byte(${to.line}) + ${to.column} - 1`));
}

/**
 * Type the keys that put the cursor at `to` (from normal or visual mode) and wait until it is there: on the
 * character holding that byte (Vim puts the cursor on a character's first byte).
 */
async function goTo(vim: Vim, to: Position): Promise<void> {
	await vim.keys(`${await offset(vim, to)}go`);
	const line = `getline(${to.line})`;
	const column = `(${line} ==# '' ? 1 : byteidx(${line}, charidx(${line}, ${to.column - 1})) + 1)`;
	await vim.waitExpr(`line('.') == ${to.line} && col('.') == ${column}`);
}

const bufExpr = (file: string) => `bufnr(${vimString(file)})`;

class VimSession implements ClientSession {
	private readonly vim: Vim;
	/** The adapter's own files (vimrc, tmux socket), removed by dispose(). */
	private readonly root: string;
	/** The checker's files (test/helpers/vim-ale.ts). */
	private readonly checker: string;

	constructor(vim: Vim, root: string, checker: string) {
		this.vim = vim;
		this.root = root;
		this.checker = checker;
	}

	get pid(): number {
		return this.vim.pid;
	}

	async open(file: string): Promise<void> {
		await this.vim.ex(`execute 'edit ' . fnameescape(${vimString(file)})`);
		// ALE lints a file it has a linter for as it opens; once its results are in, the client writes them.
		// Wait for both, so a case's next step starts on a quiet editor (as after opening a file without ALE).
		await this.vim.waitExpr(
			"(empty(ale#linter#Get(&filetype)) || (get(b:, 'ale_linted', 0) > 0 && !ale#engine#IsCheckingBuffer(bufnr()))) && !pi_ide#Status().writing && !pi_ide#Status().pending",
		);
	}

	private async normal(): Promise<void> {
		if ((await this.vim.expr("mode()")) !== "n") {
			await this.vim.keys("Escape");
			await this.vim.waitExpr("mode() ==# 'n'");
		}
	}

	async moveCursor(to: Position): Promise<void> {
		await this.normal();
		await goTo(this.vim, to);
	}

	async select(start: Position, end: Position): Promise<void> {
		await this.normal();
		await goTo(this.vim, start);
		await this.vim.keys("v");
		await this.vim.waitExpr("mode() ==# 'v'");
		await goTo(this.vim, end);
	}

	async clearSelection(): Promise<void> {
		await this.normal();
	}

	async setLines(file: string, lines: string[]): Promise<void> {
		const buf = bufExpr(file);
		await this.vim.ex(`call deletebufline(${buf}, 1, '$') | call setbufline(${buf}, 1, ${JSON.stringify(lines)})`);
		// TextChanged fires when Vim's main loop turns after a command: a redraw (CTRL-L) is a harmless one.
		await this.vim.keys("C-l");
	}

	async save(file: string): Promise<void> {
		await this.vim.ex(
			`let s:w = win_findbuf(${bufExpr(file)}) | if empty(s:w) | execute 'buffer' ${bufExpr(file)} | silent write | else | call win_execute(s:w[0], 'silent write') | endif`,
		);
	}

	async buffer(file: string): Promise<{ text: string; modified: boolean } | undefined> {
		const b = await this.vim.expr<{ text: string; modified: number } | "">(
			`bufloaded(${bufExpr(file)}) ? {'text': join(getbufline(${bufExpr(file)}, 1, '$'), "\\n") . "\\n", 'modified': getbufvar(${bufExpr(file)}, '&modified')} : ''`,
		);
		return b === "" ? undefined : { text: b.text, modified: b.modified === 1 };
	}

	loadedFiles(): Promise<string[]> {
		return this.vim.expr<string[]>(
			"map(filter(getbufinfo({'bufloaded': 1}), {_, b -> b.name !=# '' && getbufvar(b.bufnr, '&buftype') ==# ''}), {_, b -> b.name})",
		);
	}

	async setDiagnostics(file: string, items: KitDiagnostic[]): Promise<void> {
		setAleItems(this.checker, file, items);
		await aleLint(this.vim, file);
	}

	/** The client's notices (they start with its name) and any error line: "one notice, never an error". */
	async messages(): Promise<string[]> {
		const text = await this.vim.expr<string>("execute('messages')");
		return text
			.split("\n")
			.map((l) => l.trim())
			.filter((l) => l.startsWith("(pi-ide)") || /E\d{2,4}:|Error/.test(l));
	}

	/** The places pi showed: the quickfix list the client puts them in (pi_ide/ask.vim), oldest first. */
	shownPlaces(): Promise<{ file: string; line: number; end_line: number | null; text: string }[]> {
		return this.vim.expr<{ file: string; line: number; end_line: number | null; text: string }[]>(
			"pi_ide#ask#QuickfixId() == 0 ? [] : map(getqflist({'id': pi_ide#ask#QuickfixId(), 'items': 0}).items, {_, it -> {'file': fnamemodify(bufname(it.bufnr), ':p'), 'line': it.lnum, 'end_line': get(it, 'end_lnum', 0) > 0 ? it.end_lnum : v:null, 'text': it.text}})",
		);
	}

	// ---- approval: `:PiIde approve` / `:PiIde reject` as typed, their reply; every sign and text property ----
	approve(): Promise<string> {
		return this.vim.expr<string>(`trim(execute('PiIde approve'))`);
	}

	reject(): Promise<string> {
		return this.vim.expr<string>(`trim(execute('PiIde reject'))`);
	}

	/** Every sign (its group) and text property (its type) in the buffer holding `file`. */
	approvalMarks(file: string): Promise<{ name: string; line: number }[]> {
		const b = bufExpr(file);
		return this.vim.expr<{ name: string; line: number }[]>(
			`map(sign_getplaced(${b}, {'group': '*'})[0].signs, {_, s -> {'name': s.group, 'line': s.lnum}}) + flatten(map(range(1, getbufinfo(${b})[0].linecount), {_, l -> map(prop_list(l, {'bufnr': ${b}}), {_, p -> {'name': p.type, 'line': l}})}))`,
		);
	}
	// ---- end approval ----

	async quit(): Promise<void> {
		await this.vim.quit();
	}

	/**
	 * Typed as the user does: the lines selected in visual line mode then `:` (which gives the range), else
	 * `:PiIdeSend[!] [@form] [prompt]` in normal mode; done once a command typed after it has run.
	 */
	async sendToPi(file: string, send: KitSend): Promise<void> {
		await this.normal();
		await this.vim.ex(`execute 'buffer' ${bufExpr(file)}`);
		const command = `PiIdeSend${send.mode === "now" ? "!" : ""} ${send.form ? `@${send.form} ` : ""}${send.prompt}`;
		if (send.lines) {
			const [first, last] = send.lines;
			await this.vim.keys(`${first}G`);
			await this.vim.waitExpr(`line('.') == ${first}`);
			await this.vim.keys("V");
			if (last > first) await this.vim.keys(`${last - first}j`);
			await this.vim.waitExpr(`mode() ==# 'V' && line('.') == ${last}`);
			await this.vim.text(":");
			await this.vim.waitExpr("mode() ==# 'c'");
			await this.typed(command);
		} else await this.typed(`:${command}`);
	}

	// ---- capability "review" (protocol v0.4; cases/review.ts) ----

	/** The lines with a sign of the client's "pi_ide_review" group that draws something (a sign with text). */
	async reviewMarks(file: string): Promise<number[]> {
		const lines = await this.vim.expr<number[]>(
			`bufloaded(${bufExpr(file)}) ? map(filter(sign_getplaced(${bufExpr(file)}, {'group': 'pi_ide_review'})[0].signs, {_, s -> get(get(sign_getdefined(s.name), 0, {}), 'text', '') !=# ''}), {_, s -> s.lnum}) : []`,
		);
		return [...new Set(lines)].sort((a, b) => a - b);
	}

	async editLines(file: string, line: number, remove: number, insert: string[]): Promise<void> {
		const buf = bufExpr(file);
		const del = remove > 0 ? `call deletebufline(${buf}, ${line}, ${line + remove - 1})` : "";
		const add = insert.length > 0 ? `call appendbufline(${buf}, ${line - 1}, ${JSON.stringify(insert)})` : "";
		await this.vim.ex([del, add].filter((c) => c !== "").join(" | "));
		// TextChanged fires when Vim's main loop turns after a command: a redraw (CTRL-L) is a harmless one.
		await this.vim.keys("C-l");
	}

	/** Typed: `<line>G`, `:PiIde revert`; done once a command typed after it has run. */
	async revertHunk(file: string, line: number): Promise<void> {
		await this.normal();
		await this.vim.ex(`execute 'buffer' ${bufExpr(file)}`);
		await this.vim.keys(`${line}G`);
		await this.vim.waitExpr(`line('.') == ${line}`);
		await this.typed(":PiIde revert");
	}

	async undo(file: string): Promise<void> {
		await this.normal();
		await this.vim.ex(`execute 'buffer' ${bufExpr(file)}`);
		await this.vim.keys("u");
		await this.typed("");
	}

	private step = 0;
	/** Type the command line `command` (if any) and Enter, then wait until a marker command typed after it ran. */
	private async typed(command: string): Promise<void> {
		if (command !== "") {
			await this.vim.text(command);
			await this.vim.keys("Enter");
		}
		this.step++;
		await this.vim.text(`:let g:pi_ide_kit_step = ${this.step}`);
		await this.vim.keys("Enter");
		await this.vim.waitExpr(`get(g:, 'pi_ide_kit_step', 0) == ${this.step}`);
	}

	async dispose(): Promise<void> {
		this.vim.kill();
		rmSync(this.root, { recursive: true, force: true });
	}
}

const CAPABILITIES: ReadonlySet<Capability> = new Set<Capability>([
	"selection",
	"edit",
	"reload",
	"diagnostics",
	"editor-per-row",
	"review",
	"approval",
	"approval-marks",
	"pi-identity",
	"unsaved-buffers",
	"send",
	"show",
	"ask",
	"merge",
]);

export const adapters: ClientAdapter[] = [
	{
		name: "vim 9",
		expectedSeconds: 55,
		rowLanes: 3,
		app: "vim",
		capabilities: CAPABILITIES,
		missing: {
			"ui-gate":
				"a Vim without a terminal (vim -es) stays a script for its life; test/vim/headless.test.ts checks it writes nothing",
		},
		async start(options: StartOptions): Promise<ClientSession> {
			const root = realpathSync(mkdtempSync(join(tmpdir(), "pi-ide-vim-kit-")));
			const run = options.env["XDG_RUNTIME_DIR"] ?? join(root, "run");
			const dirs = {
				root,
				run,
				home: options.env["HOME"] ?? root,
				work: options.cwd,
				stateDir: join(run, "pi-ide"),
			};
			const checker = join(root, "checker");
			let vim: Vim;
			try {
				// 'hidden': an opened file keeps earlier ones loaded, as the other clients' editors do. ALE's checker
				// reports nothing for a file until setDiagnostics names its items.
				const ale = aleVimrc(checker, ["typescript", "text", "markdown"], false);
				vim = await startVim(null, { dirs, env: options.env, cwd: options.cwd, vimrc: ["set hidden", ...ale] });
			} catch (error) {
				rmSync(root, { recursive: true, force: true });
				throw error;
			}
			const session = new VimSession(vim, root, checker);
			if (options.file) await session.open(options.file);
			return session;
		},
	},
];
