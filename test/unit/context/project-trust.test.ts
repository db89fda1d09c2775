import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
	type DefaultProjectTrust,
	isTrustedByUser,
	type TrustFacts,
	trustOverrideFromArgv,
} from "../../../src/context/project-trust.ts";

/** A fresh clone: `.pi/` holds only the rules file, nothing saved, no flag, pi's default "ask". */
const CLONE: TrustFacts = { piTrusts: true, piDecided: false, override: undefined, saved: null, defaultTrust: "ask" };

describe("isTrustedByUser: named cases", () => {
	const cases: { name: string; facts: Partial<TrustFacts>; trusted: boolean }[] = [
		{ name: "a fresh clone pi trusts only because nothing needed trust", facts: {}, trusted: false },
		{ name: "--approve", facts: { override: true }, trusted: true },
		{ name: "a saved decision for the project or a parent", facts: { saved: true }, trusted: true },
		{ name: 'defaultProjectTrust: "always"', facts: { defaultTrust: "always" }, trusted: true },
		{ name: 'defaultProjectTrust: "never"', facts: { defaultTrust: "never" }, trusted: false },
		{ name: "--no-approve", facts: { piTrusts: false, override: false }, trusted: false },
		{ name: 'a saved "Do not trust"', facts: { piTrusts: false, saved: false }, trusted: false },
		{ name: "pi resolved trust (settings in .pi/) and trusts", facts: { piDecided: true }, trusted: true },
		{
			name: "pi resolved trust and declined, whatever the default says",
			facts: { piDecided: true, piTrusts: false, defaultTrust: "always" },
			trusted: false,
		},
		{
			name: "pi no longer trusts (a later runtime), a saved yes does not override it",
			facts: { piTrusts: false, saved: true },
			trusted: false,
		},
	];
	for (const { name, facts, trusted } of cases) {
		it(name, () => assert.equal(isTrustedByUser({ ...CLONE, ...facts }), trusted));
	}
});

/**
 * Every combination pi can produce, against an oracle written from pi's documented flow (docs/security.md of
 * pi): with trust-requiring resources, pi's answer stands; without them, trust is what pi would have decided
 * had the project needed it, in a run that cannot ask (flag, then saved decision, then the default).
 */
describe("isTrustedByUser: every consistent combination against pi's documented flow", () => {
	const wouldDecide = (override: boolean | undefined, saved: boolean | null, defaultTrust: DefaultProjectTrust) =>
		override ?? saved ?? defaultTrust === "always";
	for (const piDecided of [false, true])
		for (const override of [undefined, true, false])
			for (const saved of [null, true, false])
				for (const defaultTrust of ["ask", "always", "never"] as const) {
					// Without resources needing trust pi sets trust to flag ?? saved ?? true (pi's main.js); with them any
					// answer is possible (an extension or the prompt may decide), so both are checked.
					const piAnswers = piDecided ? [true, false] : [override ?? saved ?? true];
					for (const piTrusts of piAnswers) {
						const facts = { piTrusts, piDecided, override, saved, defaultTrust };
						const expected = piDecided ? piTrusts : wouldDecide(override, saved, defaultTrust);
						it(JSON.stringify(facts), () => assert.equal(isTrustedByUser(facts), expected));
					}
				}
});

describe("trustOverrideFromArgv: pi's flags, the last one wins", () => {
	const cases: [string[], boolean | undefined][] = [
		[[], undefined],
		[["-p", "hello"], undefined],
		[["--approve"], true],
		[["-a", "-p", "x"], true],
		[["--no-approve"], false],
		[["-na"], false],
		[["--approve", "--no-approve"], false],
		[["-na", "-a"], true],
		[["--approved", "approve", "-ap"], undefined],
	];
	for (const [args, expected] of cases) {
		it(JSON.stringify(args), () => assert.equal(trustOverrideFromArgv(args), expected));
	}
});
