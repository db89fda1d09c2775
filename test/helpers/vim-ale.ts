/**
 * A real ALE (Debian's vim-ale 3.3.0, loaded as a user does: `packadd ale`) with a linter the test defines,
 * `pikit`, for Vim tests of the client's diagnostics. The linter is a small shell script run by ALE as a job
 * on the buffer's lines (stdin), given the buffer's file name: for a file with an items file
 * (`setAleItems`) it reports exactly the problems listed there (`line:col:TYPE:message`, TYPE one of ALE's
 * E, W, I, with an S for style: ES, WS, IS); otherwise, with the word rule on, `bad` as an error and `meh` as
 * a warning, wherever they stand; else nothing. With `<dir>/echo` present it instead reports one info item whose
 * message is the content it read, its lines joined with `|` (an oracle can tell which content a result is
 * for). `<dir>/slow` holding a number of seconds makes it sleep that long first (a lint still running while
 * the user edits). No network, no tool beyond sh and awk.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { KitDiagnostic } from "../conformance/client.ts";
import { type Vim, vimString } from "./vim.ts";

/** Where Debian's vim-ale puts ALE; `packadd ale` finds it through 'packpath' (/usr/share/vim/vimfiles). */
export const ALE_DIR = "/usr/share/vim-ale";

/** Fail (never skip) with instructions when ALE is missing. */
export function requireAle(): void {
	if (!existsSync(ALE_DIR)) {
		throw new Error(`ALE is missing at ${ALE_DIR}: apt-get install vim-ale (scripts/setup-test-env.sh does it)`);
	}
}

const SCRIPT = `# pikit: a checker for tests (test/helpers/vim-ale.ts)
input=$(cat)
dir=$(dirname "$0")
if [ -s "$dir/slow" ]; then sleep "$(cat "$dir/slow")"; fi
if [ -e "$dir/items$1" ]; then cat "$dir/items$1"; exit 0; fi
if [ -e "$dir/echo" ]; then printf '1:1:I:%s\n' "$(printf '%s' "$input" | tr '\n' '|')"; exit 0; fi
[ -e "$dir/word-rule" ] || exit 0
printf '%s\\n' "$input" | awk '{ i = index($0, "bad"); if (i) print NR ":" i ":E:found bad"; j = index($0, "meh"); if (j) print NR ":" j ":W:found meh" }'
`;

/**
 * vimrc lines that load ALE and define `pikit` for `filetypes` (only it: `g:ale_linters_explicit`), with the
 * checker's files in `dir` (made here). `*.pk` files get the filetype `pikit` (Vim's own is poke). With
 * `fileLinter`, a second linter, `pikitdisk`, reads the file on disk (ALE's `lint_file`: run on save and on
 * entering the buffer, never on an unsaved edit) and reports `bad` there as a warning, "disk bad".
 */
export function aleVimrc(dir: string, filetypes: string[] = ["pikit"], wordRule = true, fileLinter = false): string[] {
	requireAle();
	mkdirSync(dir, { recursive: true });
	const script = join(dir, "pikit.sh");
	writeFileSync(script, SCRIPT);
	if (wordRule) writeFileSync(join(dir, "word-rule"), "");
	const names = fileLinter ? "['pikit', 'pikitdisk']" : "['pikit']";
	const linters = filetypes.map((ft) => `'${ft}': ${names}`).join(", ");
	const disk = `awk '{ i = index($0, "bad"); if (i) print NR ":" i ":W:disk bad" }' %s`;
	return [
		"packadd ale",
		"let g:ale_echo_cursor = 0",
		"let g:ale_virtualtext_cursor = 'disabled'",
		"let g:ale_linters_explicit = 1",
		`let g:ale_linters = {${linters}}`,
		"autocmd BufRead,BufNewFile *.pk set filetype=pikit",
		"function! PiKitHandle(buffer, lines) abort",
		"  let l:out = []",
		"  for l:line in a:lines",
		"    let l:m = matchlist(l:line, '^\\(\\d\\+\\):\\(\\d\\+\\):\\([EWI]\\)\\(S\\=\\):\\(.*\\)$')",
		"    if !empty(l:m)",
		"      let l:item = {'lnum': l:m[1] + 0, 'col': l:m[2] + 0, 'type': l:m[3], 'text': l:m[5]}",
		"      if l:m[4] ==# 'S' | let l:item.sub_type = 'style' | endif",
		"      call add(l:out, l:item)",
		"    endif",
		"  endfor",
		"  return l:out",
		"endfunction",
		...filetypes.map(
			(ft) =>
				`call ale#linter#Define('${ft}', {'name': 'pikit', 'executable': 'sh', 'command': {b -> 'sh ' . shellescape(${vimString(script)}) . ' ' . shellescape(fnamemodify(bufname(b), ':p'))}, 'callback': 'PiKitHandle'})`,
		),
		...(fileLinter
			? filetypes.map(
					(ft) =>
						`call ale#linter#Define('${ft}', {'name': 'pikitdisk', 'executable': 'awk', 'lint_file': 1, 'command': ${vimString(disk)}, 'callback': 'PiKitHandle'})`,
				)
			: []),
	];
}

const TYPES: Record<KitDiagnostic["severity"], string> = { error: "E", warning: "W", info: "I", hint: "IS" };

/** The checker reports exactly `items` for `file` from now on (undefined: back to its word rule). */
export function setAleItems(dir: string, file: string, items: KitDiagnostic[] | undefined): void {
	const path = join(dir, "items", file);
	if (items === undefined) {
		rmSync(path, { force: true });
		return;
	}
	mkdirSync(dirname(path), { recursive: true });
	writeFileSync(path, items.map((d) => `${d.line}:${d.column}:${TYPES[d.severity]}:${d.message}\n`).join(""));
}

/** The checker reports the content it read (see above) instead of its word rule. */
export function setAleEcho(dir: string): void {
	writeFileSync(join(dir, "echo"), "");
}

/** The checker sleeps `seconds` before answering (0: answers at once). */
export function setAleSlow(dir: string, seconds: number): void {
	writeFileSync(join(dir, "slow"), seconds > 0 ? String(seconds) : "");
}

/** Make ALE lint the buffer of `file` now and wait until that lint is done (b:ale_linted moved). */
export async function aleLint(vim: Vim, file: string, timeoutMs = 10_000): Promise<void> {
	const buf = `bufnr(${vimString(file)})`;
	const before = await vim.expr<number>(`getbufvar(${buf}, 'ale_linted', 0)`);
	await vim.ex(`call ale#Queue(0, 'lint_file', ${buf})`);
	await vim.waitExpr(
		`getbufvar(${buf}, 'ale_linted', 0) > ${before} && !ale#engine#IsCheckingBuffer(${buf})`,
		timeoutMs,
	);
}
