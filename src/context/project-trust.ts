/**
 * Has the user actually trusted this project? The rule that lets a project's
 * `.pi/ide-context.local.ignore` negate (`!pattern`) the user's global exclusions.
 *
 * pi's own answer (`ctx.isProjectTrusted()`) is not enough: pi resolves trust only when
 * `.pi/` holds something that needs it (settings, extensions, skills, ...), and counts
 * every other project as trusted. A fresh clone whose `.pi/` holds only the rules file
 * would then re-include the user's `.env`. So when pi had nothing to decide, trust
 * here needs a decision of the user's own, the ones pi itself honours
 * (node_modules/@earendil-works/pi-coding-agent/docs/security.md, "How Pi chooses a
 * trust decision"): `--approve` on the command line, a saved decision for the
 * project or a parent in `<agent-dir>/trust.json` (`/trust`, or an answer to pi's
 * prompt), or the global `defaultProjectTrust: "always"`.
 *
 * Pure: src/pi-api/trust.ts gathers the facts from pi.
 */

export type DefaultProjectTrust = "ask" | "always" | "never";

export interface TrustFacts {
	/** pi's answer for this session (`ctx.isProjectTrusted()`). */
	piTrusts: boolean;
	/**
	 * pi had a decision to make: the project holds resources that need trust
	 * (`hasTrustRequiringProjectResources`), so `piTrusts` is the outcome of pi's real
	 * flow (flag, extension, saved decision, default, or the user's answer).
	 */
	piDecided: boolean;
	/** `--approve` (true) or `--no-approve` (false) on pi's command line; undefined: neither. */
	override: boolean | undefined;
	/** The saved decision nearest the project in `<agent-dir>/trust.json`; null: none, or unreadable. */
	saved: boolean | null;
	/** The global `defaultProjectTrust` setting. */
	defaultTrust: DefaultProjectTrust;
}

/** Whether the user has trusted the project (see the module comment). */
export function isTrustedByUser(facts: TrustFacts): boolean {
	// pi's "no" always stands: `--no-approve`, a saved "Do not trust", a declined prompt.
	if (!facts.piTrusts) return false;
	if (facts.piDecided) return true;
	// pi trusted the project only because nothing in it needed trust: only the user's own decision counts.
	return facts.override === true || facts.saved === true || facts.defaultTrust === "always";
}

/**
 * pi's trust override from its command line, as pi's argument parser reads it: the last of
 * `--approve`/`-a` and `--no-approve`/`-na` wins.
 */
export function trustOverrideFromArgv(args: readonly string[]): boolean | undefined {
	let override: boolean | undefined;
	for (const arg of args) {
		if (arg === "--approve" || arg === "-a") override = true;
		else if (arg === "--no-approve" || arg === "-na") override = false;
	}
	return override;
}
