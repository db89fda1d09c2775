/**
 * pi's show and ask (protocol v0.5) answered in Obsidian: the thin shell over the shared AskResponder
 * (editors/shared/show-ask.ts). While pi's `ide_show` or `ide_open_files` waits (at most 1 s), pi writes
 * `pi-<pid>.ask.json` naming this Obsidian; the shared PiWatcher reads it through pi-reader.ts's checks (yours,
 * 0600, no symlink, 64 KiB, a live pi, this Obsidian's pid).
 * - A show goes to "pi's places", a list the plugin keeps (the newest 100), with one Notice line ("pi shows
 *   notes/a.md:12: note"); the active leaf, its cursor and focus stay. The command "Show pi's places" lists them
 *   and opens the one picked at its line. Only the follow setting ("Follow pi's shows: on/off") opens the place at
 *   once (the answer says `opened`). A file outside the vault is refused: Obsidian opens only the vault's notes.
 * - An ask is answered from the notes open in Markdown leaves (notes.ts: `modified` is "the editor's text differs
 *   from the file on disk", read only when pi asks). Obsidian has no diagnostics: a buffer the ask names gets
 *   `diagnostics: null` (no checker reported), as PROTOCOL.md says of a buffer without a checker's report.
 * The answers go to `<pid>.answers.json`, removed when the plugin unloads.
 */
import { type App, MarkdownView, SuggestModal, TFile } from "obsidian";
import type { PiAskVerdict } from "../../shared/pi-reader.ts";
import {
	AskResponder,
	describeShow,
	inertNote,
	type OpenDocument,
	type ShowAnswer,
	type ShowRequest,
} from "../../shared/show-ask.ts";
import { countLines, linesOf } from "../../shared/state.ts";
import { type NoteVersions, openNotes, vaultPath } from "./notes.ts";

/** The places kept in the list, newest last (the oldest go first). */
export const MAX_PLACES = 100;

/** A place pi showed, as the list holds it. */
export interface Place {
	/** Absolute path, as pi named it. */
	file: string;
	/** Vault-relative, as Obsidian names the note. */
	path: string;
	line: number;
	end_line: number | null;
	/** The entry's text: "pi: <note>" (inert), or "pi". */
	text: string;
}

/** A place as one line: "notes/a.md:12-14 pi: the note". */
export function describePlace(place: Place): string {
	const lines =
		place.end_line !== null && place.end_line !== place.line ? `${place.line}-${place.end_line}` : `${place.line}`;
	return `${place.path}:${lines} ${place.text}`;
}

export interface ShowAskHost {
	app: App;
	dir: string;
	pid: number;
	vaultRoot: string;
	/** The notes' versions and modified flags, shared with the state file's (notes.ts). */
	versions: NoteVersions;
	/** The follow setting: open a shown place at once. */
	follow(): boolean;
	/** One Notice line. */
	say(line: string): void;
	/** A line in the developer console. */
	log(message: string): void;
	/** Seconds since the epoch. */
	now(): number;
}

/** The command "Show pi's places": the places, newest first; picking one opens it. */
export class PlacesModal extends SuggestModal<Place> {
	readonly #places: readonly Place[];
	readonly #open: (place: Place) => void;

	constructor(app: App, places: readonly Place[], open: (place: Place) => void) {
		super(app);
		this.#places = [...places].reverse();
		this.#open = open;
		this.setPlaceholder("Open which of pi's places?");
	}

	getSuggestions(query: string): Place[] {
		return this.#places.filter((place) => describePlace(place).toLowerCase().includes(query.toLowerCase()));
	}

	renderSuggestion(place: Place, el: { setText(text: string): void }): void {
		el.setText(describePlace(place));
	}

	onChooseSuggestion(place: Place): void {
		this.#open(place);
	}
}

export class ObsidianShowAsk {
	readonly #host: ShowAskHost;
	readonly #responder: AskResponder;
	#places: Place[] = [];

	constructor(host: ShowAskHost) {
		this.#host = host;
		this.#responder = new AskResponder(host.dir, host.pid);
	}

	/** The places in the list, oldest first. */
	get places(): readonly Place[] {
		return this.#places;
	}

	/** What the watcher read of pi `pid`'s request file: answer each new request once. */
	received(pid: number, verdict: PiAskVerdict & { kind: "ask" }): void {
		const problem = this.#responder.receive(
			pid,
			verdict.file,
			{ show: (request) => this.#show(request), documents: () => this.#documents() },
			this.#host.now(),
		);
		if (problem !== undefined) this.#host.log(`pi's show/ask: cannot write the answers: ${problem}`);
	}

	/** The command "Show pi's places" (an empty list says "No results found", as Obsidian's pickers do). */
	pick(): void {
		new PlacesModal(this.#host.app, this.#places, (place) => void this.open(place)).open();
	}

	/** The command "Clear pi's places". */
	clear(): void {
		this.#places = [];
	}

	/** Open the place's note in the active leaf, the cursor on its line. Never throws. */
	async open(place: Place): Promise<void> {
		try {
			const { vault, workspace } = this.#host.app;
			const file = vault.getAbstractFileByPath(place.path);
			if (!(file instanceof TFile)) return this.#host.say(`cannot open ${place.path}: not a note of this vault`);
			const leaf = workspace.getLeaf(false);
			await leaf.openFile(file, { eState: { line: place.line - 1 } });
			const view = leaf.view;
			if (view instanceof MarkdownView && view.getMode() === "source") view.editor.setCursor(place.line - 1, 0);
		} catch (error) {
			this.#host.say(`cannot open ${place.path}: ${error instanceof Error ? error.message : String(error)}`);
		}
	}

	/** Remove the answers file (the plugin unloads). */
	dispose(): void {
		this.#responder.dispose();
	}

	#show(request: ShowRequest): Pick<ShowAnswer, "status" | "list" | "reason"> {
		const path = vaultPath(this.#host.vaultRoot, request.file);
		if (path === undefined) {
			return { status: "refused", list: null, reason: "not in this Obsidian vault: Obsidian opens only its notes" };
		}
		const note = request.note === null ? "" : inertNote(request.note);
		const place: Place = {
			file: request.file,
			path,
			line: request.line,
			end_line: request.end_line,
			text: note === "" ? "pi" : `pi: ${note}`,
		};
		this.#places = [...this.#places, place].slice(-MAX_PLACES);
		this.#host.say(describeShow(request, path));
		const follow = this.#host.follow();
		if (follow) void this.open(place);
		return { status: follow ? "opened" : "listed", list: "places", reason: null };
	}

	#documents(): OpenDocument[] {
		const { workspace } = this.#host.app;
		const views = workspace
			.getLeavesOfType("markdown")
			.map((leaf) => leaf.view)
			.filter((view): view is MarkdownView => view instanceof MarkdownView);
		const active = workspace.getActiveViewOfType(MarkdownView);
		return openNotes(views, active, this.#host.vaultRoot, this.#host.versions).map((note) => ({
			file: note.file,
			modified: note.modified,
			version: note.version,
			lines_total: countLines(linesOf(note.text)),
			active: note.active,
			is: (file) => file === note.file || vaultPath(this.#host.vaultRoot, file) === note.path,
			diagnostics: () => null,
		}));
	}
}
