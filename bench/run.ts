/**
 * `npm run bench`: prints the figures the issues ask for, with their targets.
 * Timing lives here, never in tests.
 */

import { runContextTokensBench } from "./context-tokens.ts";
import { runLoopBench } from "./loop.ts";
import { runNvimBench } from "./nvim.ts";
import { runPiBench } from "./pi.ts";
import { runVimBench } from "./vim.ts";

await runPiBench();
await runContextTokensBench();
await runNvimBench();
await runVimBench();
await runLoopBench();
