/**
 * Several project windows in one editor process (PROTOCOL.md, "Several windows of one process"; the JetBrains
 * client writes them): the `windows` field's parsing (kept whole or dropped with a warning, never the editor),
 * the window pi sees (focusWindow: pi's project first, a picked window while open, else the one touched last),
 * and the controller end to end over real files: tiers, the block, `/ide` rows per window and a window pick.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { IdeController } from "../../src/controller.ts";
import { focusWindow, windowsOf } from "../../src/discovery/tiers.ts";
import { nodePathProbe } from "../../src/protocol/path-probe.ts";
import { type EditorState, type EditorWindow, parseEditorState } from "../../src/protocol/protocol.ts";
import { DEFAULT_SETTINGS } from "../../src/ui/settings.ts";
import { killAllEditors, spawnLiveEditor } from "../helpers/editors.ts";
import { makeState, writeStateFile } from "../helpers/state-files.ts";

const root = mkdtempSync(join(tmpdir(), "pi-ide-windows-"));
after(async () => {
	await killAllEditors();
	rmSync(root, { recursive: true, force: true });
});
const dirs = { a: join(root, "a"), b: join(root, "b"), c: join(root, "c"), outside: join(root, "outside") };
for (const dir of Object.values(dirs)) mkdirSync(join(dir, "src"), { recursive: true });

function windowAt(cwd: string, file = join(cwd, "src", "main.ts")): EditorWindow {
	const { active_buffer } = makeState({ cwd, active_buffer: { file } });
	return { cwd, argv: ["IntelliJ IDEA 2025.2", cwd], active_buffer };
}

/** An IDE whose window touched last is `top`, with `others` open too. */
function ide(top: string, others: EditorWindow[], pid = 4242): EditorState {
	return {
		...makeState({ pid, cwd: top, app: "jetbrains", product: "IntelliJ IDEA", argv: ["IntelliJ IDEA 2025.2", top] }),
		windows: others,
	};
}

describe("windows: parsing", () => {
	const cases: { name: string; windows: unknown; kept: number; warning?: RegExp }[] = [
		{ name: "two good windows", windows: [windowAt(dirs.b), windowAt(dirs.c)], kept: 2 },
		{ name: "an empty list", windows: [], kept: 0 },
		{
			name: "a window without cwd is dropped",
			windows: [windowAt(dirs.b), { active_buffer: {} }],
			kept: 1,
			warning: /1 malformed/,
		},
		{
			name: "a window with a 5000-byte cwd is dropped",
			windows: [{ ...windowAt(dirs.b), cwd: `/${"x".repeat(5000)}` }],
			kept: 0,
			warning: /1 malformed/,
		},
		{ name: "not a list: the field is dropped", windows: { cwd: dirs.b }, kept: -1, warning: /not an array/ },
	];
	for (const c of cases) {
		it(c.name, () => {
			const parsed = parseEditorState(JSON.stringify({ ...makeState({ cwd: dirs.a }), windows: c.windows }));
			assert.ok(parsed.ok, "the editor is never dropped for its windows");
			assert.equal(parsed.state.cwd, dirs.a, "the top level is the v0.2 view, untouched");
			assert.equal(parsed.state.windows?.length ?? -1, c.kept);
			if (c.warning) assert.match((parsed.warnings ?? []).join("\n"), c.warning);
			else assert.equal(parsed.warnings, undefined);
		});
	}
});

