/**
 * Vim9 script compiles a `def` function when it is first called, so a type error in a rarely taken path (a
 * notice, :PiIde) would surface only when a user hits it. `:defcompile` at the end of each autoload script
 * compiles every function in it now; any error fails this test.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { it } from "node:test";
import { makeVimDirs, runVimScript, VIM_PLUGIN_DIR, vimString } from "../helpers/vim.ts";

const SCRIPTS = [
	"autoload/pi_ide.vim",
	...readdirSync(join(VIM_PLUGIN_DIR, "autoload/pi_ide")).map((f) => `autoload/pi_ide/${f}`),
];

it("vim: every function of the client compiles", (t) => {
	const dirs = makeVimDirs(t);
	const errors = join(dirs.root, "errors.txt");
	const commands: string[] = [`call writefile([], ${vimString(errors)})`];
	for (const script of SCRIPTS) {
		const copy = join(dirs.root, script.replaceAll("/", "-"));
		writeFileSync(copy, `${readFileSync(join(VIM_PLUGIN_DIR, script), "utf8")}\ndefcompile\n`);
		commands.push(
			`try | source ${copy} | catch | call writefile([${vimString(script)} . ': ' . v:exception], ${vimString(errors)}, 'a') | endtry`,
		);
	}
	// One script of those commands: Vim takes at most 10 `-c` arguments.
	const all = join(dirs.root, "compile-all.vim");
	writeFileSync(all, `${commands.join("\n")}\n`);
	runVimScript(dirs, [`source ${all}`]);
	assert.equal(readFileSync(errors, "utf8"), "");
});
