/**
 * v0.5 show and ask, the I/O half: for each call of pi's `ide_show` / `ide_open_files` tools, writes the request
 * into `pi-<pid>.ask.json` (under the rules of pi's message: private dir, 0600, atomic), waits at most 1 s for the
 * connected editor's answer in its `<editor pid>.answers.json` (a regular file of ours, never through a link,
 * capped), and removes the request file once no call waits. Nothing runs while no call is under way: the watch
 * and the timers live only as long as a call. Never throws; the words are show-ask.ts's.
 */
import { type FSWatcher, lstatSync, statSync, watch } from "node:fs";
import { join } from "node:path";
import { formatEditorName, oneLine } from "../protocol/inert.ts";
import { ASK_WAIT_MS, MAX_ANSWERS_FILE_BYTES, MAX_ASK_REQUESTS } from "../protocol/limits.ts";
import { type PathMapping, toEditorPath, toPiPath } from "../protocol/path-map.ts";
import type { EditorState } from "../protocol/protocol.ts";
import { editorAnswersFileName, parseAnswers, type ShowAskAnswer, type ShowAskRequest } from "../protocol/show-ask.ts";
import { readPrivateFile, refusePrivate } from "../protocol/state-dir.ts";
import { piFileName } from "../protocol/wire.ts";
import { resolveToolPath } from "./pi-message.ts";
import { PiMessageWriter } from "./pi-writer.ts";
import {
	buildAsk,
	buildShow,
	describeAsk,
	describeNoAnswer,
	describeShow,
	encodeAskMessage,
	findAnswer,
	type NoAnswer,
	parseShowParams,
} from "./show-ask.ts";

/** How often a waiting call reads the answers file besides the watcher's news (a lost event costs no more). */
const BACKSTOP_MS = 100;

export interface AskDeskOptions {
	stateDir: string;
	uid: number;
	pid: number;
	/** The `pid_ns` pi writes, or null. */
	pidNamespace: string | null;
	cwd: string;
	home: string;
	/** The editor pi is connected to now. */
	connected: () => { pid: number; state: EditorState } | undefined;
	excluded: (file: string) => boolean;
	paths?: readonly PathMapping[];
	waitMs?: number;
	nowMs?: () => number;
}

/** Why a call ended without the editor's answer. */
type Silence = { why: "timeout"; waitedMs: number } | { why: "aborted" } | { why: "not written"; problem: string };

export interface ToolText {
	text: string;
	isError: boolean;
}

export class AskDesk {
	readonly #options: AskDeskOptions;
	readonly #writer: PiMessageWriter;
	readonly #pending = new Map<string, { editorPid: number; request: ShowAskRequest }>();
	#closed = false;

