/**
 * The extension's state for one pi session, independent of pi itself so that
 * benchmarks and tests can drive it with a fake UI: it scans the state dir,
 * keeps the connection decision, watches for changes to keep the pill live,
 * and prepares what each prompt injects. Every entry point is total: errors
 * become diagnostics or warnings, never exceptions (one unhandled rejection in
 * an extension ends the user's pi session).
 */
import { dirname, isAbsolute } from "node:path";
import { type ContextBlock, formatContextBlock } from "./context/blocks.ts";
import { appendPromptDiagnostics } from "./context/diagnostics.ts";
import { checkIgnored, type IgnoreRules, type IgnoreVerdict } from "./context/ignore-rules.ts";
import type { StaleReason } from "./context/model-view.ts";
import { type CompiledRules, IgnoreRulesLoader } from "./context/rules-files.ts";
import type { ChoiceStore } from "./discovery/choice-store.ts";
import {
	type ChoicesFile,
	EMPTY_CHOICES,
	fingerprintOf,
	type RememberedChoice,
	type RememberedResolution,
	resolveRemembered,
} from "./discovery/choices.ts";
import {
	type Connection,
	type ConnectionMode,
	type DisconnectedWhy,
	decideConnection,
} from "./discovery/connection.ts";
import { type EnvPidVerdict, findHostEditor, type HostEditor, type HostHints } from "./discovery/host-editor.ts";
import type { StartClock } from "./discovery/proc-info.ts";
import {
	type EditorRecord,
	type PiFileRecord,
	type ScanDiagnostic,
	type ScanMode,
	StateDirScanner,
} from "./discovery/scan.ts";
import { bestTier, focusWindow, rankEditors, scoreEditor, type Tier } from "./discovery/tiers.ts";
import { StateDirWatcher } from "./discovery/watcher.ts";
import { isPidReused, judgesPids, type Liveness, probePid } from "./protocol/liveness.ts";
import { isMapped, type PathMapping } from "./protocol/path-map.ts";
import { nodePathProbe } from "./protocol/path-probe.ts";
import { type PathProbe, resolveEditorFile, resolveReal } from "./protocol/paths.ts";
import type { EditorState } from "./protocol/protocol.ts";
import { createStateDir, type DirHealth, readOwnPidNamespace } from "./protocol/state-dir.ts";
import { formatPill } from "./ui/glyphs.ts";
import { formatPickerChoices, type PickerAction } from "./ui/picker.ts";
import type { IdeSettings } from "./ui/settings.ts";
import { describeDisconnected, formatStatusReport, type StatusFacts } from "./ui/status-report.ts";

export interface UiPort {
	setStatus(text: string | undefined): void;
	notify(message: string, level: "info" | "warning" | "error"): void;
}

export interface ControllerOptions {
	piCwd: string;
	stateDir: string;
	agentDir: string;
	/** pi's project config dir name (`.pi`). */
	configDirName: string;
	uid: number;
	home: string;
	settings: IdeSettings;
	ui: UiPort | null;
	isProjectTrusted: () => boolean;
	nowMs?: () => number;
	probePid?: (pid: number) => Liveness;
	/**
	 * pi's own pid namespace (`pid:[...]`), null when unknown; default: read from /proc once. Editors and pis of
	 * another namespace cannot be judged by their pid from here (src/protocol/liveness.ts `judgesPids`).
	 */
	pidNamespace?: string | null;
	pathProbe?: PathProbe;
	/**
	 * The editors' directories as pi sees them (pi in a sandbox or a container: the `ideContext.paths` setting and
	 * pi's bind mounts, src/discovery/mounts.ts); none by default. Every state is read in pi's paths.
	 */
	paths?: readonly PathMapping[];
	/** Where pi runs: PI_IDE_EDITOR_PID and pi's ancestors (none by default). */
	hostHints?: HostHints;
	/** Process start times, for the pid-reuse check (none by default: unknown). */
	startClock?: StartClock;
	/** Remembered `/ide` choices (none by default: nothing remembered). */
	choiceStore?: Pick<ChoiceStore, "load" | "remember" | "path" | "signature">;
}

