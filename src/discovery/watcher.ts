/**
 * What keeps the pill live between prompts: a chokidar watcher on the state dir
 * and a slow liveness timer. The watcher turns a burst of events (an atomic
 * rename is unlink + add) into one coalesced rescan on the next turn of the
 * event loop; the timer asks whether the connected editor still runs, because a
 * killed editor leaves its file behind and no event. Neither ever throws into
 * pi: failures are reported through `onWarning`, once the caller decides.
 */
import { basename } from "node:path";
import { type FSWatcher, watch } from "chokidar";
import type { ScanMode } from "./scan.ts";

/** How often the connected editor's pid is probed: a killed editor leaves its file behind and no event. */
export const LIVENESS_INTERVAL_MS = 2000;

export interface WatcherHooks {
	/** A state file changed; `name` is its base name (`123.json`). Called for every event, before the rescan. */
	changed(name: string): void;
	/** Rescan now: "changed" while the watcher reports every change, "verify" when it may have missed some. */
	rescan(mode: ScanMode): void;
	/** The liveness timer fired. */
	tick(): void;
	warn(message: string): void;
}

export class StateDirWatcher {
	readonly #dir: string;
	readonly #hooks: WatcherHooks;
	#watcher: FSWatcher | undefined;
	#timer: NodeJS.Timeout | undefined;
	#rescanQueued = false;
	/** Ready, and no error since: its events cover every change. */
	#live = false;
	#stopped = false;

	constructor(dir: string, hooks: WatcherHooks) {
		this.#dir = dir;
		this.#hooks = hooks;
	}

	/** Events cover every change (the watcher is ready and has reported no error). */
	get live(): boolean {
		return this.#live;
	}

	/**
	 * Watch the dir and start the liveness timer. The promise settles (never rejects)
	 * once the watcher is ready and a catch-up rescan has run.
	 */
	start(): Promise<void> {
		if (this.#stopped) return Promise.resolve();
		this.#timer = setInterval(() => this.#safely(() => this.#hooks.tick()), LIVENESS_INTERVAL_MS);
		this.#timer.unref();
		try {
			const watcher = watch(this.#dir, {
				depth: 0,
				ignoreInitial: true,
				followSymlinks: false,
				// An atomic rename is a plain add/change for us; waiting to merge unlink+add only adds latency.
				atomic: false,
				persistent: false,
				ignored: (path: string) => path.endsWith(".tmp"),
			});
			// chokidar throttles "change" per file (~50 ms): two writes in quick succession (a buffer switch, then
			// a selection) would leave the pill on the first. Raw events are never throttled.
			const changed = (path: string) => {
				const name = basename(path);
				if (name.endsWith(".tmp")) return;
				this.#safely(() => this.#hooks.changed(name));
				this.#queueRescan();
			};
			watcher.on("all", (_event, path) => changed(path));
			watcher.on("raw", (_event, path) => {
				if (typeof path === "string" && path !== "") changed(path);
			});
			watcher.on("error", (error) => {
				// Events may have been lost: stop trusting the watcher and check every file from now on.
				this.#live = false;
				this.#safely(() => this.#hooks.warn(`pi-ide-context: watching ${this.#dir} failed: ${String(error)}`));
			});
			this.#watcher = watcher;
			return new Promise((resolve) => {
				watcher.once("ready", () => {
					// Writes between the caller's first scan and the watcher going live would be missed: catch up
					// with a verifying rescan; only then may rescans rely on events.
					if (!this.#stopped) {
						this.#safely(() => this.#hooks.rescan("verify"));
						this.#live = true;
					}
					resolve();
				});
			});
		} catch (error) {
			this.#safely(() => this.#hooks.warn(`pi-ide-context: cannot watch ${this.#dir}: ${String(error)}`));
			return Promise.resolve();
		}
	}

	/** Close the watcher and the timer. Idempotent; never rejects. */
	async stop(): Promise<void> {
		this.#stopped = true;
		this.#live = false;
		if (this.#timer) clearInterval(this.#timer);
		this.#timer = undefined;
		const watcher = this.#watcher;
		this.#watcher = undefined;
		if (!watcher) return;
		try {
			await watcher.close();
		} catch {
			// Closing a watcher whose directory vanished can fail; there is nothing left to release.
		}
	}

	/** Coalesce a burst of events into one rescan on the next turn of the event loop. */
	#queueRescan(): void {
		if (this.#rescanQueued || this.#stopped) return;
		this.#rescanQueued = true;
		setImmediate(() => {
			this.#rescanQueued = false;
			if (!this.#stopped) this.#safely(() => this.#hooks.rescan(this.#live ? "changed" : "verify"));
		});
	}

	#safely(fn: () => void): void {
		try {
			fn();
		} catch {
			// A timer or watcher callback must never throw into pi; the hooks report their own failures.
		}
	}
}
