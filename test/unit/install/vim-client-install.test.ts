/**
 * installVimClient: the Vim client linked into `<vim dir>/pack/pi-ide-context/start/pi-ide` under the rules the
 * Neovim link follows (test/unit/install/nvim-client-install.test.ts has their whole table; here each outcome once, for Vim's
 * paths and marker), the opt-out, and which Vim directory is used.
 */
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readlinkSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { describe, it, type TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { installVimClient, isVimInstallDisabled, VIM_LINK_SUBPATH, vimDir } from "../../../src/install/vim-client.ts";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

function world(t: TestContext) {
	const root = realpathSync(mkdtempSync(join(tmpdir(), "pi-ide-vimlink-")));
	t.after(() => rmSync(root, { recursive: true, force: true }));
	const pkg = join(root, "pkg");
	cpSync(join(REPO, "editors/vim"), join(pkg, "editors/vim"), { recursive: true });
	const dir = join(root, "home/.vim");
	return { root, pkg, dir, link: join(dir, VIM_LINK_SUBPATH), target: join(pkg, "editors/vim") };
}

describe("installVimClient", () => {
	it("links, then finds it already linked", (t) => {
		const w = world(t);
		const run = () => installVimClient({ packageRoot: w.pkg, vimDir: w.dir, disabled: false });
		const first = run();
		assert.equal(first.status, "linked", first.message);
		assert.match(first.message, /^Vim client linked/);
		assert.equal(first.path, w.link);
		assert.equal(readlinkSync(w.link), w.target);
		assert.equal(run().status, "already");
	});

	it("a directory of the user's at the path is a conflict, left alone", (t) => {
		const w = world(t);
		mkdirSync(w.link, { recursive: true });
		const result = installVimClient({ packageRoot: w.pkg, vimDir: w.dir, disabled: false });
		assert.equal(result.status, "conflict");
		assert.match(result.message, /PI_IDE_NO_VIM_LINK=1/);
	});

	it("a link to the Neovim client (another client's marker) is not taken for a copy of the Vim client", (t) => {
		const w = world(t);
		mkdirSync(dirname(w.link), { recursive: true });
		symlinkSync(join(REPO, "editors/nvim"), w.link);
		assert.equal(installVimClient({ packageRoot: w.pkg, vimDir: w.dir, disabled: false }).status, "conflict");
	});

	it("opted out: nothing is created; a package without the client is an error", (t) => {
		const w = world(t);
		const off = installVimClient({ packageRoot: w.pkg, vimDir: w.dir, disabled: true });
		assert.equal(off.status, "disabled");
		assert.match(off.message, /PI_IDE_NO_VIM_LINK is set: not linking the Vim client/);
		rmSync(join(w.target, "plugin"), { recursive: true });
		const broken = installVimClient({ packageRoot: w.pkg, vimDir: w.dir, disabled: false });
		assert.equal(broken.status, "error");
		assert.match(broken.message, /no Vim client in .*plugin\/pi-ide\.vim missing/);
	});

	it("isVimInstallDisabled reads PI_IDE_NO_VIM_LINK", () => {
		assert.equal(isVimInstallDisabled({}), false);
		assert.equal(isVimInstallDisabled({ PI_IDE_NO_VIM_LINK: "0" }), false);
		assert.equal(isVimInstallDisabled({ PI_IDE_NO_VIM_LINK: "1" }), true);
		assert.equal(isVimInstallDisabled({ PI_IDE_NO_NVIM_LINK: "1" }), false);
	});
});

describe("vimDir", () => {
	const rows: { name: string; env: NodeJS.ProcessEnv; existing: string[]; want: string }[] = [
		{ name: "nothing yet: ~/.vim", env: {}, existing: [], want: "/h/.vim" },
		{ name: "~/.vim exists", env: {}, existing: ["/h/.vim", "/h/.config/vim"], want: "/h/.vim" },
		{ name: "only ~/.config/vim (Vim 9.1's XDG dir)", env: {}, existing: ["/h/.config/vim"], want: "/h/.config/vim" },
		{ name: "only $XDG_CONFIG_HOME/vim", env: { XDG_CONFIG_HOME: "/x" }, existing: ["/x/vim"], want: "/x/vim" },
		{
			name: "a relative XDG_CONFIG_HOME is ignored",
			env: { XDG_CONFIG_HOME: "rel" },
			existing: ["rel/vim"],
			want: "/h/.vim",
		},
	];
	for (const r of rows) {
		it(r.name, () =>
			assert.equal(
				vimDir(r.env, "/h", (p) => r.existing.includes(p)),
				r.want,
			),
		);
	}
});
