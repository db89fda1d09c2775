/**
 * Product constants the UI tests assert on, straight from the spec (protocol v0.2, "Status text"), plus small
 * steps for driving `/ide` in the TUI.
 */
import { WAIT_MS } from "./pi-env.ts";
import type { Tui } from "./tmux.ts";

export const STATUS_KEY = "ide-context";
export const GLYPH_NVIM = "\u{E6AE}";
export const GLYPH_TYPESCRIPT = "\u{E8CA}";
/** nf-dev-python in Nerd Fonts v3.4.0. */
export const GLYPH_PYTHON = "\u{E73C}";
export const GLYPH_DISCONNECTED = "\u{EAE3}";

/** Nerd Font glyphs live in the Private Use Area. */
export const PUA = /[\u{E000}-\u{F8FF}\u{F0000}-\u{FFFFD}]/u;

/** Neovim + TypeScript, with or without a space between the glyphs. */
export const PILL_NVIM_TS = new RegExp(`^${GLYPH_NVIM} ?${GLYPH_TYPESCRIPT}$`, "u");
/** Neovim + Python, with or without a space between the glyphs. */
export const PILL_NVIM_PY = new RegExp(`^${GLYPH_NVIM} ?${GLYPH_PYTHON}$`, "u");

/** The pill as shown in the TUI footer (its last non-blank line), trimmed. */
export async function footerPill(tui: Tui): Promise<string> {
	return (await tui.lastNonBlankLine()).trim();
}

/** Wait until the footer's last line, trimmed, satisfies `accept`. */
export async function waitForPill(tui: Tui, accept: RegExp | string, timeoutMs = WAIT_MS): Promise<string> {
	const ok = (line: string) => (typeof accept === "string" ? line === accept : accept.test(line));
	const pane = await tui.waitFor((p) => ok(lastLine(p)), timeoutMs);
	return lastLine(pane);
}

function lastLine(pane: string): string {
	return (
		pane
			.split("\n")
			.filter((l) => l.trim() !== "")
			.at(-1) ?? ""
	).trim();
}

/** Type a slash command, wait for pi's autocomplete to offer it, then press Enter. */
export async function runSlash(tui: Tui, command: string, offered: RegExp): Promise<void> {
	await tui.sendText(command);
	await tui.waitFor(offered);
	await tui.sendKey("Enter");
}
