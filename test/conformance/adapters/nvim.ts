/**
 * The Neovim client (editors/nvim) in the conformance kit: a real Neovim per version of the test matrix
 * (Debian 12's 0.7.2 and 0.10), started and driven over msgpack-RPC by test/helpers/nvim.ts, with a UI
 * attached as a GUI attaches one (or none, for "ui-gate", until `attachUi`). Positions are the protocol's
 * (1-based line, 1-based byte column), which is what nvim_win_set_cursor takes, less one on the column.
 */
import { attachUi, forEachNvim, type Nvim, type NvimFlavour, startNvim } from "../../helpers/nvim.ts";
import type { Capability, ClientAdapter, ClientSession, KitDiagnostic, Position, StartOptions } from "../client.ts";

const CAPABILITIES: ReadonlySet<Capability> = new Set([
	"selection",
	"edit",
	"reload",
	"diagnostics",
	"ui-gate",
	"editor-per-row",
	"review",
	"approval",
	"approval-marks",
	"unsaved-buffers",
	"pi-identity",
	"send",
	"merge",
	"show",
	"ask",
]);

/** vim.diagnostic.severity's numbers. */
const SEVERITY = { error: 1, warning: 2, info: 3, hint: 4 } as const;

/**
 * What the client told the user: its notices start with its name (editors/nvim/lua/pi-ide: warn_once and the
 * inbox's notice); an error anywhere shows as Neovim's own lines, which count too, so that "one notice,
 * never an error" fails on an error.
 */
const isNotice = (line: string) => line.startsWith("(pi-ide)") || /E\d{2,4}:|Error|stack traceback/.test(line);

/** Lua: `b` is the loaded buffer named `file` (an absolute path), or -1. */
const FIND_BUFFER = `local b = -1
for _, buf in ipairs(vim.api.nvim_list_bufs()) do
  if vim.api.nvim_buf_is_loaded(buf) and vim.api.nvim_buf_get_name(buf) == file then b = buf end
end`;

async function start(flavour: NvimFlavour, options: StartOptions): Promise<ClientSession> {
	const cleanups: (() => unknown)[] = [];
	const runtimeDir = options.env["XDG_RUNTIME_DIR"] ?? null;
	const nv: Nvim = await startNvim({ after: (fn: () => unknown) => cleanups.push(fn) }, flavour, {
		cwd: options.cwd,
		env: options.env,
		runtimeDir,
		ui: options.headless !== true,
		// 'hidden' (the default from 0.10 on): an opened file keeps earlier ones loaded, as tabs do elsewhere.
		preCmds: ["set hidden"],
		args: options.file === undefined ? [] : [options.file],
	});
	/** Run Lua `body` with `b` (the buffer holding `file`) and `arg`; fails when no loaded buffer holds it. */
	const inBuffer = async <T>(file: string, body: string, arg: unknown = null): Promise<T> => {
		const result = await nv.lua<{ found: boolean; value: T }>(
			`local file, arg = ...
${FIND_BUFFER}
if b == -1 then return { found = false } end
return { found = true, value = (function() ${body} end)() }`,
			file,
			arg,
		);
		if (!result.found) throw new Error(`no loaded buffer holds ${file}`);
		return result.value;
	};
	let disposed = false;
	return {
		pid: nv.pid,
		open: async (file) => {
			await nv.lua(`vim.cmd("edit " .. vim.fn.fnameescape(...))`, file);
		},
		moveCursor: async (to: Position) => {
			await nv.call("nvim_win_set_cursor", 0, [to.line, to.column - 1]);
			await nv.settle();
		},
		select: async (from: Position, to: Position) => {
			// Charwise visual mode from `from` to `to`, entered as the user types it; still selecting afterwards.
			await nv.input("<Esc>");
			await nv.call("nvim_win_set_cursor", 0, [from.line, from.column - 1]);
			await nv.input("v");
			await nv.call("nvim_win_set_cursor", 0, [to.line, to.column - 1]);
			await nv.settle();
		},
		clearSelection: async () => {
			await nv.input("<Esc>");
		},
		endSelecting: async () => {
			await nv.input("<Esc>");
		},
		setLines: async (file, lines) => {
			// Only the lines that differ, as a user's edit changes them: marks on the rest stay where they are.
			await inBuffer(
				file,
				`local old = vim.api.nvim_buf_get_lines(b, 0, -1, false)
local head, tail = 0, 0
while head < #old and head < #arg and old[head + 1] == arg[head + 1] do head = head + 1 end
while tail < #old - head and tail < #arg - head and old[#old - tail] == arg[#arg - tail] do tail = tail + 1 end
vim.api.nvim_buf_set_lines(b, head, #old - tail, false, { unpack(arg, head + 1, #arg - tail) })`,
				lines,
			);
			await nv.settle();
		},
		save: async (file) => {
			await inBuffer(file, "vim.api.nvim_buf_call(b, function() vim.cmd('silent write') end)");
		},
		buffer: async (file) => {
			const found = await nv.lua<{ lines: string[]; modified: boolean } | null>(
				`local file = ...
${FIND_BUFFER}
if b == -1 then return vim.NIL end
return { lines = vim.api.nvim_buf_get_lines(b, 0, -1, false), modified = vim.bo[b].modified }`,
				file,
			);
			return found === null ? undefined : { text: `${found.lines.join("\n")}\n`, modified: found.modified };
		},
		loadedFiles: () =>
			nv.lua<string[]>(`local files = {}
for _, b in ipairs(vim.api.nvim_list_bufs()) do
  local name = vim.api.nvim_buf_get_name(b)
  if vim.api.nvim_buf_is_loaded(b) and name ~= "" then files[#files + 1] = name end
end
return files`),
		setDiagnostics: async (file, items: KitDiagnostic[]) => {
			const diagnostics = items.map((d) => ({
				lnum: d.line - 1,
				col: d.column - 1,
				severity: SEVERITY[d.severity],
				message: d.message,
				source: d.source ?? "kit",
			}));
			await inBuffer(file, `vim.diagnostic.set(vim.api.nvim_create_namespace("pi-ide-kit"), b, arg)`, diagnostics);
			await nv.settle();
		},
		messages: async () =>
			(await nv.exec("messages"))
				.split("\n")
				.map((line) => line.trim())
				.filter(isNotice),
		// ---- approval: `:PiIde approve` / `:PiIde reject` as typed, their reply; the marks of every namespace ----
		sendToPi: async (file, send) => {
			await nv.input("<Esc>");
			await inBuffer(file, "vim.api.nvim_set_current_buf(b)");
			const bang = send.mode === "now" ? "!" : "";
			const form = send.form ? `@${send.form} ` : "";
			if (send.lines) {
				// A selection the user made: visual line mode over the lines, then `:` (which gives the range).
				await nv.call("nvim_win_set_cursor", 0, [send.lines[0], 0]);
				await nv.input(`V${send.lines[1] > send.lines[0] ? `${send.lines[1] - send.lines[0]}j` : ""}`);
				await nv.input(`:PiIdeSend${bang} ${form}${send.prompt.replace(/</g, "<lt>")}<CR>`);
			} else await nv.command(`PiIdeSend${bang} ${form}${send.prompt}`);
			await nv.settle();
		},
		shownPlaces: () =>
			nv.lua<{ file: string; line: number; end_line: number | null; text: string }[]>(
				`local id = require("pi-ide.ask")._state().qf_id
if not id then return {} end
local out = {}
for _, it in ipairs(vim.fn.getqflist({ id = id, items = 0 }).items) do
  out[#out + 1] = { file = vim.api.nvim_buf_get_name(it.bufnr), line = it.lnum,
    end_line = (it.end_lnum or 0) > 0 and it.end_lnum or vim.NIL, text = it.text }
end
return out`,
			),
		approve: async () => (await nv.exec("PiIde approve")).trim(),
		reject: async () => (await nv.exec("PiIde reject")).trim(),
		approvalMarks: (file) =>
			inBuffer<{ name: string; line: number }[]>(
				file,
				`local marks = {}
for name, ns in pairs(vim.api.nvim_get_namespaces()) do
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(b, ns, 0, -1, {})) do
    marks[#marks + 1] = { name = name, line = m[2] + 1 }
  end
end
return marks`,
			),
		// ---- end approval ----
		attachUi: () => attachUi(nv),
		quit: async () => {
			await nv.quit();
		},
		...reviewMethods(nv),
		dispose: async () => {
			if (disposed) return;
			disposed = true;
			for (const fn of cleanups) await fn();
		},
	};
}

