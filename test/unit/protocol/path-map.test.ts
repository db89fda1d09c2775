/**
 * Paths between the editors (on the host) and pi (in a sandbox or a container): mountinfo as bubblewrap and docker
 * leave it, the `ideContext.paths` setting, and the longest-directory mapping both ways. A seeded round trip checks
 * that every path under a mapping comes back as it went (the oracle: prefix replacement written out here).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { StateDirScanner } from "../../../src/discovery/scan.ts";
import {
	combineMappings,
	isMapped,
	mapApprovalRequest,
	mapEditorState,
	mapPiMessage,
	mapReviewRuns,
	mountMappings,
	type PathMapping,
	parseMountinfo,
	parsePathSetting,
	toEditorPath,
	toPiPath,
} from "../../../src/protocol/path-map.ts";
import type { EditorState } from "../../../src/protocol/protocol.ts";
import type { ApprovalRequest, ReviewRun } from "../../../src/protocol/wire.ts";
import { parseSettings } from "../../../src/ui/settings.ts";
import { makePiMessage } from "../../fixtures/pi-message.ts";
import { mulberry32 } from "../../helpers/seeded.ts";
import { makeState, privateStateDirs, writeStateFile } from "../../helpers/state-files.ts";

/** /proc/self/mountinfo inside `bwrap ... --bind /tmp/hostproj /workspace/hostproj --unshare-pid` (captured here). */
const BWRAP = `67 45 0:40 /newroot / rw,nosuid,nodev,relatime - tmpfs tmpfs rw
68 67 254:0 /usr /usr ro,nosuid,nodev,relatime - ext4 /dev/vda rw,discard
70 67 0:41 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
71 70 0:41 /irq /proc/irq ro,nosuid,nodev,noexec,relatime - proc proc rw
73 67 0:42 / /dev rw,nosuid,nodev,relatime - tmpfs tmpfs rw,mode=755
74 73 0:6 /null /dev/null rw,nosuid,relatime - devtmpfs devtmpfs rw,size=12335016k
81 67 254:0 /tmp/hostproj /workspace/hostproj rw,nosuid,nodev,relatime - ext4 /dev/vda rw,discard`;

/** docker run -v "/home/u/my project:/work" with optional fields and an escaped space. */
const DOCKER = `512 400 0:55 / / rw,relatime master:200 - overlay overlay rw,lowerdir=/var/lib/docker/x
530 512 254:1 /home/u/my\\040project /work rw,relatime shared:1 master:2 - ext4 /dev/vda1 rw
531 512 254:1 /var/lib/docker/containers/abc/hostname /etc/hostname rw,relatime - ext4 /dev/vda1 rw`;

describe("mountinfo", () => {
	const cases: { name: string; text: string; mappings: Pick<PathMapping, "editor" | "pi">[] }[] = [
		{
			name: "bubblewrap: the project bound at /workspace/<name>",
			text: BWRAP,
			mappings: [{ editor: "/tmp/hostproj", pi: "/workspace/hostproj" }],
		},
		{
			name: "docker: a volume with a space, a file bound over /etc/hostname",
			text: DOCKER,
			mappings: [
				{ editor: "/home/u/my project", pi: "/work" },
				{ editor: "/var/lib/docker/containers/abc/hostname", pi: "/etc/hostname" },
			],
		},
		{
			name: "the host: nothing bound elsewhere",
			text: "22 1 254:0 / / rw - ext4 /dev/vda rw\n23 22 0:5 / /proc rw - proc proc rw",
			mappings: [],
		},
		{ name: "garbage lines are skipped", text: "not a mountinfo line\n\n1 2 3", mappings: [] },
		{
			name: "a mount point mounted over again: the newer mount counts",
			text: "81 67 254:0 /a /w rw - ext4 /dev/vda rw\n90 67 0:50 / /w rw - tmpfs tmpfs rw",
			mappings: [],
		},
	];
	for (const c of cases)
		test(c.name, () => {
			assert.deepEqual(
				mountMappings(parseMountinfo(c.text)).map(({ editor, pi }) => ({ editor, pi })),
				c.mappings,
			);
		});
});

