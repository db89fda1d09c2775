/**
 * pi's messages to editors (protocol v0.3) as the VS Code client reads them: the parser (editors/shared/
 * pi-message.ts), which changes are still to act on, the `files` cap, the file checks of pi-reader.ts on a
 * real temp dir (symlink, owner, mode, size, name, liveness), and the watcher on a real directory.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import {
	addReport,
	type FileReport,
	MAX_PI_CHANGED,
	MAX_PI_MESSAGE_BYTES,
	parsePiMessage,
	pendingChanges,
	piMessagePid,
	retainReports,
} from "../../../../editors/shared/pi-message.ts";
import { type PidProbe, type PiMessageVerdict, readPiMessage } from "../../../../editors/shared/pi-reader.ts";
import { PiWatcher } from "../../../../editors/shared/pi-watcher.ts";
import { piIdentityKey } from "../../../../src/protocol/wire.ts";
import { makePiMessage } from "../../../fixtures/pi-message.ts";
import {
	RETENTION_CASES,
	RETENTION_SEED,
	type RetentionCase,
	randomRetentionCases,
	retainOracle,
} from "../../../fixtures/report-retention-cases.ts";

const root = mkdtempSync(join(tmpdir(), "pi-ide-pimsg-"));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;
const freshDir = () => {
	const dir = join(root, `case-${++counter}`);
	mkdirSync(dir, { mode: 0o700 });
	return dir;
};

describe("piMessagePid", () => {
	const cases: [string, number | undefined][] = [
		["pi-123.json", 123],
		["pi-0.json", undefined],
		["pi-123.json.tmp", undefined],
		["123.json", undefined],
		["pi-12a.json", undefined],
		["pi-99999999999.json", undefined],
	];
	for (const [name, expected] of cases) test(name, () => assert.equal(piMessagePid(name), expected));
});

describe("parsePiMessage", () => {
	test("a valid message, unknown fields tolerated", () => {
		const parsed = parsePiMessage(JSON.stringify({ ...makePiMessage(), future: { x: 1 } }));
		assert.ok(parsed.ok);
		assert.deepEqual(parsed.message, makePiMessage());
	});

	test("editor_pid null (not connected) is valid", () => {
		assert.ok(parsePiMessage(JSON.stringify(makePiMessage({ editor_pid: null }))).ok);
	});

	test("changed beyond the cap keeps the newest entries", () => {
		const changed = Array.from({ length: 60 }, (_, i) => ({ file: `/w/${i}.ts`, seq: i, tool: "edit" }));
		const parsed = parsePiMessage(JSON.stringify(makePiMessage({ changed })));
		assert.ok(parsed.ok);
		assert.equal(parsed.message.changed.length, MAX_PI_CHANGED);
		assert.equal(parsed.message.changed[0]?.file, "/w/10.ts");
	});

	// [description, text, problem pattern]
	const bad: [string, string, RegExp][] = [
		["not JSON", "{", /invalid JSON/],
		["an array", "[]", /not a JSON object/],
		["an editor state file", JSON.stringify({ pid: 1, cwd: "/", timestamp: 1, app: "nvim" }), /kind/],
		["kind other than pi", JSON.stringify({ ...makePiMessage(), kind: "editor" }), /kind/],
		["pid 0", JSON.stringify(makePiMessage({ pid: 0 })), /pid/],
		["pid a string", JSON.stringify({ ...makePiMessage(), pid: "4242" }), /pid/],
		["editor_pid negative", JSON.stringify(makePiMessage({ editor_pid: -1 })), /editor_pid/],
		["seq fractional", JSON.stringify(makePiMessage({ seq: 1.5 })), /seq/],
		["timestamp missing", JSON.stringify({ ...makePiMessage(), timestamp: undefined }), /timestamp/],
		["changed not a list", JSON.stringify({ ...makePiMessage(), changed: {} }), /changed/],
		[
			"a relative changed file",
			JSON.stringify(makePiMessage({ changed: [{ file: "a.ts", seq: 1, tool: "w" }] })),
			/absolute/,
		],
		["changed seq missing", JSON.stringify({ ...makePiMessage(), changed: [{ file: "/a", tool: "w" }] }), /seq/],
		["last_turn with a number", JSON.stringify({ ...makePiMessage(), last_turn: [1] }), /last_turn/],
	];
	for (const [name, text, problem] of bad) {
		test(`refused: ${name}`, () => {
			const parsed = parsePiMessage(text);
			assert.equal(parsed.ok, false);
			if (!parsed.ok) assert.match(parsed.problem, problem);
		});
	}
});

describe("pendingChanges", () => {
	const entry = (file: string, seq: number) => ({ file, seq, tool: "edit" });
	const changed = [entry("/a", 1), entry("/b", 2), entry("/a", 3), entry("/c", 3)];
	// [description, editor_pid, handled seq, expected [file, seq]]
	const cases: [string, number | null, number | undefined, [string, number][]][] = [
		["another editor: nothing", 99, undefined, []],
		["no editor: nothing", null, undefined, []],
		[
			"first sight: only the newest batch",
			77,
			undefined,
			[
				["/a", 3],
				["/c", 3],
			],
		],
		[
			"after seq 1: newer entries, one per file (its newest)",
			77,
			1,
			[
				["/b", 2],
				["/a", 3],
				["/c", 3],
			],
		],
		["everything handled: nothing", 77, 3, []],
	];
	for (const [name, editorPid, handled, expected] of cases) {
		test(name, () => {
			const pending = pendingChanges(makePiMessage({ editor_pid: editorPid, seq: 3, changed }), 77, handled);
			assert.deepEqual(
				pending.map((e) => [e.file, e.seq]),
				expected,
			);
		});
	}
});

describe("report retention (PROTOCOL.md `files`): each pi's newest 20 and those its message lists, 200 in all", () => {
	const report = (file: string, piPid = 100, seq = 1): FileReport => ({
		file,
		seq,
		status: "not-open",
		version: null,
		modified: false,
		diagnostics_expected: false,
		diagnostics: null,
		pi_pid: piPid,
	});
	const NONE = new Map<string, { file: string; seq: number }[]>();
	/** retainReports on a case of the shared table: the indices kept. */
	const run = (c: RetentionCase): number[] => {
		const held = c.reports.map((r, i) => ({
			...report(r.file, r.pi_pid, r.seq),
			...(r.pi_ns ? { pi_ns: r.pi_ns } : {}),
			i,
		}));
		const listed = new Map(c.listed.map((l) => [piIdentityKey(l.pi_pid, l.pi_ns), l.changed]));
		return retainReports(held, listed).map((r) => (r as FileReport & { i: number }).i);
	};

	for (const c of RETENTION_CASES) {
		test(c.name, () => {
			assert.deepEqual(retainOracle(c.reports, c.listed), c.kept, "the oracle agrees with the table");
			assert.deepEqual(run(c), c.kept);
		});
	}

	test(`random cases against the oracle (seed ${RETENTION_SEED}; RETENTION_SEED=<seed> replays)`, () => {
		for (const c of randomRetentionCases(RETENTION_SEED, 300)) assert.deepEqual(run(c), c.kept, c.name);
	});

	test("a newer report of the same pi on the same file replaces its older one, moved to the end", () => {
		let held: FileReport[] = [];
		for (const f of ["/f0", "/f1", "/f2"]) held = addReport(held, report(f), NONE);
		held = addReport(held, report("/f0", 100, 2), NONE);
		assert.deepEqual(
			held.map((h) => [h.file, h.seq]),
			[
				["/f1", 1],
				["/f2", 1],
				["/f0", 2],
			],
		);
	});

	test("two pis' reports on one file are both kept; each pi's newer one replaces its older", () => {
		let held = addReport(addReport([], report("/a", 100), NONE), report("/a", 200), NONE);
		assert.deepEqual(
			held.map((h) => h.pi_pid),
			[100, 200],
		);
		held = addReport(held, report("/a", 100, 2), NONE);
		assert.deepEqual(
			held.map((h) => [h.pi_pid, h.seq]),
			[
				[200, 1],
				[100, 2],
			],
		);
	});
});

