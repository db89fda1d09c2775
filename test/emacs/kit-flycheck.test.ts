/**
 * The conformance kit's diagnostics cases (every case of test/conformance/cases/ that needs "diagnostics")
 * against the Emacs client with the diagnostics published through Flycheck (Debian's elpa-flycheck) instead of
 * Flymake: `flycheckAdapter` of test/conformance/adapters/emacs.ts. The rest of the kit does not depend on the
 * checker and runs once, through the Flymake adapter, in test/conformance/kit.test.ts.
 */
import { after, describe, it } from "node:test";
import { flycheckAdapter } from "../conformance/adapters/emacs.ts";
import { cases as diagnosticsCases } from "../conformance/cases/diagnostics.ts";
import { cases as reloadCases } from "../conformance/cases/reload.ts";
import { cases as sendCases } from "../conformance/cases/send.ts";
import { cases as showAskCases } from "../conformance/cases/show-ask.ts";
import { describeAdapter } from "../conformance/suite.ts";

// Send to pi's `@diagnostic` form and the ask's diagnostics take them from Flycheck too.
const cases = [...diagnosticsCases, ...reloadCases, ...sendCases, ...showAskCases].filter((c) =>
	c.needs?.includes("diagnostics"),
);

describe("the Flycheck variant", () => {
	it("has diagnostics cases to run", () => {
		if (cases.length < 3) throw new Error(`only ${cases.length} diagnostics cases found`);
	});
});

/** Cases this adapter cannot run: none expected (it has every capability these cases need). */
const notRun: string[] = [];
after(() => {
	if (notRun.length > 0) throw new Error(`Flycheck variant: cases not run:\n${notRun.join("\n")}`);
});
describeAdapter(flycheckAdapter, cases, notRun);
