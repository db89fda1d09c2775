/**
 * The ignore-rules files pi reads: `<agent-dir>/ide-context.ignore` and the project's
 * `<cwd>/.pi/ide-context.local.ignore`, each stat'ed every prompt and read only when it changed, compiled again
 * only when a file or the project's trust changed (ignore-rules.ts holds the rules themselves). A small I/O
 * adapter: stat'ed, not lstat'ed, as a rules file may be a link into the user's dotfiles.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { type FileVersion, isUnchanged, versionOf } from "../protocol/file-version.ts";
import { compileIgnoreRules, type IgnoreRules, type RulesFile } from "./ignore-rules.ts";

export const GLOBAL_RULES_FILE = "ide-context.ignore";
export const PROJECT_RULES_FILE = "ide-context.local.ignore";

/** The rules for a prompt; `ifTrusted`: the same files with the project's negations kept (see IgnoreRulesLoader.load). */
export type CompiledRules = { ok: true; rules: IgnoreRules; ifTrusted?: IgnoreRules };

export interface RulesLoaderOptions {
	agentDir: string;
	piCwd: string;
	/** pi's project config dir name (`.pi`). */
	configDirName: string;
	isProjectTrusted: () => boolean;
}

export class IgnoreRulesLoader {
	readonly #options: RulesLoaderOptions;
	readonly #files = new RulesFileReader();
	/** The ignore rules last compiled, by the files' texts and the project's trust. */
	#compiled:
		| { global: RulesFile | null; project: RulesFile | null; trusted: boolean; result: CompiledRules }
		| undefined;

	constructor(options: RulesLoaderOptions) {
		this.#options = options;
	}

	/**
	 * The ignore rules for this prompt; `ifTrusted`: the same files with the project's negations kept, when the
	 * project is not trusted and its file exists (to tell the user why a negation did not apply).
	 */
	load(): CompiledRules | { ok: false; message: string } {
		const globalPath = join(this.#options.agentDir, GLOBAL_RULES_FILE);
		const projectPath = join(this.#options.piCwd, this.#options.configDirName, PROJECT_RULES_FILE);
		const global = this.#files.read(globalPath);
		if (!global.ok) return global;
		const project = this.#files.read(projectPath);
		if (!project.ok) return project;
		// Trust is asked only when there are project rules to judge (it reads pi's trust store).
		const trusted = project.file !== null && this.#options.isProjectTrusted();
		// The files are looked at every prompt (a read only when changed, the same object otherwise); compiling them
		// again is only needed when they or the trust changed.
		const known = this.#compiled;
		if (known && known.global === global.file && known.project === project.file && known.trusted === trusted)
			return known.result;
		const rules = compileIgnoreRules(global.file, project.file, { projectTrusted: trusted });
		const result: CompiledRules =
			trusted || project.file === null
				? { ok: true, rules }
				: { ok: true, rules, ifTrusted: compileIgnoreRules(global.file, project.file, { projectTrusted: true }) };
		this.#compiled = { global: global.file, project: project.file, trusted, result };
		return result;
	}
}

/**
 * An ignore-rules file as it is now: one stat per prompt, a read only when it changed (file-version.ts). It is
 * stat'ed, not lstat'ed: a rules file may be a link into the user's dotfiles, and its target is what counts.
 */
class RulesFileReader {
	readonly #known = new Map<string, { version: FileVersion; file: RulesFile | null }>();

	read(path: string): { ok: true; file: RulesFile | null } | { ok: false; message: string } {
		try {
			const readStartedMs = Date.now();
			const stats = statSync(path, { throwIfNoEntry: false });
			if (!stats) {
				this.#known.delete(path);
				return { ok: true, file: null };
			}
			const known = this.#known.get(path);
			if (known && isUnchanged(known.version, stats)) return { ok: true, file: known.file };
			const text = readFileSync(path, "utf8");
			// Read again only to settle it, and found as before: the same object, so the rules are not compiled anew.
			const file = known?.file?.text === text ? known.file : { path, text };
			this.#known.set(path, { version: versionOf(stats, readStartedMs), file });
			return { ok: true, file };
		} catch (error) {
			this.#known.delete(path);
			const code = (error as NodeJS.ErrnoException).code;
			if (code === "ENOENT" || code === "ENOTDIR") return { ok: true, file: null };
			return { ok: false, message: `cannot read ignore rules ${path}: ${code ?? String(error)}` };
		}
	}
}
