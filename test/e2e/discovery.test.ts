/**
 * Print mode, negative and discovery cases: which state files and editors the extension may trust at all,
 * and when it must not auto-connect. Every negative carries its own positive control in the same pi run
 * (`assertBlockedUntilRepaired`): no block for the first prompt, the one wrong thing is fixed, a block for
 * the second. Cases that pair a good editor A with a refused file for a second live editor B prove the
 * refusal another way: were B accepted, two candidates would share the tier and nothing would be injected.
 */
import assert from "node:assert/strict";
import {
	chmodSync,
	chownSync,
	existsSync,
	mkdirSync,
	renameSync,
	statSync,
	symlinkSync,
	unlinkSync,
	utimesSync,
	writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import {
	deadPid,
	killAllEditors,
	makeState,
	spawnLiveEditor,
	writeOversizedStateFile,
	writeRawStateFile,
	writeStateFile,
	writeSymlinkedStateFile,
	writeTmpStateFile,
} from "../helpers/editors.ts";
import { injectedAfter } from "../helpers/fake-llm.ts";
import { runPrint } from "../helpers/pi-env.ts";
import {
	assertBlockedUntilRepaired,
	assertExitsPromptly,
	envFor,
	fileLine,
	placeEditor,
	promptOnce,
	replaceEditor,
	rewriteEditor,
	theBlock,
	touch,
} from "../helpers/scenario.ts";

const NOBODY = 65534;

describe("discovery: which editors are trusted and connected", { concurrency: 4 }, () => {
	after(killAllEditors);

	test("no state dir at all: no block; once an editor creates it, the next prompt has one", async (t) => {
		const env = await envFor(t, { createStateDir: false });
		const file = touch(env.workDir, "src/main.ts");
		await assertBlockedUntilRepaired(
			env,
			async () => {
				mkdirSync(env.stateDir, { recursive: true, mode: 0o700 });
				chmodSync(env.stateDir, 0o700);
				await placeEditor(env, { active_buffer: { file } });
			},
			file,
		);
	});

	test("two live editors in the same tier: no auto-connect until one exits", async (t) => {
		const env = await envFor(t);
		const a = touch(env.workDir, "a.ts");
		await placeEditor(env, { active_buffer: { file: a } });
		const b = await placeEditor(env, { active_buffer: { file: touch(env.workDir, "b.ts") } });
		await assertBlockedUntilRepaired(env, () => b.kill(), a);
	});

	test("dead pid: its leftover file is ignored, and removed", async (t) => {
		const env = await envFor(t);
		const file = touch(env.workDir, "src/main.ts");
		const state = makeState({ pid: await deadPid(), cwd: env.workDir, active_buffer: { file } });
		const path = writeStateFile(env.stateDir, state);
		await assertBlockedUntilRepaired(
			env,
			async () => {
				assert.equal(existsSync(path), false, "the first prompt's scan removed the leftover");
				const live = await spawnLiveEditor();
				writeStateFile(env.stateDir, { ...state, pid: live.pid });
			},
			file,
		);
	});

	test("dead editor next to a live one: the live one is the only candidate", async (t) => {
		const env = await envFor(t);
		writeStateFile(
			env.stateDir,
			makeState({ pid: await deadPid(), cwd: env.workDir, active_buffer: { file: touch(env.workDir, "dead.ts") } }),
		);
		const live = touch(env.workDir, "live.ts");
		await placeEditor(env, { active_buffer: { file: live } });
		assert.equal(fileLine(theBlock(await promptOnce(env))), live);
	});

	test("a killed editor's file is ignored once it has died (same pid, file left behind)", async (t) => {
		const env = await envFor(t);
		const file = touch(env.workDir, "src/main.ts");
		const editor = await placeEditor(env, { active_buffer: { file } });
		await editor.kill();
		await assertBlockedUntilRepaired(
			env,
			() => placeEditor(env, { active_buffer: { file } }).then(() => undefined),
			file,
		);
	});

	for (const mode of [0o750, 0o705]) {
		test(`insecure state dir (mode ${mode.toString(8)}): nothing is read until it is 0700`, async (t) => {
			const env = await envFor(t);
			const file = touch(env.workDir, "src/main.ts");
			await placeEditor(env, { active_buffer: { file } });
			chmodSync(env.stateDir, mode);
			await assertBlockedUntilRepaired(env, () => chmodSync(env.stateDir, 0o700), file);
		});
	}

	test("state dir owned by another user: nothing is read", async (t) => {
		const env = await envFor(t);
		const file = touch(env.workDir, "src/main.ts");
		await placeEditor(env, { active_buffer: { file } });
		chownSync(env.stateDir, NOBODY, NOBODY);
		await assertBlockedUntilRepaired(env, () => chownSync(env.stateDir, process.getuid?.() ?? 0, 0), file);
	});

	test("state dir that is a symlink to a private dir: nothing is read", async (t) => {
		const env = await envFor(t, { createStateDir: false });
		const real = join(env.root, "elsewhere");
		mkdirSync(real, { mode: 0o700 });
		chmodSync(real, 0o700);
		symlinkSync(real, env.stateDir);
		const file = touch(env.workDir, "src/main.ts");
		await placeEditor(env, { active_buffer: { file } }, real);
		await assertBlockedUntilRepaired(
			env,
			() => {
				unlinkSync(env.stateDir);
				renameSync(real, env.stateDir);
			},
			file,
		);
	});

	test("symlinked state file: refused; the same content as a regular file is accepted", async (t) => {
		const env = await envFor(t);
		const editor = await spawnLiveEditor();
		const outside = join(env.root, "outside");
		mkdirSync(outside);
		const file = touch(env.workDir, "src/main.ts");
		const state = makeState({ pid: editor.pid, cwd: env.workDir, active_buffer: { file } });
		const link = writeSymlinkedStateFile(env.stateDir, outside, state);
		await assertBlockedUntilRepaired(
			env,
			async () => {
				unlinkSync(link);
				const next = await spawnLiveEditor();
				writeStateFile(env.stateDir, { ...state, pid: next.pid });
			},
			file,
		);
	});

	test("symlinked state file next to a good one: only the good one counts", async (t) => {
		const env = await envFor(t);
		const good = touch(env.workDir, "good.ts");
		await placeEditor(env, { active_buffer: { file: good } });
		const other = await spawnLiveEditor();
		const outside = join(env.root, "outside");
		mkdirSync(outside);
		writeSymlinkedStateFile(env.stateDir, outside, makeState({ pid: other.pid, cwd: env.workDir }));
		assert.equal(fileLine(theBlock(await promptOnce(env))), good);
	});

	test("malformed JSON and schema-invalid files next to a good one: the good one still works", async (t) => {
		const env = await envFor(t);
		const good = touch(env.workDir, "good.ts");
		await placeEditor(env, { active_buffer: { file: good } });
		const broken = await spawnLiveEditor();
		writeRawStateFile(env.stateDir, `${broken.pid}.json`, '{"pid": 12, "cwd": "/tmp", "timest');
		const invalid = await spawnLiveEditor();
		const state = makeState({ pid: invalid.pid, cwd: env.workDir });
		writeRawStateFile(
			env.stateDir,
			`${invalid.pid}.json`,
			JSON.stringify({ ...state, active_buffer: { ...state.active_buffer, cursor: { line: "42", column: 0 } } }),
		);
		writeRawStateFile(env.stateDir, "999999.json", "[]");
		assert.equal(fileLine(theBlock(await promptOnce(env))), good);
	});

	test("a schema-invalid file alone: no block until the editor writes a valid one", async (t) => {
		const env = await envFor(t);
		const editor = await spawnLiveEditor();
		const file = touch(env.workDir, "src/main.ts");
		const state = makeState({ pid: editor.pid, cwd: env.workDir, active_buffer: { file } });
		writeRawStateFile(env.stateDir, `${editor.pid}.json`, JSON.stringify({ ...state, cwd: 42 }));
		await assertBlockedUntilRepaired(
			env,
			async () => {
				unlinkSync(join(env.stateDir, `${editor.pid}.json`));
				writeStateFile(env.stateDir, { ...state, pid: (await spawnLiveEditor()).pid });
			},
			file,
		);
	});

	test("unknown fields are tolerated", async (t) => {
		const env = await envFor(t);
		const editor = await spawnLiveEditor();
		const file = touch(env.workDir, "src/main.ts");
		const state = makeState({ pid: editor.pid, cwd: env.workDir, active_buffer: { file } });
		writeStateFile(env.stateDir, {
			...state,
			future_field: { x: 1 },
			active_buffer: { ...state.active_buffer, folds: [1] },
		});
		assert.equal(fileLine(theBlock(await promptOnce(env))), file);
	});

	test("oversized state file (> 1 MiB) is refused unread", async (t) => {
		const env = await envFor(t);
		const good = touch(env.workDir, "good.ts");
		await placeEditor(env, { active_buffer: { file: good } });
		const big = await spawnLiveEditor();
		writeOversizedStateFile(env.stateDir, makeState({ pid: big.pid, cwd: env.workDir }));
		assert.equal(fileLine(theBlock(await promptOnce(env))), good);
	});

	test("oversized state file alone: no block; the same state under 1 MiB is accepted", async (t) => {
		const env = await envFor(t);
		const big = await spawnLiveEditor();
		const file = touch(env.workDir, "src/main.ts");
		const state = makeState({ pid: big.pid, cwd: env.workDir, active_buffer: { file } });
		writeOversizedStateFile(env.stateDir, state);
		await assertBlockedUntilRepaired(
			env,
			() => void writeOversizedStateFile(env.stateDir, state, 1024 * 1024 - 64),
			file,
		);
	});

	test("file name that does not match the pid field is refused", async (t) => {
		const env = await envFor(t);
		const editor = await spawnLiveEditor();
		const decoy = await spawnLiveEditor();
		const file = touch(env.workDir, "src/main.ts");
		const state = makeState({ pid: editor.pid, cwd: env.workDir, active_buffer: { file } });
		const path = writeStateFile(env.stateDir, state, { name: `${decoy.pid}.json` });
		await assertBlockedUntilRepaired(env, () => renameSync(path, join(env.stateDir, `${editor.pid}.json`)), file);
	});

	for (const name of ["editor.json", "0x1f.json", "-PID.json", "PID.json.bak", "PID.JSON", " PID.json"]) {
		test(`wrong-name file "${name}" is ignored`, async (t) => {
			const env = await envFor(t);
			const editor = await spawnLiveEditor();
			const file = touch(env.workDir, "src/main.ts");
			const state = makeState({ pid: editor.pid, cwd: env.workDir, active_buffer: { file } });
			const path = writeStateFile(env.stateDir, state, { name: name.replace("PID", String(editor.pid)) });
			await assertBlockedUntilRepaired(env, () => renameSync(path, join(env.stateDir, `${editor.pid}.json`)), file);
		});
	}

	test("an in-flight <pid>.json.tmp is ignored until it is renamed into place", async (t) => {
		const env = await envFor(t);
		const editor = await spawnLiveEditor();
		const file = touch(env.workDir, "src/main.ts");
		const path = writeTmpStateFile(
			env.stateDir,
			makeState({ pid: editor.pid, cwd: env.workDir, active_buffer: { file } }),
		);
		await assertBlockedUntilRepaired(env, () => renameSync(path, join(env.stateDir, `${editor.pid}.json`)), file);
	});

	test("state file owned by another user is refused", async (t) => {
		const env = await envFor(t);
		const file = touch(env.workDir, "src/main.ts");
		const foreign = await placeEditor(env, { active_buffer: { file } });
		chownSync(foreign.path, NOBODY, NOBODY);
		await assertBlockedUntilRepaired(env, () => replaceEditor(env, foreign).then(() => undefined), file);
	});

	test("a directory named <pid>.json is not a state file", async (t) => {
		const env = await envFor(t);
		const good = touch(env.workDir, "good.ts");
		await placeEditor(env, { active_buffer: { file: good } });
		const other = await spawnLiveEditor();
		mkdirSync(join(env.stateDir, `${other.pid}.json`));
		writeFileSync(join(env.stateDir, `${other.pid}.json`, "x"), "{}");
		assert.equal(fileLine(theBlock(await promptOnce(env))), good);
	});

	test("a non-connected editor's state file rewritten right before a prompt is judged by its new content", async (t) => {
		const env = await envFor(t);
		mkdirSync(join(env.root, "other"));
		const file = touch(env.root, "other/x.ts");
		// Not in this project: no candidate. The same editor then `:cd`s into pi's cwd and writes its file.
		const editor = await placeEditor(env, { cwd: join(env.root, "other"), active_buffer: { file } });
		await assertBlockedUntilRepaired(env, () => rewriteEditor(env, editor, { cwd: env.workDir }), file);
	});

	test("an ownership fix alone (chown back to the user) is noticed by the next prompt", async (t) => {
		const env = await envFor(t);
		const file = touch(env.workDir, "src/main.ts");
		const editor = await placeEditor(env, { active_buffer: { file } });
		chownSync(editor.path, NOBODY, NOBODY);
		// As pi's own scan leaves it: read after its last write (atime > mtime), which chokidar's change filter
		// looks at; a chown touches neither timestamp.
		const { mtime } = statSync(editor.path);
		utimesSync(editor.path, new Date(mtime.getTime() + 60_000), mtime);
		await assertBlockedUntilRepaired(env, () => chownSync(editor.path, process.getuid?.() ?? 0, 0), file);
	});

	test("the state file is re-read for every prompt: an atomic replace between prompts is followed", async (t) => {
		const env = await envFor(t);
		const one = touch(env.workDir, "one.ts");
		const two = touch(env.workDir, "two.ts");
		const editor = await placeEditor(env, { active_buffer: { file: one } });
		env.model.beforeReply = (_request, index) => {
			if (index !== 0) return;
			const tmp = join(env.stateDir, `${editor.pid}.json.tmp`);
			writeFileSync(
				tmp,
				JSON.stringify(makeState({ pid: editor.pid, cwd: env.workDir, active_buffer: { file: two } })),
			);
			renameSync(tmp, editor.path);
		};
		const result = await runPrint(env, ["one?", "two?"]);
		assert.equal(result.code, 0, result.stderr);
		const last = env.model.requests[1];
		assert.equal(fileLine(injectedAfter(last, "one?")[0] ?? ""), one);
		assert.equal(fileLine(injectedAfter(last, "two?")[0] ?? ""), two);
	});

	test("pi -p exits promptly with no editor either", async (t) => {
		const env = await envFor(t);
		await assertExitsPromptly(env);
	});
});
