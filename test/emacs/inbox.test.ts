/**
 * Protocol v0.3 in a real Emacs: pi's messages (`pi-<pid>.json`, written here as pi writes them, the test
 * runner standing in for a live pi of the same user) make the client reload unmodified buffers keeping point,
 * leave modified ones alone with one message, never open anything, and report per file; malformed,
 * oversized, foreign, symlinked messages and FIFOs are ignored with one message each, never an error.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
	chmodSync,
	chownSync,
	mkdirSync,
	readFileSync,
	renameSync,
	rmSync,
	symlinkSync,
	unlinkSync,
	writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { EditorState, PiMessage } from "../../src/protocol/protocol.ts";
import { makePiMessage } from "../fixtures/pi-message.ts";
import { keepPath, startFlipper } from "../fixtures/symlink-flipper.ts";
import { type Emacs, elispString, startEmacs } from "../helpers/emacs.ts";

type FileReport = NonNullable<EditorState["files"]>[number];

/** Write pi's message atomically, as pi does (temp file, rename), mode 0600. */
function publish(e: Emacs, message: PiMessage, name = `pi-${message.pid}.json`): void {
	mkdirSync(e.stateDir, { recursive: true, mode: 0o700 });
	const tmp = join(e.stateDir, `${name}.tmp`);
	writeFileSync(tmp, JSON.stringify(message), { mode: 0o600 });
	renameSync(tmp, join(e.stateDir, name));
}

function message(e: Emacs, seq: number, files: string[], overrides: Partial<PiMessage> = {}): PiMessage {
	return makePiMessage({
		pid: process.pid,
		cwd: e.dir,
		editor_pid: e.pid,
		seq,
		changed: files.map((file, i) => ({ file, seq: seq - files.length + 1 + i, tool: "edit" })),
		last_turn: files,
		...overrides,
	});
}

const reportOn = (e: Emacs, file: string, seq: number): Promise<FileReport> =>
	e.until((s) => s?.files?.find((r) => r.file === file && r.seq >= seq), `a report on ${file} (seq ${seq})`);

async function openFile(e: Emacs, file: string, text: string): Promise<void> {
	writeFileSync(file, text);
	await e.act(`(find-file ${elispString(file)})`);
	await e.until((s) => (s?.active_buffer.file === file ? true : undefined), `${file} open`);
}

const bufferText = (e: Emacs, file: string) =>
	e.json<string>(`(with-current-buffer (find-buffer-visiting ${elispString(file)}) (buffer-string))`);

