import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Connection } from "../../../src/discovery/connection.ts";
import { formatStatusReport, type StatusFacts } from "../../../src/ui/status-report.ts";
import { makeSelection, makeState } from "../../helpers/editors.ts";

const NOW = 1_700_000_000;
const OK_DIR = { ok: true as const, dir: "/run/user/1000/pi-ide" };
const editor = (pid: number) => makeState({ pid, cwd: "/p", timestamp: NOW - 3 });
const connected = (pid: number): Connection => ({
	connected: true,
	pid,
	mode: { kind: "auto" },
	why: "only candidate",
});

function facts(overrides: Partial<StatusFacts>): StatusFacts {
	return {
		now: NOW,
		health: OK_DIR,
		mode: { kind: "auto" },
		editors: [],
		diagnostics: [],
		connection: { connected: false, mode: { kind: "auto" }, why: "no editor", candidates: [] },
		next: { kind: "skip", reason: "no editor is running in this project" },
		...overrides,
	};
}

describe("formatStatusReport: what it says", () => {
	const one = editor(11);
	// [description, facts, lines the report must contain]
	const cases: [string, StatusFacts, string[]][] = [
		[
			"no editor",
			facts({}),
			[
				"State dir: /run/user/1000/pi-ide (ok)",
				"Mode: auto-connect",
				"Editors: none running",
				"Not connected: no editor is running in this project",
				"Next prompt: nothing injected: no editor is running in this project",
			],
		],
		[
			"insecure dir with its fix",
			facts({
				health: {
					ok: false,
					dir: "/tmp/pi-ide",
					problem: "open-permissions",
					missing: false,
					reason: "has group/other permissions (0755)",
					remedy: "chmod 700 /tmp/pi-ide",
				},
			}),
			["State dir: /tmp/pi-ide has group/other permissions (0755) (fix: chmod 700 /tmp/pi-ide)"],
		],
		[
			"one connected editor and its block",
			facts({
				editors: [{ state: one, tier: 0 }],
				connection: connected(11),
				next: {
					kind: "inject",
					text: "The user's editor (Neovim) shows this file:\nFile: /p/src/main.ts",
					selection: null,
				},
			}),
			[
				"Editors (1):",
				"* Neovim pid 11, tier 0, cwd /p, /p/src/main.ts, written 3 s ago",
				"Connected: pid 11 (only candidate)",
				"Next prompt would include:",
				"The user's editor (Neovim) shows this file:",
				"File: /p/src/main.ts",
			],
		],
		[
			"pi's change set: none yet; approval off",
			facts({
				changes: { runs: 0, files: 0, hunks: 0, revertsTold: 0 },
				approval: { mode: "off", timeoutS: 120, answeringEditor: null, dialog: true, pending: null },
			}),
			["pi's changes: none yet (nothing to review)", "Approval: off (pi's write/edit run without asking)"],
		],
		[
			"pi's change set with reverts told; approval asked in the editor and the dialog, one waiting",
			facts({
				changes: { runs: 2, files: 3, hunks: 7, revertsTold: 1 },
				approval: {
					mode: "edits",
					timeoutS: 120,
					answeringEditor: "Neovim",
					dialog: true,
					pending: { tool: "edit", file: "/p/src/a.ts", waitedS: 12 },
				},
			}),
			[
				"pi's changes: 3 files, 7 hunks in the last 2 runs, published for review; 1 revert told to the model",
				"Approval: each write/edit waits up to 120 s; asked in Neovim and pi's dialog",
				"  waiting: edit /p/src/a.ts, 12 s so far",
			],
		],
		[
			"one file, one hunk, one run; approval with only the dialog",
			facts({
				changes: { runs: 1, files: 1, hunks: 1, revertsTold: 0 },
				approval: { mode: "edits", timeoutS: 30, answeringEditor: null, dialog: true, pending: null },
			}),
			[
				"pi's changes: 1 file, 1 hunk in the last 1 run, published for review",
				"Approval: each write/edit waits up to 30 s; asked in pi's dialog",
			],
		],
		[
			"approval with nobody to ask (print mode, no answering editor)",
			facts({ approval: { mode: "edits", timeoutS: 120, answeringEditor: null, dialog: false, pending: null } }),
			[
				"Approval: each write/edit waits up to 120 s; nobody can be asked (no editor that answers, no dialog): changes are applied and the model is told",
			],
		],
		[
			"approval with a state dir pi refuses and no dialog: not applied, and why",
			facts({
				approval: {
					mode: "edits",
					timeoutS: 120,
					answeringEditor: null,
					dialog: false,
					pending: null,
					refusedDir: "/tmp/pi-ide is owned by uid 1001, not by you",
				},
			}),
			[
				"Approval: each write/edit waits up to 120 s; nobody can be asked: changes are not applied and the model is told to ask the user",
				"  no editor can be asked: pi refuses its state directory /tmp/pi-ide is owned by uid 1001, not by you",
			],
		],
		[
			"approval with a state dir pi refuses, in the TUI: the dialog asks, and the refusal is said",
			facts({
				approval: {
					mode: "edits",
					timeoutS: 120,
					answeringEditor: null,
					dialog: true,
					pending: null,
					refusedDir: "/tmp/pi-ide is owned by uid 1001, not by you",
				},
			}),
			[
				"Approval: each write/edit waits up to 120 s; asked in pi's dialog",
				"  no editor can be asked: pi refuses its state directory /tmp/pi-ide is owned by uid 1001, not by you",
			],
		],
		[
			"what the model already has: nothing to send",
			facts({
				editors: [{ state: one, tier: 0 }],
				connection: connected(11),
				next: {
					kind: "inject",
					text: "",
					selection: null,
					why: "nothing (unchanged since the editor context the model has)",
				},
			}),
			["Next prompt sends nothing (unchanged since the editor context the model has)"],
		],
		[
			"what the model already has: an update",
			facts({
				editors: [{ state: one, tier: 0 }],
				connection: connected(11),
				next: {
					kind: "inject",
					text: "Editor update (Neovim), the rest as before:\nCursor: line 9",
					selection: null,
					why: "an update (Cursor) to the editor context the model has",
				},
			}),
			[
				"Next prompt sends an update (Cursor) to the editor context the model has:",
				"Editor update (Neovim), the rest as before:",
				"Cursor: line 9",
			],
		],
		[
			"two candidates",
			facts({
				editors: [
					{ state: editor(11), tier: 0 },
					{ state: editor(12), tier: 0 },
				],
				connection: { connected: false, mode: { kind: "auto" }, why: "several candidates", candidates: [11, 12] },
			}),
			["Not connected: 2 editors match this project equally, pids 11, 12; pick one with /ide"],
		],
		[
			"off",
			facts({
				mode: { kind: "off" },
				connection: { connected: false, mode: { kind: "off" }, why: "off", candidates: [] },
			}),
			["Mode: off", "Not connected: auto-connect is off; /ide picks an editor, /ide auto resumes"],
		],
		[
			"remembered off, and where it is stored",
			facts({
				remembered: { kind: "off", at: NOW - 100 },
				choicesPath: "/home/u/.pi/agent/ide-context/choices.json",
				connection: { connected: false, mode: { kind: "auto" }, why: "remembered off", candidates: [11] },
			}),
			[
				"Mode: off, remembered for this project",
				"Remembered: /ide off for this project (stored in /home/u/.pi/agent/ide-context/choices.json); /ide auto forgets it",
				"Not connected: /ide off is remembered for this project; /ide picks an editor, /ide auto resumes",
			],
		],
		[
			"the editor pi runs in (PI_IDE_EDITOR_PID)",
			facts({
				editors: [{ state: one, tier: null }],
				host: { pid: 11, via: "env" },
				connection: { connected: true, pid: 11, mode: { kind: "auto", sticky: 11 }, why: "editor terminal" },
			}),
			["Connected: pid 11 (pi runs in this editor's terminal: PI_IDE_EDITOR_PID=11)"],
		],
		[
			"PI_IDE_EDITOR_PID names no live editor",
			facts({ envPid: 4242 }),
			["PI_IDE_EDITOR_PID=4242: no live editor has that pid (its client is off, has no UI yet, or it exited)"],
		],
		[
			"the editor pi runs in (ancestry)",
			facts({
				host: { pid: 11, via: "ancestry" },
				connection: { connected: true, pid: 11, mode: { kind: "auto", sticky: 11 }, why: "editor terminal" },
			}),
			["Connected: pid 11 (pi runs in this editor's terminal: pid 11 is an ancestor of pi)"],
		],
		[
			"a remembered pick applied to a restarted editor",
			facts({
				remembered: { kind: "pick", pid: 11, how: "restarted editor", at: NOW },
				connection: { connected: true, pid: 11, mode: { kind: "auto", sticky: 11 }, why: "remembered pick" },
			}),
			[
				"Remembered: /ide pick, applied to pid 11 (restarted editor)",
				"Connected: pid 11 (remembered /ide pick, restarted editor)",
			],
		],
		[
			"a remembered pick, but the editor pi runs in won",
			facts({
				remembered: { kind: "pick", pid: 11, how: "same editor", at: NOW },
				host: { pid: 12, via: "env" },
				connection: { connected: true, pid: 12, mode: { kind: "auto", sticky: 12 }, why: "editor terminal" },
			}),
			["Remembered: /ide pick of pid 11 (same editor), not applied (pi runs in the terminal of pid 12)"],
		],
		[
			"a remembered pick, but a pick in this session won",
			facts({
				mode: { kind: "picked", pid: 12 },
				remembered: { kind: "pick", pid: 11, how: "restarted editor", at: NOW },
				connection: { connected: true, pid: 12, mode: { kind: "picked", pid: 12 }, why: "picked" },
			}),
			["Remembered: /ide pick of pid 11 (restarted editor), not applied (pid 12 picked with /ide in this session)"],
		],
		[
			"a remembered pick, but /ide off in this session",
			facts({
				mode: { kind: "off" },
				remembered: { kind: "pick", pid: 11, how: "same editor", at: NOW },
				connection: { connected: false, mode: { kind: "off" }, why: "off", candidates: [11] },
			}),
			["Remembered: /ide pick of pid 11 (same editor), not applied (/ide off in this session)"],
		],
		[
			"malformed v0.3 fields: the editor counts, each dropped field is said under it",
			facts({
				editors: [
					{
						state: one,
						tier: 0,
						warnings: ["/files: 2 malformed entries ignored", "/pi: malformed, ignored"],
					},
				],
				connection: connected(11),
			}),
			[
				"* Neovim pid 11, tier 0, cwd /p, /p/src/main.ts, written 3 s ago",
				"    pid 11 wrote a malformed v0.3 field: /files: 2 malformed entries ignored",
				"    pid 11 wrote a malformed v0.3 field: /pi: malformed, ignored",
				"Connected: pid 11 (only candidate)",
			],
		],
		[
			"an ambiguous remembered pick",
			facts({ remembered: { kind: "ambiguous", pids: [11, 12], at: NOW } }),
			["Remembered: /ide pick not applied: pids 11, 12 look like the picked editor"],
		],
		[
			"a remembered pick whose editor is not running (its cwd made inert)",
			facts({
				remembered: { kind: "absent", editor: { app: "nvim", product: null, cwd: "/p\nX", argv: [] }, at: NOW },
			}),
			["Remembered: /ide pick of nvim in /p\\nX, not running now"],
		],
		[
			"kept: connected automatically earlier",
			facts({
				mode: { kind: "auto", sticky: 11 },
				connection: { connected: true, pid: 11, mode: { kind: "auto", sticky: 11 }, why: "kept" },
			}),
			[
				"Mode: auto-connect, keeping pid 11 while it runs",
				"Connected: pid 11 (connected earlier, kept while it runs; /ide to switch)",
			],
		],
		[
			"stale selection",
			facts({ next: { kind: "inject", text: "block", selection: { ...makeSelection("x"), selected_at: NOW - 90 } } }),
			["Selection: stale (made 90 s ago), not sent"],
		],
		[
			"restored marks",
			facts({ next: { kind: "inject", text: "block", selection: makeSelection("x", { ageSeconds: null }) } }),
			["Selection: no timestamp (restored marks), not sent"],
		],
		[
			"selected_at in the future",
			facts({ next: { kind: "inject", text: "block", selection: { ...makeSelection("x"), selected_at: NOW + 600 } } }),
			["Selection: invalid selected_at, 10 min in the future (clock skew, or a client writing milliseconds), not sent"],
		],
		[
			"an ignored file: the reason keeps its own brackets, one level",
			facts({
				editors: [{ state: one, tier: 0 }],
				connection: connected(11),
				next: { kind: "skip", reason: "/p/.env is ignored by /h/ide-context.ignore (*.env)" },
			}),
			["Next prompt: nothing injected: /p/.env is ignored by /h/ide-context.ignore (*.env)"],
		],
		[
			"a skipped file",
			facts({ diagnostics: [{ path: "/run/user/1000/pi-ide/7.json", message: "is a symbolic link: refused" }] }),
			["Skipped /run/user/1000/pi-ide/7.json: is a symbolic link: refused"],
		],
	];
	/** How deep brackets nest in a line: 1 for "a (b)", 2 for "a (b (c))". */
	const bracketDepth = (line: string): number => {
		let depth = 0;
		let deepest = 0;
		for (const char of line) {
			if (char === "(" || char === "[") deepest = Math.max(deepest, ++depth);
			else if (char === ")" || char === "]") depth--;
		}
		return deepest;
	};
	for (const [description, input] of cases) {
		it(`${description}: no line nests brackets`, () => {
			// The block is the model's text, quoted as is: only the report's own wording is checked.
			const next = input.next.kind === "inject" ? { ...input.next, text: "" } : input.next;
			for (const line of formatStatusReport({ ...input, next }).split("\n"))
				assert.ok(bracketDepth(line) <= 1, `nested brackets: ${JSON.stringify(line)}`);
		});
	}
	for (const [description, input, expected] of cases) {
		it(description, () => {
			const lines = formatStatusReport(input).split("\n");
			for (const line of expected)
				assert.ok(lines.includes(line), `missing ${JSON.stringify(line)} in\n${lines.join("\n")}`);
		});
	}
});