describe("windows: the window pi sees", () => {
	const cases: { name: string; state: EditorState; piCwd: string; prefer?: string; top: string }[] = [
		{ name: "no windows: unchanged", state: makeState({ cwd: dirs.a }), piCwd: dirs.b, top: dirs.a },
		{ name: "pi's project is another window", state: ide(dirs.a, [windowAt(dirs.b)]), piCwd: dirs.b, top: dirs.b },
		{
			name: "pi's project is the window touched last",
			state: ide(dirs.a, [windowAt(dirs.b)]),
			piCwd: dirs.a,
			top: dirs.a,
		},
		{
			name: "no window matches: the one touched last",
			state: ide(dirs.a, [windowAt(dirs.b)]),
			piCwd: dirs.outside,
			top: dirs.a,
		},
		{
			name: "tier 0 beats a tier 1 window touched earlier",
			state: ide(dirs.a, [windowAt(join(dirs.b, "src")), windowAt(dirs.b)]),
			piCwd: dirs.b,
			top: dirs.b,
		},
		{
			name: "tier 1 (a file inside pi's project) counts",
			state: ide(dirs.a, [windowAt(dirs.c, join(dirs.b, "src", "x.ts"))]),
			piCwd: dirs.b,
			top: dirs.c,
		},
		{
			name: "a picked window wins",
			state: ide(dirs.a, [windowAt(dirs.b)]),
			piCwd: dirs.a,
			prefer: dirs.b,
			top: dirs.b,
		},
		{
			name: "a picked window that closed: tiers again",
			state: ide(dirs.a, [windowAt(dirs.b)]),
			piCwd: dirs.b,
			prefer: dirs.c,
			top: dirs.b,
		},
	];
	for (const c of cases) {
		it(c.name, () => {
			const seen = focusWindow(c.state, c.piCwd, nodePathProbe(), c.prefer);
			assert.equal(seen.cwd, c.top);
			assert.equal(seen.active_buffer.file, windowsOf(c.state).find((w) => w.cwd === c.top)?.active_buffer.file);
			assert.equal(seen.argv?.[1] ?? seen.cwd, c.top, "argv follows the window");
			// every window stays listed exactly once, the top one included
			assert.deepEqual(
				windowsOf(seen)
					.map((w) => w.cwd)
					.sort(),
				windowsOf(c.state)
					.map((w) => w.cwd)
					.sort(),
			);
			if (c.top === c.state.cwd) assert.equal(seen, c.state, "unchanged means the same object");
		});
	}

	it("a database view belongs to its window only", () => {
		const withView = { ...ide(dirs.a, [windowAt(dirs.b)]), database: { table: "rooms" } };
		assert.equal(focusWindow(withView, dirs.b, nodePathProbe()).database, undefined);
		const viewInB = ide(dirs.a, [{ ...windowAt(dirs.b), database: { table: "rooms" } }]);
		assert.deepEqual(focusWindow(viewInB, dirs.b, nodePathProbe()).database, { table: "rooms" });
	});
});

describe("windows: the controller", () => {
	function controllerFor(piCwd: string, stateDir: string): IdeController {
		const agentDir = mkdtempSync(join(root, "agent-"));
		return new IdeController({
			piCwd,
			stateDir,
			agentDir,
			configDirName: ".pi",
			uid: process.getuid?.() ?? 0,
			home: root,
			settings: { ...DEFAULT_SETTINGS },
			ui: { setStatus: () => {}, notify: () => {} },
			isProjectTrusted: () => true,
		});
	}

	it("connects pi in project B to the IDE whose last-touched window is A, sends B's file; /ide lists both windows", async () => {
		const stateDir = join(mkdtempSync(join(root, "run-")), "pi-ide");
		mkdirSync(stateDir, { mode: 0o700 });
		const pid = (await spawnLiveEditor()).pid;
		writeStateFile(stateDir, ide(dirs.a, [windowAt(dirs.b)], pid));
		const controller = controllerFor(dirs.b, stateDir);
		const view = controller.refresh();
		assert.equal(view.connection.connected && view.connection.pid, pid);
		assert.equal(view.editors[0]?.tier, 0, "B's window gives tier 0");
		const injection = controller.prepareInjection();
		assert.equal(injection.kind, "inject");
		assert.match(injection.kind === "inject" ? injection.block.text : "", new RegExp(join(dirs.b, "src", "main.ts")));

		const { rows, actions } = controller.pickerChoices(200);
		assert.equal(rows.length, 3, "two windows and disconnect");
		assert.match(rows[0] ?? "", /^●/, "the window pi sees is the connected row");
		assert.doesNotMatch(rows[1] ?? "", /^●/);
		assert.deepEqual(actions.slice(0, 2), [
			{ kind: "connect", pid, window: dirs.b },
			{ kind: "connect", pid, window: dirs.a },
		]);
		controller.pick(pid, dirs.a);
		const picked = controller.prepareInjection();
		assert.match(picked.kind === "inject" ? picked.block.text : "", new RegExp(join(dirs.a, "src", "main.ts")));
		await controller.stop();
	});
});
