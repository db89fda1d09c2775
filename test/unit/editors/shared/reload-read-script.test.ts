/**
 * The one read of a reload in the Vim and Emacs clients (issue 22): neither language can open a file without
 * following a symlink, so both run the same perl script (editors/vim/autoload/pi_ide/inbox.vim READ_SCRIPT,
 * editors/emacs/pi-ide-inbox.el `pi-ide-inbox-read-script`). The two texts must be the same, and the script
 * reads only a regular file of the user's, never through a symlink, never blocking, within the cap.
 */
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chownSync, linkSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";

const REPO = resolve(import.meta.dirname, "../../../..");

function vimScript(): string {
	const source = readFileSync(join(REPO, "editors/vim/autoload/pi_ide/inbox.vim"), "utf8");
	const decl = /export const READ_SCRIPT = ((?:'[^']*'(?:\s*\.\.\s*)?)+)/.exec(source);
	assert.ok(decl?.[1], "READ_SCRIPT in inbox.vim");
	return [...decl[1].matchAll(/'([^']*)'/g)].map((m) => m[1]).join("");
}

function emacsScript(): string {
	const source = readFileSync(join(REPO, "editors/emacs/pi-ide-inbox.el"), "utf8");
	const decl = /\(defconst pi-ide-inbox-read-script\s+\(concat((?:\s*"(?:[^"\\]|\\.)*")+)\)/.exec(source);
	assert.ok(decl?.[1], "pi-ide-inbox-read-script in pi-ide-inbox.el");
	return [...decl[1].matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => (m[1] ?? "").replace(/\\(.)/g, "$1")).join("");
}

/** Vim's BATCH_SCRIPT: READ_SCRIPT for many (path, cap, out) triples in one perl, the exit codes printed in order. */
function vimBatchScript(): string {
	const source = readFileSync(join(REPO, "editors/vim/autoload/pi_ide/inbox.vim"), "utf8");
	const decl = /const BATCH_SCRIPT = ((?:'[^']*'(?:\s*\.\.\s*)?)+)/.exec(source);
	assert.ok(decl?.[1], "BATCH_SCRIPT in inbox.vim");
	return [...decl[1].matchAll(/'([^']*)'/g)].map((m) => m[1]).join("");
}

/**
 * Vim's READER: READ_SCRIPT kept in one perl, a line of (path, cap, out) triples asked, a line of exit codes
 * answered, a read's with the SHA-256 of its bytes.
 */
function vimReaderScript(): string {
	const source = readFileSync(join(REPO, "editors/vim/autoload/pi_ide/inbox.vim"), "utf8");
	const decl = /const READER = ((?:'[^']*'(?:\s*\.\.\s*)?)+)/.exec(source);
	assert.ok(decl?.[1], "READER in inbox.vim");
	return [...decl[1].matchAll(/'([^']*)'/g)].map((m) => m[1]).join("");
}

/** A field of a READER line, escaped as inbox.vim's ReaderField does. */
const readerField = (s: string) => s.replace(/[\\\n\t]/g, (c) => (c === "\\" ? "\\\\" : c === "\n" ? "\\n" : "\\t"));

const SCRIPT = vimScript();
const GONE = 10;
const REFUSED = 11;
const TOO_LARGE = 12;

describe("the reload's read script (Vim and Emacs)", () => {
	it("is the same text in both clients", () => {
		assert.equal(emacsScript(), SCRIPT);
	});

	const dir = mkdtempSync(join(tmpdir(), "pi-ide-read-"));
	after(() => rmSync(dir, { recursive: true, force: true }));
	const uid = process.getuid?.() ?? 0;
	const CASES: { name: string; make: (path: string) => void; code: number; bytes?: string }[] = [
		{ name: "a regular file of the user's", make: (p) => writeFileSync(p, "one\ntwo"), code: 0, bytes: "one\ntwo" },
		{ name: "empty", make: (p) => writeFileSync(p, ""), code: 0, bytes: "" },
		{ name: "at the cap", make: (p) => writeFileSync(p, "x".repeat(64)), code: 0, bytes: "x".repeat(64) },
		{ name: "over the cap", make: (p) => writeFileSync(p, "x".repeat(65)), code: TOO_LARGE },
		{ name: "gone", make: () => undefined, code: GONE },
		{
			name: "a symlink to a secret",
			make: (p) => {
				writeFileSync(`${p}.secret`, "SECRET", { mode: 0o600 });
				symlinkSync(`${p}.secret`, p);
			},
			code: REFUSED,
		},
		{ name: "a dangling symlink", make: (p) => symlinkSync(`${p}.nowhere`, p), code: REFUSED },
		{ name: "a FIFO (never blocks)", make: (p) => execFileSync("mkfifo", [p]), code: REFUSED },
		{ name: "a directory", make: (p) => execFileSync("mkdir", [p]), code: REFUSED },
		{
			name: "another user's file",
			make: (p) => {
				writeFileSync(p, "theirs");
				chownSync(p, uid + 4242, uid + 4242);
			},
			code: REFUSED,
		},
		{
			name: "a hard link to the user's file (a regular file: the clients judge the path before)",
			make: (p) => {
				writeFileSync(`${p}.orig`, "linked");
				linkSync(`${p}.orig`, p);
			},
			code: 0,
			bytes: "linked",
		},
	];
	for (const [i, c] of CASES.entries()) {
		it(`${c.name}: exit ${c.code}`, () => {
			const path = join(dir, `f${i}`);
			c.make(path);
			const run = spawnSync("perl", ["-e", SCRIPT, path, "64"], { timeout: 10_000 });
			assert.equal(run.status, c.code, String(run.stderr));
			if (c.bytes !== undefined) assert.equal(run.stdout.toString("utf8"), c.bytes);
			else assert.equal(run.stdout.length, 0, "nothing written");
			const out = join(dir, `out${i}`);
			const toFile = spawnSync("perl", ["-e", SCRIPT, path, "64", out], { timeout: 10_000 });
			assert.equal(toFile.status, c.code);
			if (c.bytes !== undefined) assert.equal(readFileSync(out, "utf8"), c.bytes);
		});
	}
	it("Vim's batch (every case above in one perl, a message naming many files): each its own exit code and bytes", () => {
		const batch = join(dir, "batch");
		execFileSync("mkdir", [batch]);
		const args: string[] = [];
		for (const [i, c] of CASES.entries()) {
			const path = join(batch, `f${i}`);
			c.make(path);
			args.push(path, "64", join(batch, `out${i}`));
		}
		const run = spawnSync("perl", ["-e", vimBatchScript(), SCRIPT, ...args], { timeout: 10_000 });
		assert.equal(run.status, 0, String(run.stderr));
		assert.deepEqual(
			run.stdout.toString("utf8").split(" ").map(Number),
			CASES.map((c) => c.code),
		);
		for (const [i, c] of CASES.entries()) {
			const out = join(batch, `out${i}`);
			if (c.bytes !== undefined) assert.equal(readFileSync(out, "utf8"), c.bytes, c.name);
			else assert.throws(() => readFileSync(out), `${c.name}: nothing written`);
		}
	});
	it("Vim's kept reader (every case above on one line, then again on a second): each its own exit code, bytes and hash", () => {
		const kept = join(dir, "kept");
		execFileSync("mkdir", [kept]);
		// Names with a backslash, a newline and a tab: the line's escapes carry them.
		const names = CASES.map((_, i) => join(kept, i % 3 === 0 ? `f${i}\\n` : i % 3 === 1 ? `f${i}\nx` : `f${i}\tx`));
		for (const [i, c] of CASES.entries()) c.make(names[i] as string);
		const line = (round: number) =>
			CASES.flatMap((_, i) => [names[i] as string, "64", join(kept, `out${round}-${i}`)])
				.map(readerField)
				.join("\t");
		const run = spawnSync("perl", ["-e", vimReaderScript(), SCRIPT], {
			input: `${line(1)}\n${line(2)}\n`,
			timeout: 10_000,
		});
		assert.equal(run.status, 0, String(run.stderr));
		// A read's 0 carries the SHA-256 of the bytes it wrote (a merge compares it with pi's: issue 26).
		const sha = (b: string) => createHash("sha256").update(b).digest("hex");
		const codes = CASES.map((c) => (c.code === 0 ? `0:${sha(c.bytes ?? "")}` : String(c.code))).join(" ");
		assert.deepEqual(run.stdout.toString("utf8"), `${codes}\n${codes}\n`);
		for (const round of [1, 2]) {
			for (const [i, c] of CASES.entries()) {
				const out = join(kept, `out${round}-${i}`);
				if (c.bytes !== undefined) assert.equal(readFileSync(out, "utf8"), c.bytes, c.name);
				else assert.throws(() => readFileSync(out), `${c.name}: nothing written`);
			}
		}
	});
	it("never writes over a file already at the output path", () => {
		const path = join(dir, "src");
		const out = join(dir, "taken");
		writeFileSync(path, "new");
		writeFileSync(out, "kept");
		assert.notEqual(spawnSync("perl", ["-e", SCRIPT, path, "64", out]).status, 0);
		assert.equal(readFileSync(out, "utf8"), "kept");
	});
});
