/**
 * What every bench prints with: the one percentile rule, the one row layout, and a cleanup scope that runs
 * like a TestContext's `after` hooks (so bench code can use the test helpers that register cleanups), and one
 * loop over the Neovim matrix.
 */
import { NVIM_MATRIX, type NvimFlavour } from "../test/helpers/nvim.ts";

/** Nearest-rank percentile (q in 0..1) of the samples; NaN for none. */
export function percentile(samples: number[], q: number): number {
	const sorted = [...samples].sort((a, b) => a - b);
	return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

export const median = (samples: number[]): number => percentile(samples, 0.5);

const columns = (name: string, value: string, target: string) =>
	`${name.padEnd(62)}${value.padEnd(22)}${target.padEnd(16)}`;

/** The heading of a table of `row`s. */
export function header(): void {
	console.log(columns("figure", "value", "target"));
}

/** One figure: what was measured, the value, the target, and whether it is met. */
export function row(name: string, value: string, target: string, ok: boolean): void {
	console.log(`${columns(name, value, target)}${ok ? "ok" : "OVER TARGET"}`);
}

/**
 * Run `bench` for every Neovim in the test matrix (0.7.2 and 0.10): one that cannot run prints why and marks
 * the run failed, and the others still run.
 */
export async function forEachNvim(bench: (flavour: NvimFlavour) => Promise<void>): Promise<void> {
	for (const flavour of NVIM_MATRIX) {
		try {
			await bench(flavour);
		} catch (error) {
			console.log(`Neovim ${flavour.name}: ${(error as Error).message}`);
			process.exitCode = 1;
		}
	}
}

/** Collects cleanups the way a TestContext would; `close` runs them, last registered first. */
export function scope() {
	const fns: (() => unknown)[] = [];
	return {
		after: (fn: () => unknown) => {
			fns.push(fn);
		},
		close: async () => {
			for (const fn of fns.reverse()) await fn();
		},
	};
}