describe("readPiMessage (real files)", () => {
	const alive: PidProbe = () => "alive";
	const write = (dir: string, name: string, text: string, mode = 0o600) => {
		writeFileSync(join(dir, name), text, { mode });
		chmodSync(join(dir, name), mode);
	};
	const valid = JSON.stringify(makePiMessage());

	test("a valid message from a live pi", () => {
		const dir = freshDir();
		write(dir, "pi-4242.json", valid);
		const verdict = readPiMessage(dir, "pi-4242.json", { probe: alive });
		assert.deepEqual(verdict, { kind: "message", message: makePiMessage() });
	});

	interface FileCase {
		description: string;
		setUp: (dir: string) => void;
		/** The name read, in the case's dir. */
		name: string;
		kind: PiMessageVerdict["kind"];
		problem?: RegExp;
	}
	const cases: FileCase[] = [
		{ description: "missing: gone", setUp: () => {}, name: "pi-4242.json", kind: "gone" },
		{
			description: "group-readable: refused",
			setUp: (d) => write(d, "pi-4242.json", valid, 0o640),
			name: "pi-4242.json",
			kind: "problem",
			problem: /mode 0640/,
		},
		{
			description: "other-writable: refused",
			setUp: (d) => write(d, "pi-4242.json", valid, 0o602),
			name: "pi-4242.json",
			kind: "problem",
			problem: /mode 0602/,
		},
		{
			description: "a symlink to a valid message: refused",
			setUp: (d) => {
				write(d, "real.json", valid);
				symlinkSync(join(d, "real.json"), join(d, "pi-4242.json"));
			},
			name: "pi-4242.json",
			kind: "problem",
			problem: /symbolic link/,
		},
		{
			description: "a directory: refused",
			setUp: (d) => mkdirSync(join(d, "pi-4242.json")),
			name: "pi-4242.json",
			kind: "problem",
			problem: /regular file/,
		},
		{
			description: "a FIFO: refused without blocking",
			setUp: (d) => execFileSync("mkfifo", ["-m", "600", join(d, "pi-4242.json")]),
			name: "pi-4242.json",
			kind: "problem",
			problem: /regular file/,
		},
		{
			description: "over 64 KiB: refused unread",
			setUp: (d) =>
				write(d, "pi-4242.json", JSON.stringify({ ...makePiMessage(), pad: "x".repeat(MAX_PI_MESSAGE_BYTES) })),
			name: "pi-4242.json",
			kind: "problem",
			problem: /byte limit/,
		},
		{
			description: "malformed",
			setUp: (d) => write(d, "pi-4242.json", "{not json"),
			name: "pi-4242.json",
			kind: "problem",
			problem: /invalid message/,
		},
		{
			description: "pid differs from the name",
			setUp: (d) => write(d, "pi-4243.json", valid),
			name: "pi-4243.json",
			kind: "problem",
			problem: /does not match/,
		},
		{
			description: "not a pi message name",
			setUp: (d) => write(d, "4242.json", valid),
			name: "4242.json",
			kind: "problem",
			problem: /pi-<pid>/,
		},
	];
	for (const { description, setUp, name, kind, problem } of cases) {
		test(description, () => {
			const dir = freshDir();
			setUp(dir);
			const verdict = readPiMessage(dir, name, { probe: alive });
			assert.equal(verdict.kind, kind);
			if (problem) assert.match(verdict.kind === "problem" ? verdict.problem : "", problem);
		});
	}

	test("owned by another uid: refused", () => {
		const dir = freshDir();
		write(dir, "pi-4242.json", valid);
		const verdict = readPiMessage(dir, "pi-4242.json", { probe: alive, uid: (process.getuid?.() ?? 0) + 1 });
		assert.equal(verdict.kind, "problem");
		if (verdict.kind === "problem") assert.match(verdict.problem, /owned by uid/);
	});

	const liveness: { description: string; probed: ReturnType<PidProbe>; kind: PiMessageVerdict["kind"] }[] = [
		{ description: "a dead pi's leftover", probed: "dead", kind: "dead" },
		{ description: "a pid of another user's process", probed: "foreign", kind: "problem" },
		{ description: "a probe the kernel did not answer: not trusted", probed: { unknown: "EINVAL" }, kind: "problem" },
	];
	for (const { description, probed, kind } of liveness) {
		test(description, () => {
			const dir = freshDir();
			write(dir, "pi-4242.json", valid);
			assert.equal(readPiMessage(dir, "pi-4242.json", { probe: () => probed }).kind, kind);
		});
	}

	test("the real probe: this process is alive", () => {
		const dir = freshDir();
		write(dir, `pi-${process.pid}.json`, JSON.stringify(makePiMessage({ pid: process.pid })));
		assert.equal(readPiMessage(dir, `pi-${process.pid}.json`).kind, "message");
	});
});