describe("emacs: pi's messages (v0.3)", { concurrency: 2 }, () => {
	it("reloads an unmodified buffer keeping point and reports it; a modified one is kept, told once", async (t) => {
		const e = await startEmacs(t);
		const file = join(e.dir, "conf.json");
		await openFile(e, file, '{\n  "a": 1,\n  "b": 2\n}\n');
		await e.act("(progn (goto-char (point-min)) (forward-line 2) (forward-char 3))");
		writeFileSync(file, '{\n  "a": 10,\n  "b": 20\n}\n');
		publish(e, message(e, 1, [file]));
		const r = await reportOn(e, file, 1);
		assert.deepEqual(
			{ status: r.status, modified: r.modified, pi_pid: r.pi_pid },
			{ status: "reloaded", modified: false, pi_pid: process.pid },
		);
		assert.equal(await bufferText(e, file), '{\n  "a": 10,\n  "b": 20\n}\n');
		const s = e.readState();
		assert.deepEqual(s?.active_buffer.cursor, { line: 3, column: 4 }, "point kept");
		assert.equal(r.version, s?.active_buffer.version, "the version is the buffer's after the reload");
		assert.deepEqual(s?.pi, { pid: process.pid, seq: 1 });
		assert.match(await e.eval("(pi-ide-mode-line)"), /" pi\+1"/);

		await e.act('(progn (goto-char (point-max)) (insert "mine"))');
		writeFileSync(file, "{}\n");
		publish(e, message(e, 2, [file]));
		const kept = await reportOn(e, file, 2);
		assert.equal(kept.status, "modified");
		assert.equal(kept.modified, true);
		assert.match(await bufferText(e, file), /"b": 20\n}\nmine$/);
		publish(e, message(e, 3, [file]));
		await reportOn(e, file, 3);
		const told = (await e.messages()).filter((m) => m.includes("unsaved buffer kept"));
		assert.equal(told.length, 1, told.join("\n"));
		assert.match(await e.eval("(pi-ide-status)"), /not reloaded: pi changed .*conf\.json.*diff-buffer-with-file/);
	});

	it("a reload keeps point and window start of every window showing the buffer", async (t) => {
		const e = await startEmacs(t);
		const file = join(e.dir, "long.txt");
		const lines = Array.from({ length: 120 }, (_, i) => `line ${i + 1}`);
		await openFile(e, file, `${lines.join("\n")}\n`);
		const views = `(with-current-buffer (find-buffer-visiting ${elispString(file)})
			(format "%S" (mapcar (lambda (w) (list (line-number-at-pos (window-point w) t)
				(save-excursion (goto-char (window-point w)) (current-column))
				(line-number-at-pos (window-start w) t)))
				(get-buffer-window-list (current-buffer) nil t))))`;
		await e.act(`(progn (goto-char (point-min)) (forward-line 29) (forward-char 2) (recenter 5)
			(select-window (split-window-below)) (goto-char (point-min)) (forward-line 79) (forward-char 4)
			(set-window-start (selected-window) (save-excursion (goto-char (point-min)) (forward-line 69) (point))))`);
		const before = await e.eval(views);
		// Every line changed (a reformat): revert-buffer cannot keep markers inside text it replaces.
		writeFileSync(file, `${lines.map((l) => l.toUpperCase()).join("\n")}\n`);
		publish(e, message(e, 1, [file]));
		assert.equal((await reportOn(e, file, 1)).status, "reloaded");
		assert.equal(await e.eval(views), before);
		assert.match(before, /\(80 4 70\)/);
	});

	it("never opens a file it does not visit; gone and swapped-for-a-symlink files are not read", async (t) => {
		const e = await startEmacs(t);
		const visited = join(e.dir, "a.txt");
		const gone = join(e.dir, "gone.txt");
		const swapped = join(e.dir, "swapped.txt");
		const secret = join(e.dir, "secret.txt");
		const notOpen = join(e.dir, "not-open.txt");
		writeFileSync(secret, "secret\n");
		writeFileSync(notOpen, "x\n");
		await openFile(e, gone, "gone\n");
		await openFile(e, swapped, "mine\n");
		await openFile(e, visited, "a\n");
		const buffersBefore = await e.eval("(length (buffer-list))");
		unlinkSync(gone);
		unlinkSync(swapped);
		symlinkSync(secret, swapped);
		const remote = "/ssh:pi-ide-no-such-host:/etc/hostname";
		publish(e, message(e, 5, [notOpen, gone, swapped, join(e.dir, "never", "created.txt"), remote]));
		const reports = await e.until((s) => ((s?.files?.length ?? 0) >= 5 ? s?.files : undefined), "five reports");
		assert.deepEqual(reports.pop(), {
			file: remote,
			seq: 5,
			pi_pid: process.pid,
			status: "not-open",
			version: null,
			modified: false,
			diagnostics_expected: false,
			diagnostics: null,
		});
		assert.equal(await e.eval("(featurep 'tramp)"), "nil", "a remote-looking path never reaches TRAMP");
		assert.deepEqual(
			reports.map((r) => [r.file.slice(e.dir.length + 1), r.status, r.version]),
			[
				["not-open.txt", "not-open", null],
				["gone.txt", "gone", reports[1]?.version],
				["swapped.txt", "refused", reports[2]?.version],
				["never/created.txt", "not-open", null],
			],
		);
		assert.equal(await bufferText(e, swapped), "mine\n", "the symlink's target was never read in");
		assert.equal(await e.eval("(length (buffer-list))"), buffersBefore, "no buffer was opened");
		assert.equal(await e.eval(`(file-exists-p ${elispString(join(e.dir, "never"))})`), "nil");
	});

	it("a change that leaves the file as the buffer has it is reported unchanged; a handled seq is not redone", async (t) => {
		const e = await startEmacs(t);
		const file = join(e.dir, "same.txt");
		await openFile(e, file, "same\n");
		const version = e.readState()?.active_buffer.version;
		writeFileSync(file, "same\n");
		publish(e, message(e, 1, [file]));
		const r = await reportOn(e, file, 1);
		assert.deepEqual([r.status, r.version], ["unchanged", version]);
		// The same message again (pi rewrites it at a turn's end): nothing new to handle, the report stays.
		publish(e, message(e, 1, [file], { last_turn: [] }));
		publish(e, message(e, 2, [join(e.dir, "next.txt")]));
		await reportOn(e, join(e.dir, "next.txt"), 2);
		assert.deepEqual(
			e.readState()?.files?.map((f) => [f.file.slice(e.dir.length + 1), f.seq, f.status]),
			[
				["same.txt", 1, "unchanged"],
				["next.txt", 2, "not-open"],
			],
		);
	});

	it("acts only on messages naming this Emacs from a live pi", async (t) => {
		const e = await startEmacs(t);
		const file = join(e.dir, "b.txt");
		await openFile(e, file, "old\n");
		writeFileSync(file, "new\n");
		publish(e, message(e, 1, [file], { editor_pid: e.pid + 1 }));
		// A dead pi: the pid of a process that has exited.
		const dead = Number(execFileSync("sh", ["-c", "echo $$"], { encoding: "utf8" }).trim());
		publish(e, message(e, 1, [file], { pid: dead }), `pi-${dead}.json`);
		// Then one that does name us, so the wait has something new to see.
		publish(e, message(e, 2, [join(e.dir, "other.txt")]));
		await reportOn(e, join(e.dir, "other.txt"), 2);
		assert.equal(e.readState()?.files?.length, 1);
		assert.equal(await bufferText(e, file), "old\n");
	});

	it("bad messages are ignored with one message each; Emacs never errors nor blocks", async (t) => {
		const e = await startEmacs(t);
		const file = join(e.dir, "c.txt");
		await openFile(e, file, "c\n");
		const dir = e.stateDir;
		const good = (pid: number) => JSON.stringify(makePiMessage({ pid, editor_pid: e.pid, changed: [] }));
		// Each bad message appears whole, with its mode and owner already set (through a temp name and a rename):
		// a write in place can be read half-written or before its chmod, which are other reasons than the case's.
		const place = (p: string, text: string, mode = 0o600, owner?: number) => {
			writeFileSync(`${p}.tmp`, text);
			chmodSync(`${p}.tmp`, mode);
			if (owner !== undefined) chownSync(`${p}.tmp`, owner, owner);
			renameSync(`${p}.tmp`, p);
		};
		const cases: { name: string; make: (path: string, pid: number) => void; why: RegExp }[] = [
			{ name: "malformed JSON", make: (p) => place(p, "{not json"), why: /not valid JSON/ },
			{
				name: "oversized",
				make: (p, pid) => place(p, good(pid).padEnd(64 * 1024 + 1, " ")),
				why: /over the 65536-byte limit/,
			},
			{
				name: "symlinked",
				make: (p, pid) => {
					writeFileSync(join(e.dir, `target-${pid}`), good(pid), { mode: 0o600 });
					symlinkSync(join(e.dir, `target-${pid}`), p);
				},
				why: /is a link, not a regular file/,
			},
			{ name: "a FIFO", make: (p) => execFileSync("mkfifo", ["-m", "600", p]), why: /is a fifo, not a regular file/ },
			{
				name: "group-readable",
				make: (p, pid) => place(p, good(pid), 0o640),
				why: /group\/other permissions/,
			},
			{
				name: "pid field not the name's",
				make: (p, pid) => place(p, good(pid + 1)),
				why: /does not match the file name/,
			},
			{
				name: "a field of the wrong type",
				make: (p, pid) => place(p, JSON.stringify({ ...JSON.parse(good(pid)), changed: "all" })),
				why: /changed is not a list/,
			},
			{ name: "not an object", make: (p) => place(p, "[1,2]"), why: /not a JSON object/ },
		];
		if (process.getuid?.() === 0) {
			cases.push({
				name: "another user's file",
				make: (p, pid) => place(p, good(pid), 0o600, 65534),
				why: /belongs to uid 65534/,
			});
		}
		mkdirSync(dir, { recursive: true, mode: 0o700 });
		cases.forEach((c, i) => {
			c.make(join(dir, `pi-${2_000_000 + i}.json`), 2_000_000 + i);
		});
		// A good message last: once its report is in, every bad one has been read before it or with it.
		publish(e, message(e, 1, [join(e.dir, "last.txt")]));
		await reportOn(e, join(e.dir, "last.txt"), 1);
		await e.eval("(pi-ide-inbox--scan)"); // what the timer fallback would see: nothing new, no second notice
		const messages = await e.messages();
		cases.forEach((c, i) => {
			const lines = messages.filter((m) => m.includes(`ignoring pi-${2_000_000 + i}.json`));
			assert.equal(lines.length, 1, `${c.name}: ${lines.join(" | ")}`);
			assert.match(lines[0] ?? "", c.why, c.name);
		});
		assert.equal((await e.messages()).filter((m) => /error|Error/.test(m)).length, 0);
		assert.equal(await bufferText(e, file), "c\n");
		assert.equal(await e.eval("(+ 1 1)"), "2", "Emacs still answers");
		rmSync(join(dir, `pi-${2_000_003}.json`));
	});

	it("without file notification a timer finds pi's messages (the fallback)", async (t) => {
		const e = await startEmacs(t, { preEval: ["(setq pi-ide-inbox-use-file-notify nil)"] });
		assert.match(await e.eval("(pi-ide-status)"), /pi's messages: looked for every 0.5s/);
		const file = join(e.dir, "d.txt");
		await openFile(e, file, "one\n");
		writeFileSync(file, "two\n");
		publish(e, message(e, 1, [file]));
		assert.equal((await reportOn(e, file, 1)).status, "reloaded");
		assert.equal(await bufferText(e, file), "two\n");
		assert.equal(readFileSync(file, "utf8"), "two\n");
	});
});