describe("the paths setting", () => {
	test("absolute directories, trailing slashes dropped; anything else named once", () => {
		const { mappings, problems } = parsePathSetting({
			"/home/u/proj/": "/workspace/proj",
			relative: "/x",
			"/y": 3,
		});
		assert.deepEqual(mappings, [{ editor: "/home/u/proj", pi: "/workspace/proj", from: "setting" }]);
		assert.equal(problems.length, 2);
	});
	test("not an object: one problem, no mappings", () => {
		assert.deepEqual(parsePathSetting(["/a", "/b"]).mappings, []);
		assert.equal(parsePathSetting("x").problems.length, 1);
		assert.deepEqual(parsePathSetting(undefined), { mappings: [], problems: [] });
	});
	test("the setting's word first: a mount for the same directory is dropped", () => {
		const setting = parsePathSetting({ "/tmp/hostproj": "/mnt/proj" }).mappings;
		const combined = combineMappings(setting, mountMappings(parseMountinfo(BWRAP)));
		assert.deepEqual(
			combined.map((m) => m.pi),
			["/mnt/proj"],
		);
	});
});

describe("mapping a path", () => {
	const mappings: PathMapping[] = [
		{ editor: "/home/u", pi: "/host-home", from: "setting" },
		{ editor: "/home/u/proj", pi: "/workspace/proj", from: "mount" },
	];
	const cases: [string, string, string][] = [
		// [editor path, pi path, why]
		["/home/u/proj/src/main.ts", "/workspace/proj/src/main.ts", "the longest directory wins"],
		["/home/u/proj", "/workspace/proj", "the directory itself"],
		["/home/u/.bashrc", "/host-home/.bashrc", "the shorter mapping for the rest"],
		["/home/u/projector/x", "/host-home/projector/x", "a component boundary, not a string prefix"],
		["/etc/passwd", "/etc/passwd", "no mapping: unchanged"],
	];
	for (const [editor, pi, why] of cases)
		test(`${editor} <-> ${pi}: ${why}`, () => {
			assert.equal(toPiPath(editor, mappings), pi);
			assert.equal(toEditorPath(pi, mappings), editor);
		});
});

test("seeded: the longest directory maps, at component boundaries, and the path comes back (300 seeds)", () => {
	const seeds = Number(process.env["PI_IDE_SEEDS"] ?? 300);
	// Names that prefix each other, so nested and look-alike directories are common.
	const names = ["a", "ab", "a b", "proj", "projector", "ü"];
	for (let seed = 1; seed <= seeds; seed++) {
		const random = mulberry32(seed);
		const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
		const components = (depth: number) => Array.from({ length: depth }, () => pick(names));
		// Editor directories under /h, often inside one another; pi's under distinct roots /box<i>.
		const mappings: PathMapping[] = Array.from({ length: 1 + Math.floor(random() * 4) }, (_, i) => ({
			editor: `/h/${components(Math.floor(random() * 3)).join("/")}`.replace(/\/$/, ""),
			pi: `/box${i}${components(Math.floor(random() * 2))
				.map((c) => `/${c}`)
				.join("")}`,
			from: "mount" as const,
		}));
		const path = `/h/${components(Math.floor(random() * 5)).join("/")}`.replace(/\/$/, "");
		// The oracle, by components: the mapping whose editor directory is the longest leading run of the path's.
		const parts = path.split("/");
		let best: PathMapping | undefined;
		for (const m of mappings) {
			const dir = m.editor.split("/");
			const inside = dir.length <= parts.length && dir.every((c, i) => parts[i] === c);
			if (inside && (best === undefined || dir.length > best.editor.split("/").length)) best = m;
		}
		const expected = best ? [best.pi, ...parts.slice(best.editor.split("/").length)].join("/") : path;
		assert.equal(toPiPath(path, mappings), expected, `seed ${seed}: ${path} with ${JSON.stringify(mappings)}`);
		if (best) assert.equal(toEditorPath(expected, mappings), path, `seed ${seed}: back from ${expected}`);
	}
});

describe("the setting in ideContext (settings.json)", () => {
	test("good entries kept, each bad one named once as ideContext.paths; the rest of the settings unharmed", () => {
		const { settings, problems } = parseSettings({
			paths: { "/home/u/proj": "/workspace/proj", "~/x": "/y" },
			sendUnchanged: true,
		});
		assert.deepEqual(settings.paths, [{ editor: "/home/u/proj", pi: "/workspace/proj", from: "setting" }]);
		assert.equal(settings.sendUnchanged, true);
		assert.deepEqual(problems, [
			'ideContext.paths: "~/x" -> "/y" is not an absolute directory to an absolute directory',
		]);
	});
	const bad: [string, unknown][] = [
		["a string", "/home/u:/workspace"],
		["an array", [["/a", "/b"]]],
		["null", null],
		["a number", 3],
	];
	for (const [name, value] of bad)
		test(`${name}: one warning, no mappings, no exception`, () => {
			const { settings, problems } = parseSettings({ paths: value });
			assert.deepEqual(settings.paths, []);
			assert.equal(problems.length, 1);
			assert.match(problems[0] ?? "", /^ideContext\.paths must be an object/);
		});
});