// ---- capability "review" (protocol v0.4; cases/review.ts) ----

/** Lua: make `b` (the buffer holding `file`) the current window's buffer, or fail. */
const CURRENT_BUFFER = `${FIND_BUFFER}
if b == -1 then error("no loaded buffer holds " .. file) end
vim.api.nvim_set_current_buf(b)`;

function reviewMethods(nv: Nvim): Pick<ClientSession, "reviewMarks" | "editLines" | "revertHunk" | "undo"> {
	return {
		// The client's extmarks in its "pi-ide-review" namespace, each covering its lines, with a sign to draw.
		reviewMarks: (file) =>
			nv.lua<number[]>(
				`local file = ...
${FIND_BUFFER}
if b == -1 then return {} end
local seen, out = {}, {}
local ns = vim.api.nvim_get_namespaces()["pi-ide-review"]
if ns == nil then return {} end
for _, m in ipairs(vim.api.nvim_buf_get_extmarks(b, ns, 0, -1, { details = true })) do
  -- Drawn: a sign (0.7's details leave out the sign's fields, its sign column is checked by test/nvim/review.test.ts).
  if vim.fn.has("nvim-0.8") == 0 or m[4].sign_text ~= nil then
    for row = m[2], m[4].end_row or m[2] do
      if not seen[row] then seen[row] = true; out[#out + 1] = row + 1 end
    end
  end
end
table.sort(out)
return out`,
				file,
			),
		editLines: async (file, line, remove, insert) => {
			await nv.lua(
				`local file, line, remove, insert = ...
${FIND_BUFFER}
vim.api.nvim_buf_set_lines(b, line - 1, line - 1 + remove, false, insert)`,
				file,
				line,
				remove,
				insert,
			);
			await nv.settle();
		},
		revertHunk: async (file, line) => {
			await nv.lua(
				`local file, line = ...
${CURRENT_BUFFER}
vim.api.nvim_win_set_cursor(0, { line, 0 })
vim.cmd("PiIde revert")`,
				file,
				line,
			);
			await nv.settle();
		},
		undo: async (file) => {
			await nv.lua(`local file = ...\n${CURRENT_BUFFER}\nvim.cmd("undo")`, file);
			await nv.settle();
		},
	};
}

function adapterFor(flavour: NvimFlavour): ClientAdapter {
	return {
		name: `nvim ${flavour.name}`,
		expectedSeconds: 40,
		rowLanes: 3,
		app: "nvim",
		capabilities: CAPABILITIES,
		missing: {},
		start: (options) => start(flavour, options),
	};
}

export const adapters: ClientAdapter[] = [];
forEachNvim((flavour) => adapters.push(adapterFor(flavour)));
