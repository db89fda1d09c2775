/**
 * pi in a sandbox or a container beside editors on the host (issue 23): a pid means something only in the pid
 * namespace it was written in. pi never removes a file whose writer it cannot prove gone from where it runs, and
 * lists another namespace's editor as running; on the host it keeps removing dead editors' leftovers.
 * Tables, then a seeded world of editors and pis in and out of namespaces against an oracle of which files may go.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { buildEditorState, SelectionClock } from "../../editors/shared/state.ts";
import { type ControllerOptions, IdeController } from "../../src/controller.ts";
import { INITIAL_PID_NAMESPACE, judgesPids, type Liveness } from "../../src/protocol/liveness.ts";
import { parseEditorState } from "../../src/protocol/protocol.ts";
import { readOwnPidNamespace } from "../../src/protocol/state-dir.ts";
import { DEFAULT_SETTINGS } from "../../src/ui/settings.ts";
import { mulberry32 } from "../helpers/seeded.ts";
import { makeState, writeStateFile } from "../helpers/state-files.ts";

const HOST = INITIAL_PID_NAMESPACE;
const BOX = "pid:[4026532175]";
const OTHER_BOX = "pid:[4026532999]";

const roots: string[] = [];
after(() => {
	for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function fixture(options: Omit<Partial<ControllerOptions>, "ui">) {
	const root = mkdtempSync(join(tmpdir(), "pi-ide-ns-"));
	roots.push(root);
	const stateDir = join(root, "run", "pi-ide");
	const project = join(root, "project");
	mkdirSync(stateDir, { recursive: true, mode: 0o700 });
	mkdirSync(project, { recursive: true });
	mkdirSync(join(root, "agent"));
	const controller = new IdeController({
		piCwd: project,
		stateDir,
		agentDir: join(root, "agent"),
		configDirName: ".pi",
		uid: process.getuid?.() ?? 0,
		home: root,
		settings: { ...DEFAULT_SETTINGS },
		isProjectTrusted: () => true,
		ui: null,
		...options,
	});
	return { stateDir, project, controller };
}

describe("judgesPids: may kill(pid, 0) here judge a pid written there", () => {
	const rows: [string | undefined, string | null, boolean, string][] = [
		[undefined, HOST, true, "a client before v0.5 (on the host), pi on the host: as always"],
		[HOST, HOST, true, "both on the host"],
		[BOX, BOX, true, "both in the same sandbox"],
		[undefined, BOX, false, "a client before v0.5, pi in a sandbox: its pid is not pi's to judge"],
		[HOST, BOX, false, "a host editor, pi in a sandbox"],
		[BOX, HOST, false, "an editor in a container, pi on the host"],
		[BOX, OTHER_BOX, false, "two sandboxes"],
		[undefined, null, true, "pi cannot read its namespace (no /proc): as on any host without namespaces"],
		[HOST, null, false, "pi cannot read its namespace, the file names one: no judging"],
	];
	for (const [writer, own, judges, why] of rows)
		test(`${why}: ${judges}`, () => {
			assert.equal(judgesPids(writer, own), judges);
		});
});

describe("readOwnPidNamespace", () => {
	test("this process, from /proc", () => assert.match(readOwnPidNamespace() ?? "", /^pid:\[\d+\]$/));
	test("no /proc: null", () =>
		assert.equal(
			readOwnPidNamespace(() => {
				throw new Error("ENOENT");
			}),
			null,
		));
	test("not a pid namespace: null", () =>
		assert.equal(
			readOwnPidNamespace(() => "net:[1]"),
			null,
		));
});

describe("the state file's pid_ns", () => {
	test("kept when well-formed, dropped with a warning otherwise", () => {
		const good = parseEditorState(JSON.stringify({ ...makeState({ pid: 7 }), pid_ns: BOX }));
		assert.ok(good.ok && good.state.pid_ns === BOX);
		const bad = parseEditorState(JSON.stringify({ ...makeState({ pid: 7 }), pid_ns: "pid:[x]\n" }));
		assert.ok(bad.ok && !("pid_ns" in bad.state));
		assert.match(bad.warnings?.join() ?? "", /pid_ns/);
	});
});

describe("the TypeScript clients' state (VS Code, Obsidian)", () => {
	test("pid_ns written when known, left out when not", () => {
		const snapshot = { cwd: "/w", argv: [], document: null };
		const clock = new SelectionClock();
		const known = buildEditorState(snapshot, { pid: 7, app: "vscode", now: 1, clock, pidNamespace: BOX });
		assert.equal(known.pid_ns, BOX);
		const unknown = buildEditorState(snapshot, { pid: 7, app: "vscode", now: 1, clock, pidNamespace: null });
		assert.ok(!("pid_ns" in unknown));
	});
});

describe("the controller: a dead pid of another namespace proves nothing", () => {
	const DEAD = 4_000_001;
	const dead: (pid: number) => Liveness = () => "dead";
	const rows: { name: string; own: string | null; fileNs?: string; removed: boolean }[] = [
		{ name: "pi on the host, an old client's file", own: HOST, removed: true },
		{ name: "pi on the host, a host editor's file", own: HOST, fileNs: HOST, removed: true },
		{ name: "pi on the host, a container editor's file", own: HOST, fileNs: BOX, removed: false },
		{ name: "pi in a sandbox, an old client's file", own: BOX, removed: false },
		{ name: "pi in a sandbox, a host editor's file", own: BOX, fileNs: HOST, removed: false },
		{ name: "pi in a sandbox, an editor of the same sandbox", own: BOX, fileNs: BOX, removed: true },
	];
	for (const row of rows) {
		test(`editor's file: ${row.name}: ${row.removed ? "removed" : "kept, listed as running"}`, () => {
			const f = fixture({ pidNamespace: row.own, probePid: dead });
			const state = { ...makeState({ pid: DEAD, cwd: f.project }), ...(row.fileNs ? { pid_ns: row.fileNs } : {}) };
			const path = writeStateFile(f.stateDir, state);
			const view = f.controller.refresh();
			assert.equal(existsSync(path), !row.removed);
			assert.deepEqual(
				view.editors.map((e) => e.record.pid),
				row.removed ? [] : [DEAD],
			);
			if (!row.removed) assert.equal(view.connection.connected, true, "connected as on the host");
		});
		test(`another pi's files: ${row.name}: ${row.removed ? "removed" : "kept"}`, () => {
			const f = fixture({ pidNamespace: row.own, probePid: dead });
			const body = JSON.stringify({ kind: "pi", pid: DEAD, ...(row.fileNs ? { pid_ns: row.fileNs } : {}) });
			const paths = ["json", "review.json", "approval.json"].map((ext) => join(f.stateDir, `pi-${DEAD}.${ext}`));
			for (const path of paths) writeFileSync(path, body, { mode: 0o600 });
			f.controller.refresh();
			for (const path of paths) assert.equal(existsSync(path), !row.removed, path);
		});
	}
});

test("seeded: editors and pis in and out of namespaces; a file goes only when its writer is provably gone (200 worlds)", () => {
	const seeds = Number(process.env["PI_IDE_SEEDS"] ?? 200);
	const namespaces = [HOST, BOX, OTHER_BOX];
	for (let seed = 1; seed <= seeds; seed++) {
		const random = mulberry32(seed);
		const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
		const own = pick(namespaces);
		// Each writer: its namespace (or none: a client before v0.5, on the host), whether it runs, and what
		// kill(pid, 0) from pi's namespace answers: the truth in pi's own namespace, anything elsewhere.
		const writers = Array.from({ length: 1 + Math.floor(random() * 6) }, (_, i) => {
			const ns = random() < 0.25 ? undefined : pick(namespaces);
			const runs = random() < 0.5;
			const effective = ns ?? HOST;
			const answer: Liveness = effective === own ? (runs ? "alive" : "dead") : pick(["alive", "dead", "foreign"]);
			return { pid: 5_000_000 + i, ns, runs, answer, isPi: random() < 0.4 };
		});
		const f = fixture({
			pidNamespace: own,
			probePid: (pid) => writers.find((w) => w.pid === pid)?.answer ?? "dead",
		});
		const paths = writers.map((w) => {
			if (w.isPi) {
				const path = join(f.stateDir, `pi-${w.pid}.review.json`);
				writeFileSync(path, JSON.stringify({ kind: "pi-review", pid: w.pid, ...(w.ns ? { pid_ns: w.ns } : {}) }), {
					mode: 0o600,
				});
				return path;
			}
			return writeStateFile(f.stateDir, {
				...makeState({ pid: w.pid, cwd: f.project }),
				...(w.ns ? { pid_ns: w.ns } : {}),
			});
		});
		const view = f.controller.refresh();
		for (const [i, w] of writers.entries()) {
			// The oracle: provably gone = dead, and written in pi's own namespace (none named: the host's).
			const provablyGone = !w.runs && (w.ns ?? HOST) === own;
			const where = `seed ${seed}: ${w.isPi ? "pi" : "editor"} ${w.pid} ns ${w.ns ?? "-"} runs ${w.runs}, pi in ${own}`;
			assert.equal(existsSync(paths[i] as string), !provablyGone, where);
			if (!w.isPi) {
				const listed = view.editors.some((e) => e.record.pid === w.pid);
				const shouldList = (w.ns ?? HOST) === own ? w.runs : true;
				assert.equal(listed, shouldList, `${where}: listed`);
			}
		}
	}
});
