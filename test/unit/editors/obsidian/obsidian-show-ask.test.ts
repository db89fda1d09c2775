/**
 * pi's show and ask in the Obsidian plugin (editors/obsidian/src/show-ask.ts, notes.ts; protocol v0.5): the pure
 * parts in tables (is a note modified: its text against the file on disk; vault paths; the open notes, the active one
 * first), and the plugin against the fake Obsidian with a live pi-like process whose requests are built by pi's own
 * code: a show with follow off and on, a file outside the vault refused, the "Show pi's places" picker (newest first;
 * a pick opens the note at its line), clearing, an inert note, an ask's buffers, the answers file removed on unload.
 * The rules every client keeps run in the conformance kit (test/conformance/cases/show-ask.ts).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { differsFromDisk, NoteVersions, openNotes, vaultPath } from "../../../../editors/obsidian/src/notes.ts";
import type { Place } from "../../../../editors/obsidian/src/show-ask.ts";
import { buildAsk, buildShow, encodeAskMessage, findAnswer } from "../../../../src/link/show-ask.ts";
import {
	type AskAnswer,
	editorAnswersFileName,
	parseAnswers,
	type ShowAnswer,
	type ShowAskAnswer,
	type ShowAskRequest,
} from "../../../../src/protocol/show-ask.ts";
import { type LiveEditor, spawnLiveEditor, writeRawStateFile } from "../../../helpers/editors.ts";
import { fake, PiIdeContextPlugin } from "../../../helpers/obsidian-host.ts";
import { pollUntil } from "../../../helpers/poll.ts";

const root = mkdtempSync(join(tmpdir(), "pi-ide-obsidian-show-"));
const VAULT = join(root, "vault");
const DIR = join(root, "run/pi-ide");
process.env["XDG_RUNTIME_DIR"] = join(root, "run");
mkdirSync(join(root, "run"), { mode: 0o700 });
mkdirSync(join(VAULT, "notes"), { recursive: true });
const TEXT = "one\ntwo\nthree\nfour\n";
for (const name of ["a.md", "notes/b.md"]) writeFileSync(join(VAULT, name), TEXT);
let pi: LiveEditor | undefined;
after(async () => {
	await pi?.kill();
	rmSync(root, { recursive: true, force: true });
});

describe("Obsidian notes: modified is the editor's text against the file on disk", () => {
	const disk = join(root, "disk");
	mkdirSync(disk);
	writeFileSync(join(disk, "same.md"), "héllo\n");
	writeFileSync(join(disk, "crlf.md"), "a\r\nb\r\n");
	symlinkSync(join(disk, "same.md"), join(disk, "link.md"));
	mkdirSync(join(disk, "dir.md"));
	execFileSync("mkfifo", [join(disk, "fifo.md")]);
	const rows: { name: string; file: string; text: string; differs: boolean }[] = [
		{ name: "the same text", file: "same.md", text: "héllo\n", differs: false },
		{ name: "an edit of the same byte length", file: "same.md", text: "hallo\n", differs: true },
		{ name: "a longer text", file: "same.md", text: "héllo\nmore\n", differs: true },
		{ name: "the final newline deleted", file: "same.md", text: "héllo", differs: true },
		{ name: "CRLF on disk, LF in the editor", file: "crlf.md", text: "a\nb\n", differs: true },
		{ name: "through a symlink (Obsidian follows it too)", file: "link.md", text: "héllo\n", differs: false },
		{ name: "a file gone from disk", file: "gone.md", text: "", differs: true },
		{ name: "a directory in its place", file: "dir.md", text: "", differs: true },
		{ name: "a FIFO in its place: never blocks", file: "fifo.md", text: "", differs: true },
	];
	for (const row of rows) {
		test(row.name, () => assert.equal(differsFromDisk(join(disk, row.file), row.text), row.differs));
	}
});

describe("Obsidian notes: vault paths, versions, the open notes", () => {
	const rows: { file: string; path: string | undefined }[] = [
		{ file: "/v/a.md", path: "a.md" },
		{ file: "/v/notes/deep/b.md", path: "notes/deep/b.md" },
		{ file: "/v", path: undefined },
		{ file: "/v2/a.md", path: undefined },
		{ file: "/elsewhere/a.md", path: undefined },
		{ file: "/v/../w/a.md", path: undefined },
		{ file: "/v/..hidden/a.md", path: "..hidden/a.md" },
	];
	for (const row of rows) {
		test(`vaultPath(/v, ${row.file}) = ${row.path}`, () => assert.equal(vaultPath("/v", row.file), row.path));
	}

	test("a note's version: 1 when first seen, the same while its text is, one more per change (never back)", () => {
		const versions = new NoteVersions();
		const seen = ["one", "one", "two", "one", "one", "three"].map((text) => versions.version("a.md", text));
		assert.deepEqual(seen, [1, 1, 2, 3, 3, 4]);
		assert.equal(versions.version("b.md", "one"), 1, "per note");
	});

	test("modified follows the text and the disk, read again only when either changed", () => {
		const versions = new NoteVersions();
		const file = join(root, "cached.md");
		writeFileSync(file, "abc\n");
		const at = (text: string) => versions.modified("cached.md", file, text, versions.version("cached.md", text));
		const steps: [string, string | undefined, boolean][] = [
			["the same text", undefined, false],
			["typed", undefined, true],
			["saved", "abd\n", false],
			["changed on disk, same size", "xyz\n", true],
			["deleted", "", true],
		];
		const texts = ["abc\n", "abd\n", "abd\n", "abd\n", "abd\n"];
		steps.forEach(([name, disk, modified], i) => {
			if (disk === "") rmSync(file);
			else if (disk !== undefined) writeFileSync(file, disk);
			assert.equal(at(texts[i] ?? ""), modified, name);
		});
	});

	test("each file once, the active one first; a view without a file left out", () => {
		const view = (path: string | null, text = TEXT) => ({
			file: path === null ? null : { path },
			getViewData: () => text,
		});
		const a = view("a.md");
		const b = view("notes/b.md", "edited\n");
		const notes = openNotes([a, view(null), b, view("a.md")], b, VAULT, new NoteVersions());
		assert.deepEqual(
			notes.map((n) => [n.path, n.file, n.active, n.modified]),
			[
				["notes/b.md", join(VAULT, "notes/b.md"), true, true],
				["a.md", join(VAULT, "a.md"), false, false],
			],
		);
	});
});

/** The plugin loaded on the vault, the note `a.md` open and active with the cursor on its line 2. */
async function load() {
	fake.Notice.shown.length = 0;
	const app = new fake.App(new fake.FileSystemAdapter(VAULT));
	const plugin = new PiIdeContextPlugin(app as never, { id: "pi-ide-context" } as never);
	const host = plugin as unknown as InstanceType<typeof fake.Plugin>;
	await plugin.onload();
	const view = new fake.MarkdownView(new fake.TFile("a.md"), TEXT);
	view.editor.setCursor(1, 0);
	app.workspace.openView(view);
	app.workspace.trigger("file-open", view.file);
	const run = async (id: string) => {
		const command = host.commands.find((c) => c.id === id);
		assert.ok(command?.callback, `command ${id}`);
		await command.callback();
	};
	return { app, host, view, run };
}

