/**
 * The I/O half of src/context/project-trust.ts: gathers what pi knows about the user's trust in a project,
 * through pi's own API (its trust-requiring resources check, its trust store, its global settings), for the
 * rule there to decide whether the project's ignore-rule negations apply.
 */

import { lstatSync } from "node:fs";
import { join } from "node:path";
import { hasTrustRequiringProjectResources, ProjectTrustStore, SettingsManager } from "@earendil-works/pi-coding-agent";
import { type DefaultProjectTrust, isTrustedByUser, trustOverrideFromArgv } from "../context/project-trust.ts";
import { readKey } from "../protocol/file-version.ts";

export interface TrustSources {
	/** pi's cwd: the project. */
	cwd: string;
	/** pi's agent dir (`trust.json`, `settings.json`). */
	agentDir: string;
	/** pi's answer for the session (`ctx.isProjectTrusted()`). */
	piTrusts: () => boolean;
	/** pi's command-line arguments (`--approve`, `--no-approve`). */
	argv: readonly string[];
}

/**
 * A check of the user's trust in the project, asked per prompt: a decision saved with `/trust` counts from the
 * next prompt on. Call it when the session starts: whether pi had a trust decision to make is read then, as pi
 * saw the project when it resolved trust for the session (just before session_start).
 */
export function userTrustCheck(sources: TrustSources): () => boolean {
	const piDecided = hasTrustRequiringProjectResources(sources.cwd);
	const override = trustOverrideFromArgv(sources.argv);
	const saved = savedTrustReader(sources.agentDir);
	return () =>
		isTrustedByUser({
			piTrusts: sources.piTrusts(),
			piDecided,
			override,
			saved: saved(sources.cwd),
			defaultTrust: defaultTrust(sources.cwd, sources.agentDir),
		});
}

/** The global `defaultProjectTrust`, as pi reads it (a project's settings cannot vouch for the project). */
function defaultTrust(cwd: string, agentDir: string): DefaultProjectTrust {
	try {
		return SettingsManager.create(cwd, agentDir, { projectTrusted: false }).getDefaultProjectTrust();
	} catch {
		// Unreadable settings: pi's default.
		return "ask";
	}
}

/**
 * The saved trust decision nearest a directory, through pi's ProjectTrustStore (`<agent-dir>/trust.json`),
 * read again only when that file changed: a store read takes a lock file (about 5 ms), and this is asked with
 * every prompt of a project that has a rules file.
 */
export function savedTrustReader(agentDir: string): (cwd: string) => boolean | null {
	const trustFile = join(agentDir, "trust.json");
	let known: { signature: string; cwd: string; decision: boolean | null } | undefined;
	return (cwd) => {
		let signature = "absent";
		try {
			signature = readKey(lstatSync(trustFile));
		} catch {
			// Missing (no decision saved yet) or unreadable: the store says which.
		}
		if (known?.signature === signature && known.cwd === cwd) return known.decision;
		try {
			const decision = new ProjectTrustStore(agentDir).get(cwd);
			known = { signature, cwd, decision };
			return decision;
		} catch {
			// A damaged or locked trust.json is no decision (pi reports it itself); asked again next time.
			return null;
		}
	};
}
