/**
 * Watches the state dir for pi's messages (`pi-<pid>.json`) without polling: one `fs.watch` on the dir
 * (inotify on Linux), a scan of the dir when watching starts (a pi that is already running), and each
 * named file read through pi-reader.ts's checks when an event names it. A pi killed without removing its
 * file sends no event, so while a pi names this editor its pid is probed every few seconds (signal 0, no
 * file access); with no pi connected nothing runs. A host that answers approvals (`onApproval`) also gets pi's
 * requests (`pi-<pid>.approval.json`, v0.4), and one that answers show and ask (`onAsk`) pi's `pi-<pid>.ask.json`
 * (v0.5), read through pi-reader.ts's checks as each event names one. Never
 * throws into the host; problems with a file are reported once per file and problem.
 */
import { existsSync, type FSWatcher, readdirSync, watch } from "node:fs";
import { basename } from "node:path";
import { createStateDir, formatDirHealth } from "../../src/protocol/state-dir.ts";
import { parsePiFileName, piIdentityKey } from "../../src/protocol/wire.ts";
import type { PiMessage } from "./pi-message.ts";
import { piKeyOf } from "./pi-message.ts";
import {
	judgesPiPid,
	type PiApprovalVerdict,
	type PiAskVerdict,
	type PidProbe,
	probePid,
	readPiApproval,
	readPiAsk,
	readPiMessage,
} from "./pi-reader.ts";

/**
 * How often the pids of pis connected to this editor are probed: each second, as Neovim does (one kill(pid, 0) per
 * connected pi; none while no pi is connected), so a killed pi's connection is gone within a second.
 */
export const LIVENESS_MS = 1000;

export interface PiWatcherOptions {
	dir: string;
	/** This editor's pid: pis naming it are probed for liveness. */
	ownPid: number;
	/** A new or rewritten message from a live pi of ours. */
	onMessage(message: PiMessage): void;
	/** That pi's message is gone (deleted, or the pi died); `key`: the pi's identity (pi-message.ts piKeyOf). */
	onGone(pid: number, key: string, piNs?: string): void;
	/** A file was refused or malformed (once per file and problem), or watching failed. */
	onProblem(problem: string): void;
	/**
	 * pi `pid`'s request for approval, read afresh after an event named its file (problems go to onProblem, once,
	 * and come here as `problem` too: whatever was shown for that pi no longer holds). Hosts without it ignore them.
	 */
	onApproval?(pid: number, verdict: PiApprovalVerdict, piNs?: string): void;
	/** v0.5: pi `pid`'s show and ask requests naming this editor, read after an event named the file. */
	onAsk?(pid: number, verdict: PiAskVerdict & { kind: "ask" }, piNs?: string): void;
	/** Seconds since the epoch (requests run out). */
	now?(): number;
	uid?: number;
	probe?: PidProbe;
	livenessMs?: number;
}

export class PiWatcher {
	readonly #options: PiWatcherOptions;
	#watcher: FSWatcher | undefined;
	#pending = new Set<string>();
	#flushTimer: ReturnType<typeof setTimeout> | undefined;
	#livenessTimer: ReturnType<typeof setInterval> | undefined;
	/** By pi's identity key (pid and namespace, v0.5: piKeyOf). */
	readonly #messages = new Map<string, PiMessage>();
	readonly #reported = new Map<string, string>();
	#disposed = false;

	constructor(options: PiWatcherOptions) {
		this.#options = options;
	}

	get watching(): boolean {
		return this.#watcher !== undefined;
	}

	/** The live messages known now, by pi's identity key (piKeyOf). */
	get messages(): ReadonlyMap<string, PiMessage> {
		return this.#messages;
	}

