/**
 * Send to pi from Obsidian (protocol v0.5): the commands "Send selection or line to pi (draft)", "... now", "Send
 * the note to pi (draft)" and "... now" hand the pi connected to this Obsidian the note's selection (or the line
 * of the cursor) or the whole note, with words typed in a small prompt window. The rules are the shared ones
 * (editors/shared/send.ts); Obsidian has no diagnostics and pi marks no hunks here, so those forms are not offered.
 * Which pi: the pis whose message names this Obsidian (its pid, as in the state file's name), read by the shared
 * PiWatcher under the same file checks as every client; with several the user picks one (remembered).
 */
import { type App, Modal, SuggestModal } from "obsidian";
import type { SendMode } from "../../../src/protocol/send.ts";
import type { PiMessage } from "../../shared/pi-message.ts";
import {
	describePi,
	pisNaming,
	SendDesk,
	type SendForm,
	selectedLines,
	sendItem,
	withSelection,
} from "../../shared/send.ts";
import { type ActiveView, snapshotDocument } from "./snapshot.ts";

/** The plugin's send commands (their ids are `<plugin id>:<id>` in Obsidian's hotkey settings). */
export const SEND_COMMANDS: readonly { id: string; name: string; form: SendForm; mode: SendMode }[] = [
	{ id: "send", name: "Send selection or line to pi (draft)", form: "default", mode: "draft" },
	{ id: "send-now", name: "Send selection or line to pi now", form: "default", mode: "now" },
	{ id: "send-file", name: "Send the note to pi (draft)", form: "file", mode: "draft" },
	{ id: "send-file-now", name: "Send the note to pi now", form: "file", mode: "now" },
];

/** The DOM this file touches, typed here because the project compiles without the DOM library. */
interface InputLike {
	value: string;
	focus(): void;
	addEventListener(type: "keydown", listener: (event: { key: string; isComposing?: boolean }) => void): void;
}
interface ContainerLike {
	empty(): void;
	createEl(tag: "input", options: { type: string; placeholder: string }): InputLike;
}

/** A one-line prompt: Enter answers with the text, closing it otherwise answers undefined (nothing sent). */
export class PromptModal extends Modal {
	readonly #title: string;
	readonly #done: (text: string | undefined) => void;
	#answered = false;
	input: InputLike | undefined;

	constructor(app: App, title: string, done: (text: string | undefined) => void) {
		super(app);
		this.#title = title;
		this.#done = done;
	}

	override onOpen(): void {
		this.titleEl.setText(this.#title);
		const content = this.contentEl as unknown as ContainerLike;
		content.empty();
		const input = content.createEl("input", { type: "text", placeholder: "Your words (optional); Enter sends" });
		this.input = input;
		input.addEventListener("keydown", (event) => {
			if (event.key !== "Enter" || event.isComposing) return;
			this.#answer(input.value);
			this.close();
		});
		input.focus();
	}

	override onClose(): void {
		this.#answer(undefined);
	}

	#answer(text: string | undefined): void {
		if (this.#answered) return;
		this.#answered = true;
		this.#done(text);
	}
}

/** Which pi, when several name this Obsidian: picking one answers it; closing without a pick answers undefined. */
export class PickPiModal extends SuggestModal<PiMessage> {
	readonly #choices: readonly PiMessage[];
	readonly #done: (pi: PiMessage | undefined) => void;
	#answered = false;

	constructor(app: App, choices: readonly PiMessage[], done: (pi: PiMessage | undefined) => void) {
		super(app);
		this.#choices = choices;
		this.#done = done;
		this.setPlaceholder("Send to which pi? (remembered)");
	}

	getSuggestions(query: string): PiMessage[] {
		return this.#choices.filter((pi) => describePi(pi).toLowerCase().includes(query.toLowerCase()));
	}

	renderSuggestion(pi: PiMessage, el: { setText(text: string): void }): void {
		el.setText(describePi(pi));
	}

	onChooseSuggestion(pi: PiMessage): void {
		this.#answer(pi);
	}

	override onClose(): void {
		// Obsidian closes the modal before it reports the choice: wait for it a turn.
		setTimeout(() => this.#answer(undefined), 0);
	}

	#answer(pi: PiMessage | undefined): void {
		if (this.#answered) return;
		this.#answered = true;
		this.#done(pi);
	}
}

export interface SendHost {
	app: App;
	dir: string;
	pid: number;
	vaultRoot: string;
	view(): ActiveView;
	messages(): Iterable<PiMessage>;
	say(line: string): void;
}

/** The send commands' logic, one per plugin load. */
export class ObsidianSend {
	readonly #host: SendHost;
	readonly #desk: SendDesk;

	constructor(host: SendHost) {
		this.#host = host;
		this.#desk = new SendDesk({ dir: host.dir, pid: host.pid });
	}

	/** pi's message arrived: if it answers one of our sends, say so in one line. */
	answered(message: PiMessage): void {
		const line = this.#desk.answered(message);
		if (line !== undefined) this.#host.say(line);
	}

	summary(): string | undefined {
		return this.#desk.summary();
	}

	dispose(): void {
		this.#desk.dispose();
	}

	async send(form: SendForm, mode: SendMode): Promise<void> {
		const host = this.#host;
		const view = host.view();
		const document = snapshotDocument(view);
		if (form === "default" && view.kind === "reading" && !document?.selection) {
			return host.say("reading mode has no cursor: select text, or switch to editing mode; nothing sent");
		}
		const item = sendItem({
			form,
			file: document && view.kind !== "file" ? `${host.vaultRoot}/${document.file}` : undefined,
			lines: document?.lines ?? { count: 0, text: () => "" },
			cursor: document?.cursor?.line ?? 0,
			...withSelection(
				document?.selection ? selectedLines(document.selection.anchor, document.selection.head) : undefined,
			),
		});
		if (!item.ok) return host.say(item.notice);
		const picked = await this.#desk.pick(
			pisNaming(host.messages(), host.pid),
			(choices) => new Promise((resolve) => new PickPiModal(host.app, choices, resolve).open()),
		);
		if (!picked.ok) return host.say(picked.notice);
		const title = mode === "now" ? "Send to pi now" : "Send to pi's input (draft)";
		const prompt = await new Promise<string | undefined>((resolve) => new PromptModal(host.app, title, resolve).open());
		if (prompt === undefined) return host.say("nothing sent");
		const written = this.#desk.write(picked.pi, item.item, mode, prompt);
		if (!written.ok) host.say(written.notice);
	}
}