const SANDBOX: PathMapping[] = [{ editor: "/home/u/proj", pi: "/workspace/proj", from: "mount" }];

describe("an editor's state, read in pi's paths", () => {
	test("every path field maps; relative files, argv flags and other directories stay", () => {
		const state: EditorState = {
			...makeState({ cwd: "/home/u/proj", argv: ["nvim", "-u", "NONE", "/home/u/proj/src/a.ts", "/etc/hosts"] }),
			protocol: "0.4",
			files: [
				{
					file: "/home/u/proj/src/a.ts",
					seq: 1,
					status: "reloaded",
					version: 1,
					modified: false,
					diagnostics_expected: false,
					diagnostics: null,
				},
			],
			reverted: [{ pi_pid: 7, run: 1, id: "h1", file: "/home/u/proj/src/a.ts", line: 1, lines: 1 }],
			windows: [
				{
					cwd: "/home/u/other",
					active_buffer: { ...makeState().active_buffer, file: "notes.md" },
				},
			],
		};
		const mapped = mapEditorState(state, SANDBOX);
		assert.deepEqual(
			{
				cwd: mapped.cwd,
				file: mapped.active_buffer.file,
				argv: mapped.argv,
				files: mapped.files?.map((f) => f.file),
				reverted: mapped.reverted?.map((r) => r.file),
				window: [mapped.windows?.[0]?.cwd, mapped.windows?.[0]?.active_buffer.file],
			},
			{
				cwd: "/workspace/proj",
				file: "/workspace/proj/src/main.ts",
				argv: ["nvim", "-u", "NONE", "/workspace/proj/src/a.ts", "/etc/hosts"],
				files: ["/workspace/proj/src/a.ts"],
				reverted: ["/workspace/proj/src/a.ts"],
				window: ["/home/u/other", "notes.md"],
			},
		);
		assert.equal(state.cwd, "/home/u/proj", "the parsed state is not changed in place");
		assert.equal(mapEditorState(state, []), state, "no mappings: the very same object");
	});

	test("the scanner reads every state in pi's paths (the one place on the way in)", () => {
		const dir = privateStateDirs("pi-ide-path-map-")();
		writeStateFile(dir, makeState({ pid: 4_100_001, cwd: "/home/u/proj" }));
		const [record] = new StateDirScanner(dir, process.getuid?.() ?? 0, { paths: SANDBOX }).scan().editors;
		assert.deepEqual(
			[record?.state.cwd, record?.state.active_buffer.file],
			["/workspace/proj", "/workspace/proj/src/main.ts"],
		);
	});
});

describe("pi's files, written in the editors' paths", () => {
	test("pi's message: cwd, changed, last_turn", () => {
		const message = makePiMessage({
			cwd: "/workspace/proj",
			changed: [{ file: "/workspace/proj/a.ts", seq: 1, tool: "write" }],
			last_turn: ["/workspace/proj/a.ts", "/tmp/scratch"],
		});
		const mapped = mapPiMessage(message, SANDBOX);
		assert.deepEqual(
			[mapped.cwd, mapped.changed, mapped.last_turn],
			["/home/u/proj", [{ file: "/home/u/proj/a.ts", seq: 1, tool: "write" }], ["/home/u/proj/a.ts", "/tmp/scratch"]],
		);
		assert.equal(mapPiMessage(message, []), message);
	});
	test("the change set: each file mapped once (the encoder's per-file cache keeps working)", () => {
		const file = { file: "/workspace/proj/a.ts", baseline: "x\n", note: null, hunks: [], hunks_total: 0 };
		const runs: ReviewRun[] = [{ run: 1, files: [file] }];
		const first = mapReviewRuns(runs, SANDBOX);
		assert.equal(first[0]?.files[0]?.file, "/home/u/proj/a.ts");
		assert.equal(mapReviewRuns(runs, SANDBOX)[0]?.files[0], first[0]?.files[0], "the same object again");
		assert.equal(file.file, "/workspace/proj/a.ts", "pi's own record is not changed");
	});
	test("an approval request", () => {
		const request = { id: "r", tool: "edit", file: "/workspace/proj/a.ts" } as ApprovalRequest;
		assert.equal(mapApprovalRequest(request, SANDBOX).file, "/home/u/proj/a.ts");
		assert.equal(mapApprovalRequest(request, []), request);
	});
	test("isMapped: pi's side and the editors' side", () => {
		assert.deepEqual(
			[
				isMapped("/workspace/proj/a", SANDBOX, "pi"),
				isMapped("/workspace/projector", SANDBOX, "pi"),
				isMapped("/home/u/proj", SANDBOX, "editor"),
			],
			[true, false, true],
		);
	});
});
