/**
 * Zero-config Vim: link the embedded Vim 9 client (`<package>/editors/vim`) into
 * `<vim dir>/pack/pi-ide-context/start/pi-ide`, a directory Vim loads at startup without a plugin manager
 * (`:help packages`). The rules of the link (never clobber what is not ours, repoint an older copy of this
 * package, errors returned) are Neovim's, written once in src/install/nvim-client.ts (`installEditorClient`).
 *
 * Which Vim directory: `~/.vim`, the one every Vim 9 reads. Vim 9.1 also reads `$XDG_CONFIG_HOME/vim` (or
 * `~/.config/vim`), but only when that holds the vimrc it found; so the XDG directory is used only when it
 * exists and `~/.vim` does not (creating `~/.vim` there would add a directory that user does not use).
 * Opt-out: `PI_IDE_NO_VIM_LINK=1`, or the `linkVim` setting.
 */
import { existsSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { type ClientInstallResult, type ClientInstallSpec, installEditorClient, isOptOutSet } from "./nvim-client.ts";

/** Where the link lives, relative to the Vim directory. */
export const VIM_LINK_SUBPATH = "pack/pi-ide-context/start/pi-ide";
export const VIM_LINK_OPT_OUT = "PI_IDE_NO_VIM_LINK";

export const VIM_CLIENT: ClientInstallSpec = {
	editor: "Vim",
	clientSubdir: "editors/vim",
	markerFile: "plugin/pi-ide.vim",
	markerText: "g:loaded_pi_ide",
	optOut: VIM_LINK_OPT_OUT,
};

/** The user's Vim directory (see the header); `exists` is injected for tests. */
export function vimDir(env: NodeJS.ProcessEnv, home: string, exists: (path: string) => boolean = existsSync): string {
	const dotVim = join(home, ".vim");
	const xdg = env["XDG_CONFIG_HOME"];
	const xdgVim = join(xdg && isAbsolute(xdg) ? xdg : join(home, ".config"), "vim");
	return !exists(dotVim) && exists(xdgVim) ? xdgVim : dotVim;
}

export function isVimInstallDisabled(env: NodeJS.ProcessEnv): boolean {
	return isOptOutSet(env, VIM_LINK_OPT_OUT);
}

export interface VimInstallOptions {
	packageRoot: string;
	/** From `vimDir`. */
	vimDir: string;
	disabled: boolean;
}

/** Link the Vim client (outcomes as for `installNvimClient`). Never throws. */
export function installVimClient(opts: VimInstallOptions): ClientInstallResult {
	return installEditorClient(VIM_CLIENT, join(opts.vimDir, VIM_LINK_SUBPATH), opts);
}