describe("PiWatcher (real directory)", () => {
	/** Resolves with the next event the watcher reports. */
	function recorder() {
		const events: string[] = [];
		let wake: (() => void) | undefined;
		const push = (event: string) => {
			events.push(event);
			wake?.();
		};
		const next = async (count: number) => {
			while (events.length < count) await new Promise<void>((resolve) => (wake = resolve));
			return events.slice(0, count);
		};
		return { events, push, next };
	}
	const atomicWrite = (dir: string, name: string, text: string) => {
		writeFileSync(join(dir, `${name}.tmp`), text, { mode: 0o600, flag: "wx" });
		renameSync(join(dir, `${name}.tmp`), join(dir, name));
	};

	test("reports an existing message at start, a rewrite, a bad file once, and a removal", async (t) => {
		const dir = freshDir();
		const name = `pi-${process.pid}.json`;
		atomicWrite(dir, name, JSON.stringify(makePiMessage({ pid: process.pid, seq: 1 })));
		const { events, push, next } = recorder();
		const watcher = new PiWatcher({
			dir,
			ownPid: 77,
			onMessage: (m) => push(`message ${m.pid} seq ${m.seq}`),
			onGone: (pid) => push(`gone ${pid}`),
			onProblem: (problem) => push(`problem ${problem}`),
		});
		t.after(() => watcher.dispose());
		watcher.start();
		assert.ok(watcher.watching);
		assert.deepEqual(await next(1), [`message ${process.pid} seq 1`]);
		atomicWrite(dir, name, JSON.stringify(makePiMessage({ pid: process.pid, seq: 2 })));
		assert.equal((await next(2))[1], `message ${process.pid} seq 2`);
		atomicWrite(dir, "pi-4242.json", "{bad");
		const problems = (await next(3)).slice(2);
		assert.match(problems[0] ?? "", /^problem pi-4242\.json invalid message/);
		rmSync(join(dir, name));
		assert.equal((await next(4))[3], `gone ${process.pid}`);
		assert.equal(events.filter((e) => e.startsWith("problem")).length, 1, "the bad file was reported once");
	});

	test("the dir removed: watching stops and known pis are gone; start() watches the new dir", async (t) => {
		const dir = freshDir();
		const name = `pi-${process.pid}.json`;
		atomicWrite(dir, name, JSON.stringify(makePiMessage({ pid: process.pid, seq: 1 })));
		const { push, next } = recorder();
		const watcher = new PiWatcher({
			dir,
			ownPid: 77,
			onMessage: (m) => push(`message seq ${m.seq}`),
			onGone: (pid) => push(`gone ${pid}`),
			onProblem: (problem) => push(`problem ${problem}`),
		});
		t.after(() => watcher.dispose());
		watcher.start();
		await next(1);
		rmSync(dir, { recursive: true });
		const events = await next(3);
		assert.ok(events.includes(`gone ${process.pid}`), events.join("; "));
		assert.ok(
			events.some((e) => /was removed/.test(e)),
			events.join("; "),
		);
		assert.equal(watcher.watching, false);
		mkdirSync(dir, { mode: 0o700 });
		atomicWrite(dir, name, JSON.stringify(makePiMessage({ pid: process.pid, seq: 2 })));
		watcher.start();
		assert.equal((await next(4))[3], "message seq 2");
	});

	test("an insecure dir is not watched, and says why", () => {
		const dir = freshDir();
		chmodSync(dir, 0o755);
		const problems: string[] = [];
		const watcher = new PiWatcher({
			dir,
			ownPid: 77,
			onMessage: () => assert.fail("no message expected"),
			onGone: () => {},
			onProblem: (problem) => problems.push(problem),
		});
		watcher.start();
		assert.equal(watcher.watching, false);
		assert.match(problems[0] ?? "", /group\/other permissions \(0755\)/);
		watcher.dispose();
	});
});
