/**
 * A Vim without a UI is a script (`vim -es`, a plugin manager's batch run): the client writes nothing, even
 * when asked to write at once, and says so in :PiIde. It still exports PI_IDE_EDITOR_PID (harmless: nothing
 * has a state file to match it).
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { it } from "node:test";
import { makeVimDirs, runVimScript, vimString } from "../helpers/vim.ts";

it("vim -es: the client is enabled but writes no state file", (t) => {
	const dirs = makeVimDirs(t);
	const out = join(dirs.root, "out.txt");
	runVimScript(dirs, [
		"runtime plugin/pi-ide.vim",
		"call pi_ide#Enable()",
		"edit a.txt",
		"call setline(1, 'x')",
		"call pi_ide#WriteForTest()",
		"sleep 400m",
		`call writefile([json_encode(pi_ide#Status()), $PI_IDE_EDITOR_PID, string(getpid()), join(pi_ide#Summary(), "\\n")], ${vimString(out)})`,
	]);
	const [status, exported, pid, summary] = readFileSync(out, "utf8").split("\n");
	const s = JSON.parse(status ?? "{}") as { enabled: boolean; ui: boolean; writes: number };
	assert.equal(s.enabled, true);
	assert.equal(s.ui, false);
	assert.equal(s.writes, 0);
	assert.equal(exported, pid);
	assert.match(summary ?? "", /no UI/);
	assert.ok(!existsSync(dirs.stateDir) || readdirSync(dirs.stateDir).length === 0);
});
