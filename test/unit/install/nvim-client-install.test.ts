/**
 * installNvimClient against temp dirs: a table of what is already at the link path and what must happen
 * (created, kept, repointed from an older copy of the package, or left alone as a conflict), the opt-out,
 * errors returned instead of thrown, and the env helpers.
 */
import assert from "node:assert/strict";
import {
	cpSync,
	existsSync,
	lstatSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	readlinkSync,
	realpathSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { describe, it, type TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import {
	type ClientInstallStatus,
	installNvimClient,
	isNvimInstallDisabled,
	NVIM_LINK_SUBPATH,
	nvimDataHome,
} from "../../../src/install/nvim-client.ts";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

interface World {
	root: string;
	pkg: string;
	dataHome: string;
	link: string;
	target: string;
}

/** A temp world with a copy of the package's Neovim client at <root>/pkg. */
function world(t: TestContext): World {
	const root = realpathSync(mkdtempSync(join(tmpdir(), "pi-ide-link-")));
	t.after(() => rmSync(root, { recursive: true, force: true }));
	const pkg = join(root, "pkg");
	cpSync(join(REPO, "editors/nvim"), join(pkg, "editors/nvim"), { recursive: true });
	const dataHome = join(root, "data");
	return { root, pkg, dataHome, link: join(dataHome, NVIM_LINK_SUBPATH), target: join(pkg, "editors/nvim") };
}

function prepareLinkDir(w: World): void {
	mkdirSync(dirname(w.link), { recursive: true });
}

interface Case {
	name: string;
	/** Put something at the link path (or elsewhere) first. */
	before?: (w: World) => void;
	disabled?: boolean;
	/** Break the package. */
	brokenPackage?: boolean;
	status: ClientInstallStatus;
	message: RegExp;
	/** What must be at the link path afterwards. */
	after: (w: World) => void;
}

const pointsAtTarget = (w: World) => assert.equal(realpathSync(w.link), realpathSync(w.target));
const untouched = (kind: "dir" | "file" | "link", value?: string) => (w: World) => {
	const st = lstatSync(w.link);
	if (kind === "dir") assert.ok(st.isDirectory());
	if (kind === "file") assert.equal(readFileSync(w.link, "utf8"), value);
	if (kind === "link") assert.equal(readlinkSync(w.link), value);
};

const CASES: Case[] = [
	{ name: "nothing there: creates the link", status: "linked", message: /Neovim client linked/, after: pointsAtTarget },
	{
		name: "our link already there: keeps it",
		before: (w) => {
			prepareLinkDir(w);
			symlinkSync(w.target, w.link);
		},
		status: "already",
		message: /already linked/,
		after: pointsAtTarget,
	},
	{
		name: "a relative link to the same dir: already",
		before: (w) => {
			prepareLinkDir(w);
			symlinkSync("../../../../../../pkg/editors/nvim", w.link);
			assert.ok(existsSync(join(w.link, "plugin/pi-ide.lua")));
		},
		status: "already",
		message: /already linked/,
		after: untouched("link", "../../../../../../pkg/editors/nvim"),
	},
	{
		name: "a link to an older copy of the package: repointed",
		before: (w) => {
			cpSync(w.target, join(w.root, "old/editors/nvim"), { recursive: true });
			prepareLinkDir(w);
			symlinkSync(join(w.root, "old/editors/nvim"), w.link);
		},
		status: "linked",
		message: /moved from .*old\/editors\/nvim to /,
		after: pointsAtTarget,
	},
	{
		name: "a link to some other plugin: conflict, left alone",
		before: (w) => {
			mkdirSync(join(w.root, "other/plugin"), { recursive: true });
			writeFileSync(join(w.root, "other/plugin/pi-ide.lua"), "-- someone else's plugin\n");
			prepareLinkDir(w);
			symlinkSync(join(w.root, "other"), w.link);
		},
		status: "conflict",
		message: /not a copy of this client; left alone/,
		after: (w) => untouched("link", join(w.root, "other"))(w),
	},
	{
		name: "a dangling link: conflict, left alone",
		before: (w) => {
			prepareLinkDir(w);
			symlinkSync(join(w.root, "gone/editors/nvim"), w.link);
		},
		status: "conflict",
		message: /left alone/,
		after: (w) => untouched("link", join(w.root, "gone/editors/nvim"))(w),
	},
	{
		name: "a real directory (a manual copy): conflict, left alone",
		before: (w) => cpSync(w.target, w.link, { recursive: true }),
		status: "conflict",
		message: /is a directory, not our link/,
		after: untouched("dir"),
	},
	{
		name: "a file: conflict, left alone",
		before: (w) => {
			prepareLinkDir(w);
			writeFileSync(w.link, "mine");
		},
		status: "conflict",
		message: /is a file, not our link/,
		after: untouched("file", "mine"),
	},
	{
		name: "opted out: nothing created",
		disabled: true,
		status: "disabled",
		message: /PI_IDE_NO_NVIM_LINK is set/,
		after: (w) => assert.equal(existsSync(join(w.dataHome, "nvim")), false),
	},
	{
		name: "the package has no client: error, nothing created",
		brokenPackage: true,
		status: "error",
		message: /no Neovim client in .*plugin\/pi-ide\.lua missing/,
		after: (w) => assert.equal(existsSync(join(w.dataHome, "nvim")), false),
	},
	{
		name: "the data home cannot be created: error, not thrown",
		before: (w) => writeFileSync(w.dataHome, "a file where a dir should be"),
		status: "error",
		message: /could not link the Neovim client/,
		after: (w) => assert.equal(readFileSync(w.dataHome, "utf8"), "a file where a dir should be"),
	},
];

describe("installNvimClient", { concurrency: 8 }, () => {
	for (const c of CASES) {
		it(c.name, (t) => {
			const w = world(t);
			if (c.brokenPackage) rmSync(join(w.target, "plugin"), { recursive: true });
			c.before?.(w);
			const result = installNvimClient({ packageRoot: w.pkg, dataHome: w.dataHome, disabled: c.disabled ?? false });
			assert.equal(result.status, c.status, result.message);
			assert.equal(result.path, w.link);
			assert.match(result.message, c.message);
			c.after(w);
		});
	}

	it("is idempotent: linked, then already, then already", (t) => {
		const w = world(t);
		const run = () => installNvimClient({ packageRoot: w.pkg, dataHome: w.dataHome, disabled: false }).status;
		assert.deepEqual([run(), run(), run()], ["linked", "already", "already"]);
		assert.deepEqual(readdirSync(dirname(w.link)), ["pi-ide"], "no temp links left behind");
	});
});

describe("nvim link env helpers", () => {
	it("nvimDataHome: absolute XDG_DATA_HOME, else ~/.local/share", () => {
		const rows: [NodeJS.ProcessEnv, string][] = [
			[{ XDG_DATA_HOME: "/x/data" }, "/x/data"],
			[{ XDG_DATA_HOME: "relative/data" }, "/home/u/.local/share"],
			[{ XDG_DATA_HOME: "" }, "/home/u/.local/share"],
			[{}, "/home/u/.local/share"],
		];
		for (const [env, want] of rows) assert.equal(nvimDataHome(env, "/home/u"), want, JSON.stringify(env));
	});

	it("isNvimInstallDisabled: PI_IDE_NO_NVIM_LINK=1 (anything but empty, 0, false)", () => {
		const rows: [string | undefined, boolean][] = [
			[undefined, false],
			["", false],
			["0", false],
			["false", false],
			["FALSE", false],
			["1", true],
			["yes", true],
			["true", true],
		];
		for (const [value, want] of rows) {
			const env: NodeJS.ProcessEnv = value === undefined ? {} : { PI_IDE_NO_NVIM_LINK: value };
			assert.equal(isNvimInstallDisabled(env), want, String(value));
		}
	});
});