let seq = 0;
/** pi's request file naming this Obsidian, built by pi's own code; resolves with the answer to each request. */
async function ask(requests: ShowAskRequest[]): Promise<ShowAskAnswer[]> {
	pi ??= await spawnLiveEditor();
	const live = pi;
	const text = encodeAskMessage({
		pid: live.pid,
		pidNs: null,
		editorPid: process.pid,
		now: Date.now() / 1000,
		requests,
	});
	writeRawStateFile(DIR, `pi-${live.pid}.ask.json`, text);
	return pollUntil(() => {
		const found = requests.map((r) => findAnswer(answers(), live.pid, null, r.id));
		return found.every((x) => x !== undefined) ? (found as ShowAskAnswer[]) : undefined;
	}, "the answers");
}

function answers(): ShowAskAnswer[] {
	let text: string;
	try {
		text = readFileSync(join(DIR, editorAnswersFileName(process.pid)), "utf8");
	} catch {
		return [];
	}
	const parsed = parseAnswers(text, process.pid);
	assert.ok(parsed.ok, JSON.stringify(parsed));
	return parsed.answers;
}

const expires = () => Date.now() / 1000 + 30;
const show = (id: string, file: string, line: number, end: number | null, note: string | null) =>
	buildShow(id, file, { path: file, line, endLine: end, note }, expires());

/** The places the "Show pi's places" picker lists (newest first), the picker left open. */
async function picker(run: (id: string) => Promise<void>) {
	await run("show-places");
	const modal = fake.Modal.shown.at(-1);
	assert.ok(modal instanceof fake.SuggestModal, "a picker opened");
	return modal as InstanceType<typeof fake.SuggestModal<Place>>;
}

