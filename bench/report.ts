/**
 * What every bench prints with: the one percentile rule, the one row layout, and a cleanup scope that runs
 * like a TestContext's `after` hooks (so bench code can use the test helpers that register cleanups).
 */

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