	/** Start watching if not watching yet (idempotent; call again after a failure, e.g. on window focus). */
	start(): void {
		if (this.#disposed || this.#watcher) return;
		const health = createStateDir(this.#options.dir, this.#options.uid ?? process.getuid?.());
		if (!health.ok) {
			this.#problem("dir", `not reading pi's messages: ${formatDirHealth(health)}`);
			return;
		}
		try {
			this.#watcher = watch(this.#options.dir, { persistent: false }, (_event, name) => {
				if (typeof name === "string" && this.#watches(name)) this.#queue(name);
				else if (name === null || name === basename(this.#options.dir)) this.#checkDir();
			});
			this.#watcher.on("error", (error) => {
				this.#problem("dir", `stopped watching ${this.#options.dir}: ${error.message}`);
				this.#closeWatcher();
			});
			for (const name of readdirSync(this.#options.dir)) {
				if (this.#watches(name)) this.#queue(name);
			}
		} catch (error) {
			this.#problem(
				"dir",
				`cannot watch ${this.#options.dir}: ${error instanceof Error ? error.message : String(error)}`,
			);
			this.#closeWatcher();
		}
	}

	/** Stop watching; every known pi is reported gone. `start()` may be called again. */
	stop(): void {
		this.#closeWatcher();
		if (this.#flushTimer !== undefined) clearTimeout(this.#flushTimer);
		this.#flushTimer = undefined;
		this.#pending.clear();
		for (const key of [...this.#messages.keys()]) this.#forget(key);
		this.#setLiveness(false);
	}

	/** Stop for good (the host is shutting down): nothing is reported any more. */
	dispose(): void {
		this.#disposed = true;
		this.#messages.clear();
		this.stop();
	}

	/** The dir itself was removed or renamed: an inotify watch stays on the old one, so stop (start() retries). */
	#checkDir(): void {
		if (existsSync(this.#options.dir)) return;
		this.#problem("dir", `${this.#options.dir} was removed; watching stops until it is back`);
		this.stop();
	}

	#closeWatcher(): void {
		try {
			this.#watcher?.close();
		} catch {
			// already closed
		}
		this.#watcher = undefined;
	}

	#watches(name: string): boolean {
		return (
			parsePiFileName(name)?.kind === "message" ||
			(this.#options.onApproval !== undefined && parsePiFileName(name)?.kind === "approval") ||
			(this.#options.onAsk !== undefined && parsePiFileName(name)?.kind === "ask")
		);
	}

	/** Several events for one write (rename, change) arrive together: read each file once per turn. */
	#queue(name: string): void {
		this.#pending.add(name);
		if (this.#flushTimer !== undefined) return;
		this.#flushTimer = setTimeout(() => {
			this.#flushTimer = undefined;
			const names = [...this.#pending];
			this.#pending.clear();
			for (const each of names) this.#read(each);
		}, 0);
	}

	#read(name: string): void {
		if (this.#disposed) return;
		const approval = parsePiFileName(name);
		if (approval?.kind === "approval") {
			this.#readApproval(name, approval.pid, approval.ns === null ? undefined : `pid:[${approval.ns}]`);
			return;
		}
		if (approval?.kind === "ask") {
			this.#readAsk(name, approval.pid, approval.ns === null ? undefined : `pid:[${approval.ns}]`);
			return;
		}
		try {
			const verdict = readPiMessage(this.#options.dir, name, {
				...(this.#options.uid === undefined ? {} : { uid: this.#options.uid }),
				...(this.#options.probe === undefined ? {} : { probe: this.#options.probe }),
			});
			const parsed = parsePiFileName(name);
			const key = piIdentityKey(parsed?.pid ?? 0, parsed?.ns ? `pid:[${parsed.ns}]` : undefined);
			if (verdict.kind === "message") {
				this.#reported.delete(name);
				this.#messages.set(key, verdict.message);
				this.#updateLiveness();
				this.#options.onMessage(verdict.message);
			} else if (verdict.kind === "problem") {
				this.#problem(name, `${name} ${verdict.problem}`);
				this.#forget(key);
			} else {
				this.#reported.delete(name);
				this.#forget(key);
			}
		} catch (error) {
			this.#problem(name, `${name}: ${error instanceof Error ? error.message : String(error)}`);
		}
	}

	#readApproval(name: string, pid: number, piNs: string | undefined): void {
		const onApproval = this.#options.onApproval;
		if (onApproval === undefined) return;
		try {
			const verdict = readPiApproval(
				this.#options.dir,
				pid,
				{
					ownPid: this.#options.ownPid,
					now: this.#options.now?.() ?? Date.now() / 1000,
					...(this.#options.uid === undefined ? {} : { uid: this.#options.uid }),
					...(this.#options.probe === undefined ? {} : { probe: this.#options.probe }),
				},
				piNs,
			);
			if (verdict.kind === "problem") this.#problem(name, `${name} ${verdict.problem}`);
			else this.#reported.delete(name);
			onApproval(pid, verdict, piNs);
		} catch (error) {
			this.#problem(name, `${name}: ${error instanceof Error ? error.message : String(error)}`);
		}
	}

	#readAsk(name: string, pid: number, piNs: string | undefined): void {
		const onAsk = this.#options.onAsk;
		if (onAsk === undefined) return;
		try {
			const verdict = readPiAsk(
				this.#options.dir,
				pid,
				{
					ownPid: this.#options.ownPid,
					...(this.#options.uid === undefined ? {} : { uid: this.#options.uid }),
					...(this.#options.probe === undefined ? {} : { probe: this.#options.probe }),
				},
				piNs,
			);
			if (verdict.kind === "problem") this.#problem(name, `${name} ${verdict.problem}`);
			else if (verdict.kind === "ask" && verdict.file.problem !== undefined) {
				this.#problem(name, `${name}: a request ignored: ${verdict.file.problem}`);
			} else this.#reported.delete(name);
			if (verdict.kind === "ask") onAsk(pid, verdict, piNs);
		} catch (error) {
			this.#problem(name, `${name}: ${error instanceof Error ? error.message : String(error)}`);
		}
	}

	#forget(key: string): void {
		const message = this.#messages.get(key);
		if (!message || !this.#messages.delete(key)) return;
		const pid = message.pid;
		this.#updateLiveness();
		try {
			this.#options.onGone(pid, piKeyOf(message), message.pid_ns);
		} catch (error) {
			this.#problem(
				"gone",
				`handling pi ${pid}'s exit failed: ${error instanceof Error ? error.message : String(error)}`,
			);
		}
	}

	#problem(key: string, problem: string): void {
		if (this.#reported.get(key) === problem) return;
		this.#reported.set(key, problem);
		try {
			this.#options.onProblem(problem);
		} catch {
			// the host's logger failed: nothing sensible is left to do
		}
	}

	#updateLiveness(): void {
		const connected = [...this.#messages.values()].some((m) => m.editor_pid === this.#options.ownPid);
		this.#setLiveness(connected);
	}

	#setLiveness(on: boolean): void {
		if (on && this.#livenessTimer === undefined) {
			this.#livenessTimer = setInterval(() => this.#probeAll(), this.#options.livenessMs ?? LIVENESS_MS);
			this.#livenessTimer.unref?.();
		} else if (!on && this.#livenessTimer !== undefined) {
			clearInterval(this.#livenessTimer);
			this.#livenessTimer = undefined;
		}
	}

	#probeAll(): void {
		try {
			const probe = this.#options.probe ?? probePid;
			// v0.5: only a pi of this editor's own namespace can be checked from here; another's counts until its file goes.
			for (const [key, message] of [...this.#messages.entries()]) {
				if (judgesPiPid(message.pid_ns) && probe(message.pid) !== "alive") this.#forget(key);
			}
		} catch (error) {
			this.#problem("probe", `liveness probe failed: ${error instanceof Error ? error.message : String(error)}`);
		}
	}
}