	constructor(options: AskDeskOptions) {
		this.#options = options;
		this.#writer = new PiMessageWriter(
			options.stateDir,
			options.pid,
			options.uid,
			piFileName("ask", options.pid, options.pidNamespace),
		);
	}

	/** `ide_show`: put a place in the user's editor, without taking the user's focus. */
	async show(input: unknown, id: string, signal?: AbortSignal): Promise<ToolText> {
		try {
			const params = parseShowParams(input);
			if (typeof params === "string") return { text: `Not shown: ${params}.`, isError: true };
			const { cwd, home } = this.#options;
			const file = resolveToolPath(params.path, cwd, home);
			if (file === null) return { text: "Not shown: the path names no file pi can use.", isError: true };
			if (this.#excluded(file))
				return {
					text: "Not shown: pi-ide-context's ignore rules exclude this file from the editor link.",
					isError: true,
				};
			if (!isRegularFile(file))
				return { text: `Not shown: ${oneLine(params.path, 300)} is not a file.`, isError: true };
			const editor = this.#options.connected();
			if (!editor) return { text: describeNoAnswer("show", { kind: "no editor" }), isError: false };
			const request = buildShow(id, toEditorPath(file, this.#paths()), params, this.#expires());
			const answer = await this.#call(editor.pid, request, signal);
			const name = formatEditorName(editor.state);
			if ("why" in answer) return { text: describeNoAnswer("show", this.#noAnswer(answer, name)), isError: false };
			if (answer.kind === "show")
				return { text: describeShow(answer, name, file, params.line, params.endLine, cwd), isError: false };
			return { text: describeNoAnswer("show", { kind: "wrong answer", editor: name }), isError: false };
		} catch (error) {
			return { text: `Not shown: pi-ide-context failed (${oneLine(String(error), 200)}).`, isError: true };
		}
	}

	/** `ide_open_files`: the editor's open file buffers, and the diagnostics of `path` (or of every one). */
	async ask(input: unknown, id: string, signal?: AbortSignal): Promise<ToolText> {
		try {
			const raw = input && typeof input === "object" ? (input as Record<string, unknown>)["path"] : undefined;
			let named: string | null = null;
			if (typeof raw === "string" && raw.trim() !== "") {
				named = resolveToolPath(raw, this.#options.cwd, this.#options.home);
				if (named === null) return { text: "The path names no file pi can use.", isError: true };
			}
			const editor = this.#options.connected();
			if (!editor) return { text: describeNoAnswer("ask", { kind: "no editor" }), isError: false };
			// An excluded file's diagnostics are not asked for: nothing of it reaches the model.
			const target = named === null ? "all" : this.#excluded(named) ? "none" : toEditorPath(named, this.#paths());
			const request = buildAsk(id, target, this.#expires());
			const answer = await this.#call(editor.pid, request, signal);
			const name = formatEditorName(editor.state);
			if ("why" in answer) return { text: describeNoAnswer("ask", this.#noAnswer(answer, name)), isError: false };
			if (answer.kind === "ask") {
				const paths = this.#paths();
				const text = describeAsk(answer, {
					editor: name,
					cwd: this.#options.cwd,
					named,
					toPi: (f) => toPiPath(f, paths),
					excluded: (f) => this.#excluded(f),
				});
				return { text, isError: false };
			}
			return { text: describeNoAnswer("ask", { kind: "wrong answer", editor: name }), isError: false };
		} catch (error) {
			return { text: `pi-ide-context failed (${oneLine(String(error), 200)}).`, isError: true };
		}
	}

	/** No more calls; the request file goes. */
	close(): void {
		this.#closed = true;
		this.#pending.clear();
		this.#writer.remove();
	}

	#paths(): readonly PathMapping[] {
		return this.#options.paths ?? [];
	}

	#expires(): number {
		return this.#now() / 1000 + (this.#options.waitMs ?? ASK_WAIT_MS) / 1000 + 1;
	}

	#now(): number {
		return this.#options.nowMs?.() ?? Date.now();
	}

	#excluded(file: string): boolean {
		try {
			return this.#options.excluded(file);
		} catch {
			return true;
		}
	}

	#noAnswer(why: Silence, editor: string): NoAnswer {
		if (why.why === "timeout") return { kind: "no answer", editor, waitedMs: why.waitedMs };
		if (why.why === "aborted") return { kind: "aborted" };
		return { kind: "not written", problem: why.problem };
	}

	/** Publish `request` for editor `editorPid` and wait for its answer. */
	async #call(editorPid: number, request: ShowAskRequest, signal?: AbortSignal): Promise<ShowAskAnswer | Silence> {
		if (this.#closed) return { why: "not written", problem: "pi's session is ending" };
		if (this.#pending.size >= MAX_ASK_REQUESTS)
			return { why: "not written", problem: `more than ${MAX_ASK_REQUESTS} calls at once` };
		this.#pending.set(request.id, { editorPid, request });
		try {
			const written = this.#publish();
			if (written !== null) return { why: "not written", problem: written };
			return await this.#wait(editorPid, request.id, signal);
		} finally {
			this.#pending.delete(request.id);
			this.#publish();
		}
	}

	/** The request file with every waiting call's request for the editor of the newest; removed when none waits. */
	#publish(): string | null {
		const all = [...this.#pending.values()];
		const last = all.at(-1);
		if (!last || this.#closed) {
			this.#writer.remove();
			return null;
		}
		const text = encodeAskMessage({
			pid: this.#options.pid,
			pidNs: this.#options.pidNamespace,
			editorPid: last.editorPid,
			now: this.#now() / 1000,
			requests: all.filter((p) => p.editorPid === last.editorPid).map((p) => p.request),
		});
		const outcome = this.#writer.write(null, text);
		return outcome.ok ? null : outcome.message;
	}

	#wait(
		editorPid: number,
		id: string,
		signal?: AbortSignal,
	): Promise<ShowAskAnswer | { why: "timeout"; waitedMs: number } | { why: "aborted" }> {
		const waitMs = this.#options.waitMs ?? ASK_WAIT_MS;
		const name = editorAnswersFileName(editorPid);
		const path = join(this.#options.stateDir, name);
		return new Promise((resolve) => {
			let done = false;
			let watcher: FSWatcher | undefined;
			const cleanups: (() => void)[] = [];
			const finish = (value: ShowAskAnswer | { why: "timeout"; waitedMs: number } | { why: "aborted" }) => {
				if (done) return;
				done = true;
				for (const cleanup of cleanups) {
					try {
						cleanup();
					} catch {
						// Releasing must not fail the call.
					}
				}
				resolve(value);
			};
			const check = () => {
				if (done) return;
				const answer = this.#readAnswer(path, editorPid, id);
				if (answer) finish(answer);
			};
			if (signal?.aborted) return finish({ why: "aborted" });
			const onAbort = () => finish({ why: "aborted" });
			signal?.addEventListener("abort", onAbort, { once: true });
			cleanups.push(() => signal?.removeEventListener("abort", onAbort));
			try {
				watcher = watch(this.#options.stateDir, { persistent: false }, (_event, changed) => {
					if (changed === null || changed === name) check();
				});
				watcher.on("error", () => {});
				cleanups.push(() => watcher?.close());
			} catch {
				// No watcher: the backstop still reads the answer.
			}
			const backstop = setInterval(check, BACKSTOP_MS);
			cleanups.push(() => clearInterval(backstop));
			const timer = setTimeout(() => finish({ why: "timeout", waitedMs: waitMs }), waitMs);
			cleanups.push(() => clearTimeout(timer));
			check();
		});
	}

	/** This pi's answer to `id` in editor `editorPid`'s answers file, if there is one yet. Never throws. */
	#readAnswer(path: string, editorPid: number, id: string): ShowAskAnswer | undefined {
		try {
			const seen = lstatSync(path, { throwIfNoEntry: false });
			if (!seen?.isFile()) return undefined; // none yet, or a symlink / something else: never followed
			const uid = this.#options.uid;
			const read = readPrivateFile(path, seen, {
				maxBytes: MAX_ANSWERS_FILE_BYTES,
				refuse: (stats) => refusePrivate(stats, uid, MAX_ANSWERS_FILE_BYTES),
			});
			if (read.kind !== "text") return undefined;
			const parsed = parseAnswers(read.text, editorPid);
			if (!parsed.ok) return undefined;
			return findAnswer(parsed.answers, this.#options.pid, this.#options.pidNamespace, id);
		} catch {
			return undefined;
		}
	}
}

function isRegularFile(file: string): boolean {
	try {
		return statSync(file).isFile();
	} catch {
		return false;
	}
}
