/**
 * `npm run bench`: prints the figures the issues ask for, with their targets.
 * Timing lives here, never in tests.
 */

import { runContextTokensBench } from "./context-tokens.ts";
import { runEmacsBench } from "./emacs.ts";
import { runEmacsReviewBench } from "./emacs-review.ts";
import { runJetBrainsBench } from "./jetbrains.ts";
import { runLoopBench } from "./loop.ts";
import { runNvimBench } from "./nvim.ts";
import { runNvimMergeBench } from "./nvim-merge.ts";
import { runNvimReviewBench } from "./nvim-review.ts";
import { runPiBench } from "./pi.ts";
import { runPathMappingBench, runPromptPathBench } from "./prompt-path.ts";
import { runReviewBench } from "./review.ts";
import { runSendBench } from "./send.ts";
import { runShowAskBench } from "./show-ask.ts";
import { runTrustBench } from "./trust.ts";
import { runUnsavedReadBench } from "./unsaved-read.ts";
import { runVimBench } from "./vim.ts";
import { runVimMergeBench } from "./vim-merge.ts";
import { runVscodeMergeBench } from "./vscode-merge.ts";
import { runVscodeReviewBench } from "./vscode-review.ts";

await runPiBench();
await runPromptPathBench();
await runPathMappingBench();
await runTrustBench();
await runContextTokensBench();
await runNvimBench();
await runVimBench();
await runLoopBench();
await runReviewBench();
await runNvimReviewBench();
await runUnsavedReadBench();
await runNvimMergeBench();
try {
	await runVimMergeBench();
} catch (error) {
	console.log(`Vim: ${(error as Error).message}`);
	process.exitCode = 1;
}
await runSendBench();
await runShowAskBench();
runVscodeReviewBench();
runVscodeMergeBench();
await runEmacsBench();
await runEmacsReviewBench();
await runJetBrainsBench();