export interface EditorView {
	record: EditorRecord;
	tier: Tier | null;
}

export interface View {
	health: DirHealth;
	/** Live editors we may read, best tier first, then most recent. */
	editors: EditorView[];
	/** Files skipped: invalid, refused, dead or foreign pids. */
	diagnostics: ScanDiagnostic[];
	connection: Connection;
	/** The editor pi runs in (its terminal), when it has a live state file. */
	host: HostEditor | null;
	/** What PI_IDE_EDITOR_PID amounted to (the host, or why not). */
	envPid: EnvPidVerdict;
	/** The remembered choice for this project, resolved against the live editors. */
	remembered: RememberedResolution;
}

export type Injection =
	| { kind: "inject"; block: ContextBlock; editor: EditorRecord }
	/** `reason` names things for /ide status; `stale` is the general reason the model may be told. */
	| { kind: "skip"; reason: string; stale: StaleReason };

/** Why the model's editor context is out of date when pi is not connected. */
const DISCONNECTED_STALE: Readonly<Record<DisconnectedWhy, StaleReason>> = {
	off: "off",
	"remembered off": "off",
	"no editor": "gone",
	"several candidates": "choose",
};

export class IdeController {
	readonly #options: ControllerOptions;
	readonly #scanner: StateDirScanner;
	readonly #nowMs: () => number;
	readonly #probePid: (pid: number) => Liveness;
	readonly #pidNamespace: string | null;
	readonly #pathProbe: PathProbe;
	#mode: ConnectionMode;
	#view: View;
	#pill: string | undefined;
	#lastWarning: string | undefined;
	#watcher: StateDirWatcher | undefined;
	/**
	 * State objects judged to be a gone editor's leftover (pid dead, or reused by a later process), with the
	 * diagnostic to repeat while the file stays (null: none). An unchanged file keeps its parsed state object,
	 * so its pid is not probed again (a throwing kill() costs ~10 µs; 1,000 leftovers would cost 10 ms a
	 * prompt); a new editor reusing the pid rewrites the file, which makes a new state object.
	 */
	readonly #leftovers = new WeakMap<EditorState, ScanDiagnostic | null>();
	readonly #tiers = new WeakMap<EditorState, Tier | null>();
	/** Tiers depend on the state and the file system; a state object is re-scored when its file changes. */
	readonly #scoreMemo = (state: EditorState, piCwd: string, probe: PathProbe): Tier | null => {
		const known = this.#tiers.get(state);
		if (known !== undefined) return known;
		const tier = scoreEditor(state, piCwd, probe);
		this.#tiers.set(state, tier);
		return tier;
	};
	/** The window picked in `/ide`, per editor pid, for editors that list several windows. */
	readonly #windowPicks = new Map<number, string>();
	/** A state seen through its window for pi's project, per state object (so the tier memo above keeps working). */
	readonly #focused = new WeakMap<EditorState, { prefer: string | undefined; record: EditorRecord }>();
	#stopped = false;
	readonly #rules: IgnoreRulesLoader;
	/** The ignore verdict for a state's file under the rules compiled last (a new state or new rules: judged anew). */
	readonly #ignoreVerdicts = new WeakMap<EditorState, { rules: CompiledRules; skip: Injection | null }>();
	/** Whether a state's active file is a host path pi cannot open (#hiddenFromPi), per state object. */
	readonly #hidden = new WeakMap<EditorState, boolean>();
	#choices: ChoicesFile = EMPTY_CHOICES;
	/** The choices file as last loaded: another session (a TUI pi next to an ACP one) may change it. */
	#choicesSignature: string | null | undefined;
	#projectKey: string | undefined;
	/** Why the remembered choices file was (partly) not used: shown in `/ide status` with the skipped files. */
	#choicesProblems: ScanDiagnostic[] = [];
	/** pi's cwd through its symlinks, resolved once: it does not move during a session. */
	#realPiCwd: string | undefined;
	/** Called after every refresh that changed the pill (benchmarks measure write → pill latency with it). */
	onPill: ((pill: string) => void) | undefined;
	/** Called with the base name of every file the state dir's watcher reports changed (v0.5 send files). */
	onFileChanged: ((name: string) => void) | undefined;
	/** Called after each rescan that checks every file (the watcher going live, or not trusted): events may be lost. */
	onVerify: (() => void) | undefined;

	constructor(options: ControllerOptions) {
		this.#options = options;
		this.#scanner = new StateDirScanner(options.stateDir, options.uid, { paths: options.paths ?? [] });
		this.#nowMs = options.nowMs ?? Date.now;
		this.#probePid = options.probePid ?? probePid;
		this.#pidNamespace = options.pidNamespace !== undefined ? options.pidNamespace : readOwnPidNamespace();
		this.#pathProbe = options.pathProbe ?? nodePathProbe();
		this.#rules = new IgnoreRulesLoader(options);
		this.#mode = options.settings.autoConnect ? { kind: "auto" } : { kind: "off" };
		this.#view = {
			health: { ok: false, dir: options.stateDir, problem: "missing", missing: true, reason: "not scanned yet" },
			editors: [],
			diagnostics: [],
			connection: { connected: false, mode: this.#mode, why: "no editor", candidates: [] },
			host: null,
			envPid: "unset",
			remembered: { kind: "none" },
		};
	}

	get view(): View {
		return this.#view;
	}

	get mode(): ConnectionMode {
		return this.#mode;
	}

	/**
	 * Create the state dir if missing, scan once, then watch it. The returned promise
	 * settles (never rejects) once the watcher is live; pi does not need to wait for it.
	 */
	start(): Promise<void> {
		createStateDir(this.#options.stateDir, this.#options.uid);
		this.refresh();
		if (!this.#view.health.ok || this.#stopped) return Promise.resolve();
		this.#watcher = new StateDirWatcher(this.#options.stateDir, {
			changed: (name) => {
				this.#scanner.markChanged(name);
				this.onFileChanged?.(name);
			},
			rescan: (mode) => {
				this.refresh(mode);
				this.#judgeAhead();
				if (mode === "verify") this.onVerify?.();
			},
			tick: () => this.#checkConnectedAlive(),
			warn: (message) => this.#warnOnce(message),
		});
		return this.#watcher.start();
	}

	/** Close the watcher and timers. Idempotent. */
	async stop(): Promise<void> {
		this.#stopped = true;
		const watcher = this.#watcher;
		this.#watcher = undefined;
		this.#options.startClock?.close?.();
		await watcher?.stop();
	}

	/**
	 * Rescan, re-decide the connection, update the pill. Never throws. "verify" checks
	 * every file; "changed" (watcher-triggered, while the watcher is live) only those
	 * the watcher named. Prompts always verify: an event may still be queued.
	 */
	refresh(mode: ScanMode = "verify"): View {
		try {
			this.#loadChoices();
			const scan = this.#scanner.scan(mode);
			const diagnostics = [...scan.diagnostics, ...this.#choicesProblems];
			const live: EditorRecord[] = [];
			const startedAt = new Map<number, number | null>();
			const clock = this.#options.startClock;
			for (const record of scan.editors) {
				const leftover = this.#leftovers.get(record.state);
				if (leftover !== undefined) {
					if (leftover) diagnostics.push(leftover);
					continue;
				}
				if (!this.#judgesPid(record.state)) {
					// Another pid namespace's editor (pi in a sandbox, or the editor in a container): its pid names
					// another process here, or none, so nothing here proves it gone. Listed as running; its file stays.
					diagnostics.push({
						path: record.path,
						message: `pid ${record.pid} is in another pid namespace (${record.state.pid_ns ?? "the host's"}; pi is in ${this.#pidNamespace ?? "an unknown one"}): pi cannot check from here whether it runs, so it counts as running and its file stays`,
					});
					live.push(this.#focusWindow(record));
					continue;
				}
				// A process the start clock already follows and that still runs needs no kill(pid, 0) as well.
				const known = clock?.known?.(record.pid);
				const liveness = known !== undefined ? "alive" : this.#probePid(record.pid);
				if (liveness === "dead") {
					// A killed editor's leftover: not worth a diagnostic.
					this.#dropLeftover(record, null, diagnostics);
				} else if (liveness === "alive") {
					const started = known !== undefined ? known : clock ? clock.startedAt(record.pid) : null;
					if (isPidReused(started, record.writtenAt)) {
						// The pid is another process's now: the editor that wrote the file was killed.
						this.#dropLeftover(
							record,
							`pid ${record.pid} now belongs to a process started after this file was last written (the editor exited and its pid was reused)`,
							diagnostics,
						);
						continue;
					}
					startedAt.set(record.pid, started);
					live.push(this.#focusWindow(record));
				} else if (liveness === "foreign") {
					diagnostics.push({ path: record.path, message: `pid ${record.pid} belongs to another user: ignored` });
				} else {
					// Only ESRCH proves the editor gone: not listed, and its file stays.
					diagnostics.push({
						path: record.path,
						message: `cannot tell whether pid ${record.pid} runs, kill(pid, 0) failed with ${liveness.unknown}: ignored`,
					});
				}
			}

			const livePis = this.#dropGonePiFiles(scan.piFiles);

			const ranked = rankEditors(
				live.map((record) => ({ record, state: record.state })),
				this.#options.piCwd,
				this.#pathProbe,
				this.#scoreMemo,
			);
			const editors = ranked.map((r) => ({ record: r.item.record, tier: r.tier }));
			const best = bestTier(ranked).map((r) => r.item.record.pid);
			const livePids = editors.map((e) => e.record.pid);
			// Only pids of pi's own namespace can be pi's ancestors or be followed by their start time.
			const judgedPids = editors.filter((e) => this.#judgesPid(e.record.state)).map((e) => e.record.pid);
			// Other pis' start times stay held too: their files are checked with every scan.
			clock?.retain?.(new Set([...judgedPids, ...livePis]));
			const { host, envPid } = this.#options.hostHints
				? findHostEditor(this.#options.hostHints, {
						live: new Set(judgedPids),
						inProject: new Set(editors.filter((e) => e.tier !== null).map((e) => e.record.pid)),
					})
				: { host: null, envPid: "unset" as const };
			const remembered = resolveRemembered(
				this.#choices.projects[this.#project()],
				editors.map((e) => ({
					pid: e.record.pid,
					startedAt: startedAt.get(e.record.pid) ?? null,
					fingerprint: fingerprintOf(e.record.state),
				})),
			);
			const connection = decideConnection({
				mode: this.#mode,
				livePids,
				projectPids: editors.filter((e) => e.tier !== null).map((e) => e.record.pid),
				bestTierPids: best,
				hostPid: host?.pid ?? null,
				remembered: remembered.kind === "off" || remembered.kind === "pick" ? remembered : { kind: "none" },
			});
			this.#mode = connection.mode;
			this.#view = { health: scan.health, editors, diagnostics, connection, host, envPid, remembered };
			this.#warnAboutHealth(scan.health);
			this.#updatePill();
		} catch (error) {
			this.#warnOnce(`pi-ide-context: refresh failed: ${String(error)}`);
		}
		return this.#view;
	}

	/** The connected editor's record, if any. */
	connectedEditor(): EditorView | undefined {
		const connection = this.#view.connection;
		if (!connection.connected) return undefined;
		return this.#view.editors.find((e) => e.record.pid === connection.pid);
	}

	/**
	 * What to inject for a user prompt right now. Rescans first (a verifying scan: every file is looked at, and
	 * read again when it changed), so the block reflects the latest write.
	 */
	prepareInjection(): Injection {
		try {
			this.refresh();
			const view = this.#view;
			if (!view.health.ok)
				return { kind: "skip", reason: `state dir ${view.health.dir} ${view.health.reason}`, stale: "unreadable" };
			const connection = view.connection;
			if (!connection.connected)
				return { kind: "skip", reason: describeDisconnected(connection), stale: DISCONNECTED_STALE[connection.why] };
			// The verifying scan above has just looked at every file (re-reading any that changed): no second read.
			const editor = this.connectedEditor()?.record;
			if (!editor) return { kind: "skip", reason: "the connected editor's state file is gone", stale: "gone" };
			const state = editor.state;
			if (state.database) {
				const block = formatContextBlock(state, null, this.#blockOptions());
				return block
					? { kind: "inject", block, editor }
					: { kind: "skip", reason: "empty database view", stale: "no-file" };
			}
			const file = resolveEditorFile(state.active_buffer.file, state.cwd);
			if (file === null)
				return { kind: "skip", reason: "the active buffer has no file (unnamed buffer)", stale: "no-file" };
			const rules = this.#rules.load();
			if (!rules.ok) {
				this.#options.ui?.notify(
					`pi-ide-context: ${rules.message}; no editor context sent with this prompt`,
					"warning",
				);
				return { kind: "skip", reason: rules.message, stale: "unreadable" };
			}
			const skip = this.#ignoreSkip(state, file, rules);
			if (skip) return skip;
			if (this.#hiddenFromPi(state, file))
				return {
					kind: "skip",
					reason: `${file} is not visible to pi: outside the directories mapped into its sandbox (ideContext.paths)`,
					stale: "no-file",
				};
			const block = formatContextBlock(state, file, this.#blockOptions());
			if (!block) return { kind: "skip", reason: "nothing to describe", stale: "no-file" };
			return { kind: "inject", block: appendPromptDiagnostics(block, state), editor };
		} catch (error) {
			return { kind: "skip", reason: `internal error: ${String(error)}`, stale: "unreadable" };
		}
	}

	/**
	 * Whether the ignore rules keep `file` (absolute, one pi's tools wrote) from the model: the one rule for
	 * everything pi says about a file beyond the prompt's block (tool-result notes, revert notes). Outside pi's
	 * cwd the global rules apply relative to the connected editor's cwd, as for its active buffer. Unreadable
	 * rules count as excluding (nothing is said rather than something the user excluded).
	 */
	excludes(file: string): boolean {
		try {
			const rules = this.#rules.load();
			if (!rules.ok) return true;
			const editorCwd = this.connectedEditor()?.record.state.cwd ?? this.#options.piCwd;
			return this.#checkIgnored(rules.rules, file, editorCwd).ignored;
		} catch {
			return true;
		}
	}

	/**
	 * Connect to an editor chosen by the user; it sticks until it dies or the user disconnects, and is
	 * remembered for this project (it applies again while that editor runs, or to a restarted one that
	 * looks the same).
	 */
	pick(pid: number, window?: string): void {
		this.#mode = { kind: "picked", pid };
		if (window === undefined) this.#windowPicks.delete(pid);
		else this.#windowPicks.set(pid, window);
		const editor = this.#view.editors.find((e) => e.record.pid === pid);
		if (editor) {
			this.#remember({
				kind: "pick",
				pid,
				startedAt: this.#options.startClock?.startedAt(pid) ?? null,
				editor: fingerprintOf(editor.record.state),
				at: this.#nowMs() / 1000,
			});
		}
		this.refresh();
	}

	/** `record` seen through the window for pi's project (or the one picked), memoised per state object. */
	#focusWindow(record: EditorRecord): EditorRecord {
		if (!record.state.windows) return record;
		const prefer = this.#windowPicks.get(record.pid);
		const known = this.#focused.get(record.state);
		if (known && known.prefer === prefer) return known.record;
		const state = focusWindow(record.state, this.#options.piCwd, this.#pathProbe, prefer, this.#scoreMemo);
		const focused = state === record.state ? record : { ...record, state };
		this.#focused.set(record.state, { prefer, record: focused });
		return focused;
	}

	/** Stop auto-connecting (and drop the current connection), remembered for this project until resumeAuto(). */
	disconnect(): void {
		this.#mode = { kind: "off" };
		this.#remember({ kind: "off", at: this.#nowMs() / 1000 });
		this.refresh();
	}

	/**
	 * Resume automatic connection, and forget this project's remembered choice. A live connection stays, as an
	 * automatic one does (sticky): with two editors open, dropping the one a remembered pick connected would
	 * leave auto-connect with no single candidate, and the user with nothing.
	 */
	resumeAuto(): void {
		const connection = this.refresh().connection;
		this.#mode = connection.connected ? { kind: "auto", sticky: connection.pid } : { kind: "auto" };
		this.#remember(null);
		this.refresh();
	}

	/** Where remembered choices are stored (null: not remembered). */
	get choicesPath(): string | null {
		return this.#options.choiceStore?.path ?? null;
	}

	/** The project key remembered choices are filed under: pi's cwd through its symlinks. */
	#project(): string {
		this.#projectKey ??= resolveReal(this.#options.piCwd, this.#pathProbe);
		return this.#projectKey;
	}

	/** Load the remembered choices when the file changed since the last load (one lstat otherwise). */
	#loadChoices(): void {
		const store = this.#options.choiceStore;
		if (!store) return;
		const signature = store.signature();
		if (signature === this.#choicesSignature) return;
		this.#choicesSignature = signature;
		const loaded = store.load();
		this.#choices = loaded.choices;
		this.#choicesProblems = loaded.problems.map((message) => ({ path: "remembered /ide choices", message }));
		for (const problem of loaded.problems) this.#warnOnce(`pi-ide-context: remembered choices: ${problem}`);
	}

	#remember(choice: RememberedChoice | null): void {
		const store = this.#options.choiceStore;
		if (!store) return;
		const project = this.#project();
		const projects = { ...this.#choices.projects };
		delete projects[project];
		if (choice) projects[project] = choice;
		this.#choices = { ...this.#choices, projects };
		const problem = store.remember(project, choice);
		if (problem) this.#warnOnce(`pi-ide-context: ${problem}`);
		// Our own write: already applied above (and the re-read file may hold other projects' news).
		this.#choicesSignature = undefined;
	}

	/**
	 * Rows for `/ide` (ui/picker.ts), from a fresh scan: one per editor, one per project window of an editor that
	 * lists several, and a disconnect row when connected.
	 */
	pickerChoices(maxWidth: number): { rows: string[]; actions: PickerAction[] } {
		const view = this.refresh();
		return formatPickerChoices(
			view.editors.map((e) => ({ state: e.record.state, tier: e.tier })),
			view.connection.connected ? view.connection.pid : null,
			{ now: this.#nowMs() / 1000, home: this.#options.home, maxWidth },
		);
	}

	/**
	 * The `/ide status` report: dir health, editors and tiers, connection, and what would be injected now.
	 * `next`: the injection prepared now and what the next message sends for it given what the model already has
	 * (context/model-view.ts `nextMessage`); without it, the injection is prepared here and shown as it is.
	 */
	statusReport(
		next?: { injection: Injection; decision: { why: string; text: string } },
		session: Pick<StatusFacts, "changes" | "approval"> = {},
	): string {
		const injection = next?.injection ?? this.prepareInjection();
		const view = this.#view;
		const decided = injection.kind === "inject" ? next?.decision : undefined;
		// Nothing to describe, but the model may be told its editor context is out of date: say so, not "nothing".
		const notice = injection.kind === "skip" ? next?.decision : undefined;
		return formatStatusReport({
			...session,
			now: this.#nowMs() / 1000,
			health: view.health,
			mode: this.#mode,
			editors: view.editors.map((e) => ({ state: e.record.state, tier: e.tier, warnings: e.record.warnings })),
			diagnostics: view.diagnostics,
			connection: view.connection,
			host: view.host,
			envPid: this.#options.hostHints?.envPid ?? null,
			envPidVerdict: view.envPid,
			remembered: view.remembered,
			choicesPath: this.choicesPath,
			paths: this.#options.paths ?? [],
			next:
				injection.kind === "skip"
					? notice?.text
						? { kind: "inject", text: notice.text, selection: null, why: `${notice.why}; ${injection.reason}` }
						: injection
					: {
							kind: "inject",
							text: decided ? decided.text : injection.block.text,
							selection: injection.editor.state.active_buffer.selection,
							...(decided ? { why: decided.why } : {}),
						},
		});
	}

	#blockOptions() {
		return {
			now: this.#nowMs() / 1000,
			maxSelectionLines: this.#options.settings.maxSelectionLines,
			maxSelectionBytes: this.#options.settings.maxSelectionBytes,
		};
	}

	/**
	 * The skip for a file the ignore rules exclude (null: not excluded), judged once per state object and rules:
	 * the real paths it needs cost more than the rest of a prompt, and neither changes without a new state or new
	 * rules (the tiers are memoised on the same terms).
	 */
	#ignoreSkip(state: EditorState, file: string, rules: CompiledRules): Injection | null {
		const known = this.#ignoreVerdicts.get(state);
		if (known?.rules === rules) return known.skip;
		let skip: Injection | null = null;
		const verdict = this.#checkIgnored(rules.rules, file, state.cwd);
		if (verdict.ignored) {
			const reason = `${file} is ignored by ${verdict.rulesFile} (${verdict.pattern})`;
			// Say so when only the project's trust stands between the file and its re-inclusion.
			const untrusted = rules.ifTrusted && !this.#checkIgnored(rules.ifTrusted, file, state.cwd).ignored;
			skip = {
				kind: "skip",
				reason: untrusted
					? `${reason}; the project's negation re-includes it only in a project you trust (/trust, or pi --approve)`
					: reason,
				stale: "ignored",
			};
		}
		this.#ignoreVerdicts.set(state, { rules, skip });
		return skip;
	}

	/**
	 * pi in a sandbox or a container (some path mapping is in use): a file no mapping covers whose directory pi
	 * cannot see is a host path pi's tools cannot open, never shown to the model. Judged once per state object.
	 */
	#hiddenFromPi(state: EditorState, file: string): boolean {
		const paths = this.#options.paths ?? [];
		if (paths.length === 0) return false;
		const known = this.#hidden.get(state);
		if (known !== undefined) return known;
		const hidden = !isMapped(file, paths, "pi") && !this.#pathProbe.isDirectory(dirname(file));
		this.#hidden.set(state, hidden);
		return hidden;
	}

	/**
	 * After a watcher's rescan, while pi waits for the user: the connected editor's active file judged against the
	 * ignore rules as they are now (#ignoreSkip), so the prompt that follows finds the verdict for that state
	 * object and those rules memoised instead of paying for the real paths then. New rules by the prompt: judged
	 * anew there. Whether it is a host path pi cannot see (#hiddenFromPi) is judged ahead too. Quiet: the prompt
	 * reports unreadable rules.
	 */
	#judgeAhead(): void {
		try {
			const state = this.connectedEditor()?.record.state;
			if (!state || state.database || this.#ignoreVerdicts.has(state)) return;
			const file = resolveEditorFile(state.active_buffer.file, state.cwd);
			if (file === null) return;
			const rules = this.#rules.load();
			if (rules.ok) this.#ignoreSkip(state, file, rules);
			this.#hiddenFromPi(state, file);
		} catch {
			// The prompt judges it (and says what went wrong).
		}
	}

	/**
	 * Rules match paths as written, so check both the path as reported and its real
	 * path (pi's cwd reached through a symlink, a file symlinked into the project):
	 * excluded under either name means excluded.
	 */
	#checkIgnored(rules: IgnoreRules, file: string, editorCwd: string): IgnoreVerdict {
		const probe = this.#pathProbe;
		const lexical = checkIgnored(rules, file, { piCwd: this.#options.piCwd, editorCwd });
		if (lexical.ignored) return lexical;
		this.#realPiCwd ??= resolveReal(this.#options.piCwd, probe);
		return checkIgnored(rules, resolveReal(file, probe), {
			piCwd: this.#realPiCwd,
			editorCwd: isAbsolute(editorCwd) ? resolveReal(editorCwd, probe) : editorCwd,
		});
	}

	#updatePill(): void {
		const editor = this.connectedEditor();
		const state = editor?.record.state;
		const pill = formatPill(
			state
				? {
						app: state.app,
						product: state.product,
						language: state.database ? "sql" : state.active_buffer.language,
						file: state.database ? state.database.table : state.active_buffer.file,
					}
				: null,
			{ plain: this.#options.settings.glyphs === "plain" },
		);
		if (pill === this.#pill) return;
		this.#pill = pill;
		this.#options.ui?.setStatus(pill);
		this.onPill?.(pill);
	}

	#checkConnectedAlive(): void {
		const editor = this.connectedEditor();
		if (!editor || !this.#judgesPid(editor.record.state)) return;
		const pid = editor.record.pid;
		const started = this.#options.startClock?.startedAt(pid) ?? null;
		if (this.#probePid(pid) !== "alive" || isPidReused(started, editor.record.writtenAt)) this.refresh();
	}

	#warnAboutHealth(health: DirHealth): void {
		if (health.ok || health.missing) return;
		this.#warnOnce(
			`pi-ide-context: not reading ${health.dir}: it ${health.reason}${health.remedy ? `. Fix: ${health.remedy}` : ""}`,
		);
	}

	/**
	 * A gone editor's file: remove it (only that very file, see StateDirScanner.removeLeftover) and remember the
	 * verdict for its state object. `why` (null: say nothing) is repeated while the file stays.
	 */
	#dropLeftover(record: EditorRecord, why: string | null, diagnostics: ScanDiagnostic[]): void {
		const removed = this.#scanner.removeLeftover(record);
		const diagnostic =
			why === null ? null : { path: record.path, message: `${why}: ${removed ? "removed" : "ignored"}` };
		this.#leftovers.set(record.state, diagnostic);
		if (diagnostic) diagnostics.push(diagnostic);
	}

	/** May this pi judge the pid of `state`'s editor (its own pid namespace: src/protocol/liveness.ts)? */
	#judgesPid(state: EditorState): boolean {
		return judgesPids(state.pid_ns, this.#pidNamespace);
	}

	/**
	 * A gone pi's files (`pi-<pid>.json`, its change set with baselines, an approval request): removed by the rule
	 * of a gone editor's file: its pid dead (ESRCH) or reused by a process started after the file was last
	 * written, and only the very file listed (StateDirScanner.removeLeftover). A live pi's (this one's too), a
	 * foreign or an unknown pid's: left alone. Quietly: a killed pi's leftovers are not news. Returns the pids of
	 * the pis that run (their start times stay held).
	 */
	#dropGonePiFiles(piFiles: readonly PiFileRecord[]): Set<number> {
		const clock = this.#options.startClock;
		const live = new Set<number>();
		const verdicts = new Map<number, Liveness>();
		for (const file of piFiles) {
			// v0.5: a file named for another namespace (`pi-<pid>-<ns>.json`) is a pi pi cannot judge from here: not
			// probed, never removed (its pid names another process, or none, in pi's namespace).
			if (file.nameNs !== null && !judgesPids(file.nameNs, this.#pidNamespace)) continue;
			let liveness = verdicts.get(file.pid);
			if (liveness === undefined) {
				liveness = this.#probePid(file.pid);
				verdicts.set(file.pid, liveness);
			}
			const reused = liveness === "alive" && isPidReused(clock ? clock.startedAt(file.pid) : null, file.writtenAt);
			if (liveness === "dead" || reused) {
				// Only a pi of pi's own pid namespace can be proved gone by its pid (a sandboxed pi's is not ours).
				// A name with a namespace must agree with the file's `pid_ns` (PROTOCOL.md); one that does not is left.
				const namespace = this.#scanner.piFileNamespace(file);
				const agrees = file.nameNs === null || namespace === file.nameNs;
				if (namespace !== null && agrees && judgesPids(namespace, this.#pidNamespace)) {
					this.#scanner.removeLeftover(file);
				}
			} else if (liveness === "alive") live.add(file.pid);
		}
		return live;
	}

	/** Say a warning unless it is the one said last: a rescan loop must not repeat it. */
	#warnOnce(message: string): void {
		if (this.#lastWarning === message) return;
		this.#lastWarning = message;
		this.#options.ui?.notify(message, "warning");
	}
}
