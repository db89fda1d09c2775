/**
 * The Vim client's writer (editors/vim/autoload/pi_ide/writer.vim) against the same table of state dir cases
 * as src/protocol/state-dir.ts and the Neovim client (test/fixtures/state-dir-cases.ts): the three cannot
 * drift apart unnoticed. One `vim -es` runs every case (the write's atomic replace is a job, awaited there).
 * `owner: "other"` passes a user name that is not the directory's owner.
 */
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { it } from "node:test";
import {
	CONTENT,
	expectedFor,
	observeCase,
	PID,
	type PreparedCase,
	type Problem,
	prepareCase,
	removeCase,
	STATE_DIR_CASES,
} from "../fixtures/state-dir-cases.ts";
import { makeVimDirs, runVimScript, vimString } from "../helpers/vim.ts";

/** Runs each case of `cases.json` the way the client does and writes the problem names (or "") to out.json. */
const RUN_CASES = `vim9script
import autoload 'pi_ide/writer.vim'
def Run(c: dict<any>): string
  var user = c.other ? 'not-' .. writer.Me() : writer.Me()
  var problem: list<string> = []
  if c.op == 'check'
    problem = writer.Check(c.dir, user)
  elseif c.op == 'create'
    problem = writer.EnsureDir(c.dir, user)
  elseif c.op == 'write'
    problem = writer.EnsureDir(c.dir, user)
    if empty(problem)
      var done: list<list<string>> = []
      var job = writer.Write(c.dir, c.pid, c.content, user, (r) => {
        done->add(r)
      })
      var waited = 0
      while empty(done) && waited < 10000
        if type(job) == v:t_job
          job_status(job)
        endif
        sleep 5m
        waited += 5
      endwhile
      problem = empty(done) ? ['the write did not finish', 'timeout'] : done[0]
    endif
  elseif c.op == 'remove'
    problem = writer.Remove(c.dir, c.pid, user)
  endif
  if empty(problem)
    return ''
  endif
  return problem[0] == '' ? '(no message)' : problem[1]
enddef
var results: list<string> = []
for c in json_decode(join(readfile(g:cases), "\\n"))
  results->add(Run(c))
endfor
writefile([json_encode(results)], g:out)
`;

it("vim: writer.vim against the state dir table", (t) => {
	const dirs = makeVimDirs(t);
	const prepared: PreparedCase[] = STATE_DIR_CASES.map((c) => prepareCase(c, dirs.root));
	t.after(() => {
		for (const p of prepared) removeCase(p);
	});
	const cases = STATE_DIR_CASES.map((c, i) => ({
		op: c.op,
		dir: prepared[i]?.dir,
		other: c.owner === "other",
		pid: PID,
		content: CONTENT,
	}));
	const script = join(dirs.root, "run-cases.vim");
	writeFileSync(script, RUN_CASES);
	writeFileSync(join(dirs.root, "cases.json"), JSON.stringify(cases));
	const out = join(dirs.root, "out.json");
	runVimScript(dirs, [
		`let g:cases = ${vimString(join(dirs.root, "cases.json"))}`,
		`let g:out = ${vimString(out)}`,
		`source ${script}`,
	]);
	const results = JSON.parse(readFileSync(out, "utf8")) as string[];
	STATE_DIR_CASES.forEach((c, i) => {
		const p = prepared[i];
		assert.ok(p);
		const problem = results[i] === "" ? null : (results[i] as Problem);
		assert.deepEqual(observeCase(c, p, problem), expectedFor(c), `${c.op}: ${c.name}`);
	});
});

/** Two writes asked at once, into a directory whose name has a backslash, a newline and a tab. */
const TWO_WRITES = `vim9script
import autoload 'pi_ide/writer.vim'
var done: list<any> = []
def Ask(pid: number)
  writer.Write(g:dir, pid, '{"pid":' .. pid .. '}', writer.Me(), (r) => {
    done->add([pid, r])
  })
enddef
Ask(101)
Ask(102)
var waited = 0
while len(done) < 2 && waited < 10000
  sleep 5m
  waited += 5
endwhile
writefile([json_encode(done)], g:out)
`;

it("vim: writes asked at once are each answered, in order, whatever the directory's name holds", (t) => {
	const dirs = makeVimDirs(t);
	const dir = join(dirs.root, "odd\\ name\nwith\ttab");
	mkdirSync(dir, { mode: 0o700 });
	const script = join(dirs.root, "two-writes.vim");
	writeFileSync(script, TWO_WRITES);
	const out = join(dirs.root, "out.json");
	runVimScript(dirs, [`let g:dir = ${vimString(dir)}`, `let g:out = ${vimString(out)}`, `source ${script}`]);
	assert.deepEqual(JSON.parse(readFileSync(out, "utf8")), [
		[101, []],
		[102, []],
	]);
	for (const pid of [101, 102]) {
		assert.equal(readFileSync(join(dir, `${pid}.json`), "utf8"), `{"pid":${pid}}`);
		assert.equal(statSync(join(dir, `${pid}.json`)).mode & 0o777, 0o600);
	}
	assert.deepEqual(readdirSync(dir).sort(), ["101.json", "102.json"], "no temp left");
});
