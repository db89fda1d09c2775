/**
 * Print mode: which project an editor belongs to (tiers, real paths, argv evidence) and the ignore rules
 * (global `<agent-dir>/ide-context.ignore`, project `.pi/ide-context.local.ignore`, gitignore syntax). Each
 * negative carries its positive control in the same pi run: the one wrong thing is fixed between two prompts.
 */
import assert from "node:assert/strict";
import { mkdirSync, realpathSync, rmdirSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { killAllEditors, makeSelection } from "../helpers/editors.ts";
import type { PiEnv } from "../helpers/pi-env.ts";
import {
	assertBlockedUntilRepaired,
	assertNoBlock,
	envFor,
	fileLine,
	firstFence,
	placeEditor,
	promptOnce,
	replaceEditor,
	theBlock,
	touch,
} from "../helpers/scenario.ts";

/** `<root>/other/<relative>`: a sibling of pi's work dir, i.e. outside pi's cwd. */
const outside = (env: PiEnv, relative: string) => touch(env.root, join("other", relative));

describe("tiers: which editor belongs to this project", { concurrency: 4 }, () => {
	after(killAllEditors);

	test("argv directory (nvim work/ from the parent) matches: tier 1", async (t) => {
		const env = await envFor(t);
		const file = outside(env, "notes.ts");
		await placeEditor(env, { cwd: env.root, argv: ["work/"], active_buffer: { file } });
		assert.equal(fileLine(theBlock(await promptOnce(env))), file);
	});

	test("argv is resolved against the editor's cwd, not pi's", async (t) => {
		const env = await envFor(t);
		mkdirSync(join(env.workDir, "sub"));
		const file = outside(env, "x.ts");
		// `sub` exists under pi's cwd but not under the editor's cwd: no evidence.
		const editor = await placeEditor(env, { cwd: join(env.root, "other"), argv: ["sub"], active_buffer: { file } });
		// Control: an argv that does resolve, from the editor's cwd, into pi's cwd.
		await assertBlockedUntilRepaired(env, () => replaceEditor(env, editor, { argv: ["../work/sub"] }), file);
	});

	test("argv entries that are files, flags or missing dirs are no evidence", async (t) => {
		const env = await envFor(t);
		touch(env.workDir, "README.md");
		const file = outside(env, "x.ts");
		const argv = ["-O", "work/README.md", "work/missing/", "+42"];
		const editor = await placeEditor(env, { cwd: env.root, argv, active_buffer: { file } });
		await assertBlockedUntilRepaired(env, () => replaceEditor(env, editor, { argv: [...argv, "work/"] }), file);
	});

	test("absolute active file inside pi's cwd matches, whatever the editor's cwd", async (t) => {
		const env = await envFor(t);
		mkdirSync(join(env.root, "elsewhere"));
		const file = touch(env.workDir, "src/main.ts");
		await placeEditor(env, { cwd: join(env.root, "elsewhere"), active_buffer: { file } });
		assert.equal(fileLine(theBlock(await promptOnce(env))), file);
	});

	test("editor cwd inside pi's cwd matches", async (t) => {
		const env = await envFor(t);
		const file = outside(env, "x.ts");
		mkdirSync(join(env.workDir, "packages/app"), { recursive: true });
		await placeEditor(env, { cwd: join(env.workDir, "packages/app"), active_buffer: { file } });
		assert.equal(fileLine(theBlock(await promptOnce(env))), file);
	});

	test("an ancestor cwd alone is no evidence", async (t) => {
		const env = await envFor(t);
		const file = outside(env, "x.ts");
		const editor = await placeEditor(env, { cwd: env.root, active_buffer: { file } });
		await assertBlockedUntilRepaired(env, () => replaceEditor(env, editor, { argv: ["work"] }), file);
	});

	test("an unrelated editor does not match", async (t) => {
		const env = await envFor(t);
		const file = outside(env, "x.ts");
		const editor = await placeEditor(env, { cwd: join(env.root, "other"), active_buffer: { file } });
		await assertBlockedUntilRepaired(env, () => replaceEditor(env, editor, { cwd: env.workDir }), file);
	});

	test("a relative (vault) file is no tier-1 evidence", async (t) => {
		const env = await envFor(t);
		mkdirSync(join(env.root, "vault/work"), { recursive: true });
		const editor = await placeEditor(env, {
			app: "obsidian",
			cwd: join(env.root, "vault"),
			active_buffer: { file: "work/note.md", name: "note.md", language: "markdown" },
		});
		// Control: the vault inside pi's cwd is evidence; the relative file resolves against the vault.
		mkdirSync(join(env.workDir, "vault"));
		await assertBlockedUntilRepaired(
			env,
			() => replaceEditor(env, editor, { cwd: join(env.workDir, "vault") }),
			join(env.workDir, "vault/work/note.md"),
		);
	});

	test("tiers never mix: a tier-0 editor wins over a tier-1 editor", async (t) => {
		const env = await envFor(t);
		const exact = touch(env.workDir, "exact.ts");
		await placeEditor(env, { active_buffer: { file: exact } });
		mkdirSync(join(env.workDir, "sub"));
		await placeEditor(env, {
			cwd: join(env.workDir, "sub"),
			active_buffer: { file: touch(env.workDir, "sub/inner.ts") },
		});
		assert.equal(fileLine(theBlock(await promptOnce(env))), exact);
	});

	test("two tier-1 editors and no tier-0: no auto-connect until one exits", async (t) => {
		const env = await envFor(t);
		mkdirSync(join(env.workDir, "a"));
		mkdirSync(join(env.workDir, "b"));
		const a = await placeEditor(env, {
			cwd: join(env.workDir, "a"),
			active_buffer: { file: touch(env.workDir, "a/x.ts") },
		});
		const b = await placeEditor(env, { cwd: join(env.workDir, "b") });
		await assertBlockedUntilRepaired(env, () => b.kill(), a.state.active_buffer.file);
	});

	test("real paths: a cwd reached through a symlink, with a trailing slash, is tier 0", async (t) => {
		const env = await envFor(t);
		const link = join(env.root, "link-to-work");
		symlinkSync(env.workDir, link);
		const viaLink = touch(env.workDir, "via-link.ts");
		await placeEditor(env, { cwd: `${link}/`, active_buffer: { file: viaLink } });
		mkdirSync(join(env.workDir, "sub"));
		await placeEditor(env, {
			cwd: join(env.workDir, "sub"),
			active_buffer: { file: touch(env.workDir, "sub/tier1.ts") },
		});
		assert.equal(fileLine(theBlock(await promptOnce(env))), viaLink);
	});
});

describe("ignore rules", { concurrency: 4 }, () => {
	after(killAllEditors);

	const globalPath = (env: PiEnv) => join(env.agentDir, "ide-context.ignore");
	const projectPath = (env: PiEnv) => join(env.workDir, ".pi/ide-context.local.ignore");
	const globalRules = (env: PiEnv, rules: string) => writeFileSync(globalPath(env), rules);
	const projectRules = (env: PiEnv, rules: string) => touch(env.workDir, ".pi/ide-context.local.ignore", rules);
	const freshSelection = () => makeSelection("const SECRET_MARKER = 'hunter2';", { ageSeconds: 1 });

	test("global rule excludes a file: no block, no selection", async (t) => {
		const env = await envFor(t);
		globalRules(env, "# secrets stay out\nsecrets/\n");
		const file = touch(env.workDir, "secrets/key.ts");
		await placeEditor(env, { active_buffer: { file, selection: freshSelection() } });
		const { second } = await assertBlockedUntilRepaired(env, () => globalRules(env, "# nothing\n"), file);
		assert.match(second[0] ?? "", /SECRET_MARKER/, "rules are re-read per prompt; the control has the selection");
	});

	test("global rule that does not match leaves the block alone", async (t) => {
		const env = await envFor(t);
		globalRules(env, "secrets/\n*.pem\n");
		const file = touch(env.workDir, "src/main.ts");
		await placeEditor(env, { active_buffer: { file, selection: freshSelection() } });
		const block = theBlock(await promptOnce(env));
		assert.equal(fileLine(block), file);
		assert.match(firstFence(block)?.body ?? "", /SECRET_MARKER/);
	});

	test("project rule negates a global rule (!keep.env)", async (t) => {
		const env = await envFor(t);
		globalRules(env, "*.env\n");
		projectRules(env, "!keep.env\n");
		const file = touch(env.workDir, "config/keep.env", "A=1\n");
		await placeEditor(env, { active_buffer: { file, language: null } });
		assert.equal(fileLine(theBlock(await promptOnce(env, ["--approve"]))), file);
	});

	test("the negation is specific: another .env stays excluded", async (t) => {
		const env = await envFor(t);
		globalRules(env, "*.env\n");
		projectRules(env, "!keep.env\n");
		const file = touch(env.workDir, "config/prod.env", "A=1\n");
		await placeEditor(env, { active_buffer: { file, language: null } });
		await assertBlockedUntilRepaired(env, () => void projectRules(env, "!keep.env\n!prod.env\n"), file, ["--approve"]);
	});

	test("project rule adds an exclusion", async (t) => {
		const env = await envFor(t);
		projectRules(env, "generated/\n");
		const file = touch(env.workDir, "generated/api.ts");
		await placeEditor(env, { active_buffer: { file, selection: freshSelection() } });
		await assertBlockedUntilRepaired(env, () => unlinkSync(projectPath(env)), file, ["--approve"]);
	});

	/**
	 * Issue 14: pi asks about trust only when `.pi/` holds something that needs it, so a fresh clone whose `.pi/`
	 * holds only the rules file counts as trusted by pi; its `!.env` must still wait for the user's own decision.
	 */
	describe("a project's negations need the user's trust, not merely pi's silence", () => {
		const cloneWithEnv = async (env: PiEnv) => {
			globalRules(env, ".env\n");
			projectRules(env, "!.env\n");
			const file = touch(env.workDir, ".env", "API_KEY=secret\n");
			await placeEditor(env, { active_buffer: { file, language: null, selection: freshSelection() } });
			return file;
		};
		const sent = (env: PiEnv, index: number) => JSON.stringify(env.model.requests[index]).includes("SECRET_MARKER");

		test("an untrusted clone's !.env sends neither .env nor its selection; once trusted (/trust saves it), it does", async (t) => {
			const env = await envFor(t);
			const file = await cloneWithEnv(env);
			// What /trust (or pi's prompt) saves: the project's canonical path in <agent-dir>/trust.json, here next
			// to another project's decision that was there before (the file changes, it is not created).
			const trustFile = join(env.agentDir, "trust.json");
			writeFileSync(trustFile, JSON.stringify({ [join(env.root, "other")]: true }));
			const trust = () =>
				writeFileSync(
					trustFile,
					JSON.stringify({ [join(env.root, "other")]: true, [realpathSync(env.workDir)]: true }),
				);
			await assertBlockedUntilRepaired(env, trust, file);
			assert.equal(sent(env, 0), false, "the selection stayed out of the untrusted request");
			assert.equal(sent(env, 1), true, "the trusted prompt carries the selection");
		});

		test('defaultProjectTrust: "always" trusts the clone', async (t) => {
			const env = await envFor(t, { settings: { defaultProjectTrust: "always" } });
			const file = await cloneWithEnv(env);
			const outcome = await promptOnce(env);
			assert.equal(fileLine(theBlock(outcome)), file);
			assert.equal(sent(env, 0), true);
		});

		test('a saved "Do not trust" stands against the project\'s negation; --approve for this run overrides it', async (t) => {
			const env = await envFor(t);
			const file = await cloneWithEnv(env);
			writeFileSync(join(env.agentDir, "trust.json"), JSON.stringify({ [realpathSync(env.workDir)]: false }));
			assertNoBlock(await promptOnce(env));
			env.model.requests.length = 0;
			assert.equal(fileLine(theBlock(await promptOnce(env, ["--approve"]))), file);
		});
	});

	test("outside pi's cwd, global rules apply relative to the editor's cwd", async (t) => {
		const env = await envFor(t);
		globalRules(env, "/other/private.ts\n");
		const file = outside(env, "private.ts");
		await placeEditor(env, { cwd: env.root, argv: ["work"], active_buffer: { file } });
		// Control: the same anchored rule no longer matches once it names another path.
		await assertBlockedUntilRepaired(env, () => globalRules(env, "/work/other/private.ts\n"), file);
	});

	test("outside pi's cwd, project rules do not apply", async (t) => {
		const env = await envFor(t);
		projectRules(env, "private.ts\nother/\n");
		const file = outside(env, "private.ts");
		await placeEditor(env, { cwd: env.root, argv: ["work"], active_buffer: { file } });
		assert.equal(fileLine(theBlock(await promptOnce(env, ["--approve"]))), file);
	});

	test("an unreadable rules file skips injection until it is readable", async (t) => {
		const env = await envFor(t);
		mkdirSync(globalPath(env));
		const file = touch(env.workDir, "src/main.ts");
		await placeEditor(env, { active_buffer: { file } });
		await assertBlockedUntilRepaired(env, () => rmdirSync(globalPath(env)), file);
	});
});
