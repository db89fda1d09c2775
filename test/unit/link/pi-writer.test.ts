import assert from "node:assert/strict";
import {
	chmodSync,
	lstatSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { PiMessageWriter } from "../../../src/link/pi-writer.ts";

const UID = process.getuid?.() ?? 0;
const roots: string[] = [];
after(() => {
	for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function stateDir(mode = 0o700): string {
	const root = mkdtempSync(join(tmpdir(), "pi-ide-piw-"));
	roots.push(root);
	const dir = join(root, "pi-ide");
	mkdirSync(dir);
	chmodSync(dir, mode);
	return dir;
}

describe("PiMessageWriter", () => {
	it("writes pi-<pid>.json 0600 atomically, skips unchanged content, removes it", () => {
		const dir = stateDir();
		const writer = new PiMessageWriter(dir, 42, UID);
		assert.deepEqual(writer.write("a", '{"a":1}'), { ok: true, skipped: false });
		const path = join(dir, "pi-42.json");
		assert.equal(readFileSync(path, "utf8"), '{"a":1}');
		assert.equal(lstatSync(path).mode & 0o777, 0o600);
		assert.deepEqual(writer.write("a", '{"a":2}'), { ok: true, skipped: true });
		assert.deepEqual(writer.write("b", '{"b":1}'), { ok: true, skipped: false });
		assert.deepEqual(readdirSync(dir), ["pi-42.json"], "no temp file left");
		writer.remove();
		assert.deepEqual(readdirSync(dir), []);
	});

	it("creates a missing state dir 0700", () => {
		const dir = join(stateDir(), "sub");
		const writer = new PiMessageWriter(dir, 42, UID);
		assert.equal(writer.write("a", "{}").ok, true);
		assert.equal(lstatSync(dir).mode & 0o777, 0o700);
	});

	const REFUSED: [string, () => string, RegExp][] = [
		["a group-accessible dir", () => stateDir(0o750), /group\/other permissions/],
		[
			"a symlinked dir",
			() => {
				const link = `${stateDir()}-link`;
				symlinkSync(stateDir(), link);
				return link;
			},
			/symbolic link/,
		],
	];
	for (const [name, make, why] of REFUSED) {
		it(`refuses ${name}`, () => {
			const dir = make();
			const r = new PiMessageWriter(dir, 42, UID).write("a", "{}");
			assert.equal(r.ok, false);
			if (!r.ok) assert.match(r.message, why);
			assert.ok(!readdirSync(dir).includes("pi-42.json"));
		});
	}

	it("never writes through a symlink planted at the temp path", () => {
		const dir = stateDir();
		const target = join(dir, "..", "target");
		writeFileSync(target, "untouched");
		symlinkSync(target, join(dir, "pi-42.json.tmp"));
		const r = new PiMessageWriter(dir, 42, UID).write("a", "{}");
		assert.equal(r.ok, false);
		assert.equal(readFileSync(target, "utf8"), "untouched");
	});

	it("replaces its own leftover temp file", () => {
		const dir = stateDir();
		writeFileSync(join(dir, "pi-42.json.tmp"), "half", { mode: 0o600 });
		assert.equal(new PiMessageWriter(dir, 42, UID).write("a", "{}").ok, true);
		assert.deepEqual(readdirSync(dir), ["pi-42.json"]);
	});
});
