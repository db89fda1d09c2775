/**
 * The state file on disk, written by a real Neovim: permissions (dir 0700, file 0600), atomic writes that
 * leave no temp file, deletion on :qa!, SIGTERM and disable, and the refusals: a state dir that is group/other
 * accessible, owned by someone else, a symlink or not a directory gets nothing written into it, with one
 * warning (not one per event), shown in :PiIde and :checkhealth. A symlink at the temp path is refused.
 */
import assert from "node:assert/strict";
import {
	chmodSync,
	chownSync,
	existsSync,
	lstatSync,
	mkdirSync,
	readdirSync,
	readFileSync,
	statSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { forEachNvim, type Nvim, startNvim } from "../helpers/nvim.ts";

/** Capture vim.notify before the plugin loads, so even a warning at startup is seen. */
const CAPTURE_NOTIFY =
	"lua _G.notes = {}; vim.notify = function(msg, level) table.insert(_G.notes, { msg = msg, level = level }) end";

interface Note {
	msg: string;
	level: number;
}
const notes = (nv: Nvim) => nv.lua<Note[]>("return _G.notes");
const WARN = 3;

/** Force another write attempt (a prompt one) and wait until the plugin has made it. */
async function attempt(nv: Nvim, dir: string): Promise<void> {
	const before = await nv.status();
	await nv.command(`cd ${dir}`);
	await nv.untilStatus(
		(s) => s.writes + s.failures + s.skipped > before.writes + before.failures + before.skipped,
		`a write attempt after :cd ${dir}`,
	);
}

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: the state file on disk`, { concurrency: 8 }, () => {
		it("creates the dir 0700 and the file 0600, leaves no temp file", async (t) => {
			const nv = await startNvim(t, flavour);
			await nv.until(() => true, "first write");
			assert.equal(statSync(nv.stateDir).mode & 0o777, 0o700);
			assert.equal(lstatSync(nv.statePath).mode & 0o777, 0o600);
			assert.ok(lstatSync(nv.statePath).isFile());
			for (let i = 0; i < 5; i++) await attempt(nv, i % 2 ? nv.tmp : "/");
			assert.deepEqual(readdirSync(nv.stateDir), [`${nv.pid}.json`]);
			assert.equal(lstatSync(nv.statePath).mode & 0o777, 0o600);
		});

		it("state dir: $XDG_RUNTIME_DIR/pi-ide, else /tmp/pi-ide", async (t) => {
			const nv = await startNvim(t, flavour);
			assert.deepEqual(
				await nv.lua(
					"local w = require('pi-ide.writer'); return { w.state_dir(nil), w.state_dir(''), w.state_dir('/run/user/7/'), w.state_dir('/x'), w.state_dir('run/rel') }",
				),
				["/tmp/pi-ide", "/tmp/pi-ide", "/run/user/7/pi-ide", "/x/pi-ide", "/tmp/pi-ide"],
			);
			assert.equal((await nv.status()).dir, nv.stateDir);
		});

		it("deletes the file on :qa!", async (t) => {
			const nv = await startNvim(t, flavour);
			await nv.until(() => true, "first write");
			assert.deepEqual(await nv.quit(), { code: 0, signal: null });
			assert.deepEqual(readdirSync(nv.stateDir), []);
		});

		it("deletes the file on SIGTERM", async (t) => {
			const nv = await startNvim(t, flavour);
			await nv.until(() => true, "first write");
			nv.proc.kill("SIGTERM");
			await nv.exited;
			assert.deepEqual(readdirSync(nv.stateDir), []);
		});

		it(":PiIde disable deletes the file and stops writing; :PiIde enable brings it back", async (t) => {
			const nv = await startNvim(t, flavour);
			await nv.until(() => true, "first write");
			await nv.command("PiIde disable");
			assert.equal(existsSync(nv.statePath), false);
			const writes = (await nv.status()).writes;
			await nv.command("cd /");
			await nv.call("nvim_buf_set_lines", 0, 0, -1, false, ["a", "b"]);
			await nv.settle();
			assert.equal((await nv.status()).writes, writes, "no write while disabled");
			assert.equal(existsSync(nv.statePath), false);
			await nv.command("PiIde enable");
			const s = await nv.until((x) => x.cwd === "/", "written again after enable");
			assert.equal(s.active_buffer.lines_total, 2);
		});

		it("a stale temp file of ours is replaced; a symlink at the temp path is refused", async (t) => {
			const nv = await startNvim(t, flavour, { preCmds: [CAPTURE_NOTIFY] });
			await nv.until(() => true, "first write");
			const tmpPath = `${nv.statePath}.tmp`;
			writeFileSync(tmpPath, "left over by a crash", { mode: 0o600 });
			await attempt(nv, "/");
			await nv.until((x) => x.cwd === "/", "written despite the stale temp file");
			assert.deepEqual(readdirSync(nv.stateDir), [`${nv.pid}.json`]);

			const target = join(nv.tmp, "victim.txt");
			writeFileSync(target, "keep me");
			symlinkSync(target, tmpPath);
			await attempt(nv, nv.tmp);
			const st = await nv.status();
			assert.match(st.last_error ?? "", /not our temp file/);
			assert.equal(readFileSync(target, "utf8"), "keep me", "the link's target is untouched");
			assert.equal(nv.readState()?.cwd, "/", "the old state stays");
			const warnings = (await notes(nv)).filter((n) => n.level === WARN);
			assert.equal(warnings.length, 1, JSON.stringify(warnings));
		});

		const REFUSALS: { name: string; make: (dir: string, nv: Nvim) => void; reason: RegExp }[] = [
			{
				name: "group-readable (0750)",
				make: (dir) => {
					mkdirSync(dir);
					chmodSync(dir, 0o750);
				},
				reason: /mode 750: others could read your selection/,
			},
			{
				name: "other-accessible (0701)",
				make: (dir) => {
					mkdirSync(dir);
					chmodSync(dir, 0o701);
				},
				reason: /mode 701/,
			},
			{
				name: "owned by another user (nobody)",
				make: (dir) => {
					mkdirSync(dir, { mode: 0o700 });
					chmodSync(dir, 0o700);
					chownSync(dir, 65534, 65534);
				},
				reason: /owned by uid 65534, not by you/,
			},
			{
				name: "a symlink to a private dir of ours",
				make: (dir, nv) => {
					const real = join(nv.tmp, "real");
					mkdirSync(real, { mode: 0o700 });
					chmodSync(real, 0o700);
					symlinkSync(real, dir);
				},
				reason: /symbolic link; refusing to follow it/,
			},
			{
				name: "a regular file",
				make: (dir) => writeFileSync(dir, ""),
				reason: /is a file, not a directory/,
			},
		];

		for (const refusal of REFUSALS) {
			it(`refuses a state dir that is ${refusal.name}: no file, one warning, :PiIde and :checkhealth say why`, async (t) => {
				// The dir must exist before Neovim starts: start with a runtime dir we prepare first.
				const nv = await startNvim(t, flavour, { preCmds: [CAPTURE_NOTIFY, "let g:pi_ide_disable = 1"] });
				refusal.make(nv.stateDir, nv);
				await nv.command("PiIde enable");
				await nv.untilStatus((s) => s.failures > 0, "a refused write");
				for (let i = 0; i < 3; i++) await attempt(nv, i % 2 ? nv.tmp : "/");
				const st = await nv.status();
				assert.ok(st.failures >= 4, `every attempt was refused (${st.failures})`);
				assert.equal(st.writes, 0);
				assert.match(st.last_error ?? "", refusal.reason);
				assert.equal(existsSync(join(nv.tmp, "real", `${nv.pid}.json`)), false, "nothing behind a symlink");
				assert.equal(existsSync(nv.statePath), false);
				const warnings = (await notes(nv)).filter((n) => n.level === WARN);
				assert.equal(warnings.length, 1, `one warning, not a stream: ${JSON.stringify(warnings)}`);
				assert.match(warnings[0]?.msg ?? "", refusal.reason);

				const summary = await nv.exec("PiIde");
				assert.match(summary, /problem: /);
				assert.match(summary, refusal.reason);
				await nv.command("checkhealth pi-ide");
				const health = (await nv.call<string[]>("nvim_buf_get_lines", 0, 0, -1, false)).join("\n");
				assert.match(health, /ERROR/);
				assert.match(health, refusal.reason);
			});
		}
	});
});
