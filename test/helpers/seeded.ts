/**
 * The one seeded generator of the randomised tests (mulberry32: small, fast, well spread), so a failing sequence
 * replays exactly from its printed seed.
 */

/** Numbers in [0, 1), the same sequence for the same seed. */
export function mulberry32(seed: number): () => number {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

/** Whole numbers in [0, n), from the same generator. */
export function seededInts(seed: number): (n: number) => number {
	const next = mulberry32(seed);
	return (n) => Math.floor(next() * n);
}