describe("formatStatusReport: editor-supplied text is inert", () => {
	const hostile = makeState({
		pid: 13,
		cwd: "/p\u001b]0;pwned\u0007",
		app: "nvim",
		product: "Evil\u009b2J",
		timestamp: NOW,
		active_buffer: { file: "/p/a.ts\nConnected: pid 1 (picked)" },
	});
	const report = formatStatusReport(
		facts({
			editors: [{ state: hostile, tier: 0 }],
			diagnostics: [{ path: "/d/9.json", message: "invalid JSON: Unexpected token \u001b[31m in JSON\u2028x" }],
			next: { kind: "inject", text: "File: x\n```\n\u001b[2Jcode\u202e\n```", selection: null },
			approval: {
				mode: "edits",
				timeoutS: 120,
				answeringEditor: "Evil\u009b2J\u2028Neovim",
				dialog: false,
				pending: { tool: "edit", file: "/p/\u001b[31mx\u202e.ts", waitedS: 1 },
			},
		}),
	);
	// [description, what must not appear raw]
	const cases: [string, string][] = [
		["no ESC", "\u001b"],
		["no BEL", "\u0007"],
		["no C1 CSI", "\u009b"],
		["no line separator", "\u2028"],
		["no bidi override", "\u202e"],
	];
	for (const [description, raw] of cases) it(description, () => assert.ok(!report.includes(raw)));
	it("a newline in a file name cannot forge a report line", () => {
		assert.ok(!report.split("\n").includes("Connected: pid 1 (picked)"));
		assert.match(report, /a\.ts\\nConnected: pid 1 \(picked\)/);
	});
	it("the block keeps its lines", () => assert.match(report, /^```$/m));
});

describe("formatStatusReport: pi in a sandbox names its path mappings", () => {
	const cases: { name: string; paths: StatusFacts["paths"]; lines: string[] }[] = [
		{ name: "none: no line", paths: [], lines: [] },
		{
			name: "a mount and the setting, each with where it came from",
			paths: [
				{ editor: "/home/u/proj", pi: "/workspace/proj", from: "mount" },
				{ editor: "/data/x", pi: "/x", from: "setting" },
			],
			lines: [
				"Path: the editors' /home/u/proj is pi's /workspace/proj (pi's bind mount)",
				"Path: the editors' /data/x is pi's /x (ideContext.paths)",
			],
		},
	];
	for (const c of cases)
		it(c.name, () => {
			const report = formatStatusReport(facts({ paths: c.paths }));
			assert.deepEqual(
				report.split("\n").filter((l) => l.startsWith("Path:")),
				c.lines,
			);
		});
});