describe("emacs: a reload puts in exactly the bytes of its one verified read", () => {
	// The oracle is Emacs's own read: after the client's reload, `revert-buffer` must find the same text and
	// coding system (an emptied file keeps the buffer's: a revert takes the default one for no bytes).
	const FORMATS: { name: string; before: Buffer; after: Buffer }[] = [
		{ name: "lines with a final newline", before: Buffer.from("x\n"), after: Buffer.from("a\nb\n") },
		{ name: "no final newline", before: Buffer.from("x\n"), after: Buffer.from("a\nb") },
		{ name: "emptied", before: Buffer.from("x\n"), after: Buffer.from("") },
		{ name: "CRLF (a dos coding system)", before: Buffer.from("x\r\ny\r\n"), after: Buffer.from("a\r\nb\r\n") },
		{ name: "UTF-8", before: Buffer.from("é\n"), after: Buffer.from("café ☕ 😀\n") },
		{ name: "latin-1", before: Buffer.from([0x78, 0xe9, 0x0a]), after: Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]) },
	];
	for (const [i, c] of FORMATS.entries()) {
		it(`reads as Emacs reads: ${c.name}`, async (t) => {
			const e = await startEmacs(t);
			const file = join(e.dir, "f.txt");
			writeFileSync(file, c.before);
			await e.act(`(find-file ${elispString(file)})`);
			await e.until((s) => (s?.active_buffer.file === file ? true : undefined), `${file} open`);
			writeFileSync(file, c.after);
			publish(e, message(e, i + 1, [file]));
			assert.equal((await reportOn(e, file, i + 1)).status, "reloaded");
			const read = `(with-current-buffer (find-buffer-visiting ${elispString(file)})
				(vector (buffer-string) ${c.after.length === 0 ? '""' : "(symbol-name buffer-file-coding-system)"}
						(if (buffer-modified-p) t :false)))`;
			const ours = await e.json(read);
			await e.eval(`(with-current-buffer (find-buffer-visiting ${elispString(file)}) (revert-buffer t t t) t)`);
			assert.deepEqual(ours, await e.json(read));
		});
	}

	// Issue 22: another user flips the path between the user's file and a symlink to a 0600 secret while pi's
	// messages arrive. Observers in Emacs (find-file-hook, after-revert-hook, the buffer's
	// after-change-functions) record any content with the secret; afterwards Emacs's record of the file is up
	// to date (no "changed on disk").
	it("under a symlink race no hook ever sees the secret, and the visited file's modtime is current", async (t) => {
		const e = await startEmacs(t);
		const file = join(e.dir, "a.txt");
		const secret = join(e.dir, "secret.txt");
		writeFileSync(secret, "SECRET\n", { mode: 0o600 });
		await openFile(e, file, "v0\n");
		await e.eval(`(progn
			(defvar pi-test-leaks nil)
			(defun pi-test-look (where) (when (string-match-p "SECRET" (buffer-string)) (push where pi-test-leaks)))
			(add-hook 'find-file-hook (lambda () (pi-test-look "find-file-hook")))
			(add-hook 'after-revert-hook (lambda () (pi-test-look "after-revert-hook")))
			(with-current-buffer (find-buffer-visiting ${elispString(file)})
				(add-hook 'after-change-functions (lambda (&rest _) (pi-test-look "after-change")) nil t))
			t)`);
		const flipper = await startFlipper(t, file, secret);
		const statuses: string[] = [];
		// Handled at once (the message processed directly; its report, the buffer and the leaks read in the same
		// call), 300 times.
		const ROUNDS = 300;
		for (let seq = 1; seq <= ROUNDS; seq++) {
			writeFileSync(keepPath(file), `v${seq}\n`);
			publish(e, message(e, seq, [file]));
			const [status, text, leaks] = await e.json<[string, string, string[]]>(`(progn
				(pi-ide-inbox-process ${elispString(`pi-${process.pid}.json`)})
				(vector (or (alist-get 'status (seq-find (lambda (r) (eql (alist-get 'seq r) ${seq})) pi-ide-inbox--reports))
							"none")
						(with-current-buffer (find-buffer-visiting ${elispString(file)}) (buffer-string))
						(vconcat pi-test-leaks)))`);
			statuses.push(status);
			const said = `after message ${seq} (${statuses.join(" ")})`;
			assert.match(text, /^v\d+\n$/, said);
			assert.deepEqual(leaks, [], said);
		}
		await flipper.stop();
		// The race let some reloads through: the test saw reads during it, not only refusals.
		assert.ok(statuses.includes("reloaded"), statuses.join(" "));
		writeFileSync(file, "final\n");
		publish(e, message(e, ROUNDS + 1, [file]));
		assert.equal((await reportOn(e, file, ROUNDS + 1)).status, "reloaded");
		assert.equal(await bufferText(e, file), "final\n");
		const buffer = `(find-buffer-visiting ${elispString(file)})`;
		assert.equal(await e.json(`(if (verify-visited-file-modtime ${buffer}) t :false)`), true, "no changed on disk");
		assert.equal(await e.json(`(if (buffer-modified-p ${buffer}) t :false)`), false);
		assert.deepEqual(await e.json("(or pi-test-leaks [])"), []);
	});
});