describe("Obsidian plugin: pi's show and ask against the fake Obsidian", () => {
	const B = join(VAULT, "notes/b.md");
	const rows: {
		name: string;
		follow: boolean;
		request: (id: string) => ShowAskRequest;
		status: ShowAnswer["status"];
		notice: string | undefined;
		/** The note active afterwards, and its cursor's 0-based line. */
		active: [string, number];
	}[] = [
		{
			name: "follow off: listed in pi's places, one notice, the active note and cursor stay",
			follow: false,
			request: (id) => show(id, B, 3, 4, "look here"),
			status: "listed",
			notice: "pi shows notes/b.md:3-4: look here",
			active: ["a.md", 1],
		},
		{
			name: "follow on: also opened at its line",
			follow: true,
			request: (id) => show(id, B, 3, null, null),
			status: "opened",
			notice: "pi shows notes/b.md:3",
			active: ["notes/b.md", 2],
		},
		{
			name: "the note's control characters are inert: one line",
			follow: false,
			request: (id) => show(id, B, 1, null, "a\nb\u001b[31mred\u2028c"),
			status: "listed",
			notice: "pi shows notes/b.md:1: a b [31mred c",
			active: ["a.md", 1],
		},
		{
			name: "a file outside the vault is refused: not listed, no notice",
			follow: false,
			request: (id) => show(id, join(root, "outside.md"), 1, null, "x"),
			status: "refused",
			notice: undefined,
			active: ["a.md", 1],
		},
	];
	for (const row of rows) {
		test(row.name, async () => {
			const { app, host, run } = await load();
			try {
				if (row.follow) await run("toggle-show-follow");
				const before = fake.Notice.shown.length;
				const id = `show-${++seq}`;
				const [answer] = (await ask([row.request(id)])) as [ShowAnswer];
				assert.equal(answer.status, row.status, answer.reason ?? "");
				assert.equal(answer.list, row.status === "refused" ? null : "places");
				await pollUntil(() => app.workspace.activeView?.file?.path === row.active[0] || undefined, "the active note");
				assert.equal(app.workspace.activeView?.editor.getCursor().line, row.active[1]);
				assert.deepEqual(fake.Notice.shown.slice(before), row.notice === undefined ? [] : [row.notice]);
				const list = await picker(run);
				assert.equal(list.getSuggestions("").length, row.status === "refused" ? 0 : 1);
				list.close();
			} finally {
				host.unload();
			}
		});
	}

	test("the picker lists the places newest first; a pick opens the note at its line; clear empties it", async () => {
		const { app, host, run } = await load();
		try {
			await ask([show(`p-${++seq}`, B, 2, null, "first"), show(`p-${++seq}`, join(VAULT, "a.md"), 4, null, null)]);
			const list = await picker(run);
			assert.deepEqual(list.labels(), ["a.md:4 pi", "notes/b.md:2 pi: first"]);
			list.choose("notes/b.md:2 pi: first");
			await pollUntil(() => app.workspace.activeView?.file?.path === "notes/b.md" || undefined, "b.md opened");
			assert.equal(app.workspace.activeView?.editor.getCursor().line, 1);
			await run("clear-places");
			const empty = await picker(run);
			assert.deepEqual(empty.labels(), []);
			empty.close();
		} finally {
			host.unload();
		}
	});

	test("follow is remembered in the plugin's data, off by default", async () => {
		const { host, run } = await load();
		try {
			assert.equal((host.data as { showFollow?: boolean } | null)?.showFollow, undefined);
			await run("toggle-show-follow");
			assert.equal((host.data as { showFollow: boolean }).showFollow, true);
			await run("toggle-show-follow");
			assert.equal((host.data as { showFollow: boolean }).showFollow, false);
		} finally {
			host.unload();
		}
	});

	test("an ask: the open notes, the active first, modified against the disk, diagnostics null when named", async () => {
		const { app, host } = await load();
		try {
			const b = new fake.MarkdownView(new fake.TFile("notes/b.md"), TEXT);
			app.workspace.openView(b);
			b.editor.lines[0] = "ONE";
			app.workspace.openView(app.workspace.leaves[0]?.view ?? b);
			const [named, none] = (await ask([
				buildAsk(`ask-${++seq}`, B, expires()),
				buildAsk(`ask-${++seq}`, "none", expires()),
			])) as [AskAnswer, AskAnswer];
			assert.deepEqual(
				named.buffers.map((x) => [
					x.file,
					x.active,
					x.modified,
					x.lines_total,
					"diagnostics" in x ? x.diagnostics : "-",
				]),
				[
					[join(VAULT, "a.md"), true, false, 4, "-"],
					[B, false, true, 4, null],
				],
			);
			assert.ok((named.buffers[1]?.version ?? 0) >= 1);
			assert.ok(none.buffers.every((x) => !("diagnostics" in x)));
		} finally {
			host.unload();
		}
		assert.ok(!existsSync(join(DIR, editorAnswersFileName(process.pid))), "the answers file removed on unload");
	});
});
