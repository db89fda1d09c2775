/**
 * PublishQueue (src/link/publish-queue.ts): the order of pi's writes for editors, and when a wait for the editor's
 * answer to a change may begin. A table of the cases found in the 40-file run (issue 24), and a seeded randomised
 * check against an independent oracle: random bursts of changes (a change set, then a message) and message-only
 * publishes, with the slow change-set writes finishing at random points. Replay a failure with PUBLISH_QUEUE_SEED.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PublishQueue } from "../../../src/link/publish-queue.ts";
import { seededInts } from "../../helpers/seeded.ts";

/** Every microtask and promise step that can run now has run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A queue whose change-set writes finish when the test says so; what was written, in order. */
function harness() {
	const queue = new PublishQueue();
	const written: string[] = [];
	const running: { name: string; finish: () => void }[] = [];
	let seq = 0;
	const h = {
		queue,
		written,
		/** Run as a message lands (before anything else runs): another tool call's change arriving at that moment. */
		onMessage: undefined as (() => void) | undefined,
		/** A change: its change set (written off the thread, until `finishReview`), then its message. */
		change() {
			seq += 1;
			const name = `R${seq}`;
			queue.push("review", () => new Promise<void>((finish) => running.push({ name, finish })));
			const announces = seq;
			const write = () => {
				written.push(`M${announces}`);
				const then = h.onMessage;
				h.onMessage = undefined;
				then?.();
			};
			queue.push("message", write, { announces, atOnce: true });
			return seq;
		},
		/** The change set under way lands. */
		async finishReview() {
			const r = running.shift();
			assert.ok(r, "a change set is being written");
			written.push(r.name);
			r.finish();
			await settle();
		},
		/** Whether `promise` has resolved by now. */
		async resolved(promise: Promise<void>) {
			let done = false;
			void promise.then(() => {
				done = true;
			});
			await settle();
			return done;
		},
	};
	return h;
}

describe("PublishQueue: pi's writes for editors, and when a wait for an answer begins", () => {
	it("a wait begins once its change is announced, while the writes queued since are still under way", async () => {
		const h = harness();
		h.change(); // R1 under way, M1 behind it
		await settle();
		const first = h.queue.announced(1);
		// As M1 lands, change 2 arrives: R2 goes under way. The editor may answer M1 meanwhile (and drop that
		// report before R2 lands, PROTOCOL.md `files`): pi must be looking from M1 on.
		h.onMessage = () => h.change();
		await h.finishReview(); // R1, M1 land
		assert.deepEqual(h.written, ["R1", "M1"]);
		assert.equal(await h.resolved(first), true, "the wait for change 1 began with M1 on disk");
		assert.equal(await h.resolved(h.queue.announced(2)), false, "change 2 is not announced yet");
		await h.finishReview();
		assert.equal(await h.resolved(h.queue.announced(2)), true);
		assert.deepEqual(h.written, ["R1", "M1", "R2", "M2"]);
	});

	it("a burst: the writes queued behind the one under way collapse into the newest change set and message", async () => {
		const h = harness();
		h.change(); // R1 starts at once
		await settle();
		for (let i = 2; i <= 40; i++) h.change();
		const waits = [1, 20, 40].map((seq) => h.queue.announced(seq));
		await h.finishReview(); // R1 lands; M1..M39 and R2..R39 are skipped, R40 starts
		assert.equal(await h.resolved(waits[0] as Promise<void>), false, "nothing announces change 1 yet");
		await h.finishReview();
		assert.deepEqual(h.written, ["R1", "R40", "M40"]);
		for (const wait of waits) assert.equal(await h.resolved(wait), true);
	});

	it("nothing under way: a message is written at once, and a wait for it ends at once", async () => {
		const queue = new PublishQueue();
		const written: number[] = [];
		queue.push("message", () => void written.push(1), { announces: 1, atOnce: true });
		assert.deepEqual(written, [1], "written before push returns");
		assert.equal(queue.busy, false);
		let done = false;
		void queue.announced(1).then(() => {
			done = true;
		});
		await settle();
		assert.equal(done, true);
	});

	it("a write that throws: the message counts as tried, the queue goes on, nothing rejects", async () => {
		const queue = new PublishQueue();
		const written: string[] = [];
		queue.push("review", () => Promise.reject(new Error("disk full")));
		queue.push(
			"message",
			() => {
				throw new Error("disk full");
			},
			{ announces: 1, atOnce: true },
		);
		await queue.announced(1);
		queue.push("review", () => void written.push("R2"));
		queue.push("message", () => void written.push("M2"), { announces: 2, atOnce: true });
		await queue.flush();
		assert.deepEqual(written, ["R2", "M2"]);
		assert.equal(queue.busy, false);
	});
});

describe("PublishQueue, seeded: order, no lost write, and every announced change's wait begun", () => {
	it("random bursts against an oracle", async () => {
		const seed = Number(process.env["PUBLISH_QUEUE_SEED"] ?? 20261205);
		const rand = seededInts(seed);
		for (let round = 0; round < 40; round++) {
			const queue = new PublishQueue();
			const steps: string[] = [];
			const where = () => `seed ${seed}, round ${round}, after ${steps.join(" ")}`;
			// The oracle's record: pushes by kind (newest last), what landed, the change sets under way.
			let changes = 0;
			let reviewsPushed = 0;
			let messagesPushed = 0;
			let reviewLanded = 0;
			let announcedOnDisk = 0;
			const running: { gen: number; finish: () => void }[] = [];
			const waits: { seq: number; done: boolean }[] = [];
			const pushReview = () => {
				const gen = ++reviewsPushed;
				queue.push("review", () => {
					// A write runs only as the newest of its kind.
					assert.equal(gen, reviewsPushed, `${where()}: change set ${gen} written with ${reviewsPushed} queued`);
					return new Promise<void>((finish) =>
						running.push({
							gen,
							finish: () => {
								reviewLanded = gen;
								finish();
							},
						}),
					);
				});
			};
			const pushMessage = () => {
				const gen = ++messagesPushed;
				const announces = changes;
				// The change set this message announces: the newest pushed before it.
				const needs = reviewsPushed;
				queue.push(
					"message",
					() => {
						assert.equal(gen, messagesPushed, `${where()}: message ${gen} written with ${messagesPushed} queued`);
						assert.ok(
							reviewLanded >= needs,
							`${where()}: message announcing ${announces} landed before its change set ${needs}`,
						);
						announcedOnDisk = Math.max(announcedOnDisk, announces);
						if (changeOnLanding) {
							// Another tool call's change arrives as this message lands.
							changeOnLanding = false;
							steps.push("(landed)");
							change();
						}
					},
					{ announces, atOnce: true },
				);
			};
			let changeOnLanding = false;
			const change = () => {
				changes += 1;
				steps.push(`change${changes}`);
				pushReview();
				pushMessage();
				const wait = { seq: changes, done: false };
				waits.push(wait);
				void queue.announced(changes).then(() => {
					wait.done = true;
				});
			};
			const ops = 8 + rand(30);
			for (let op = 0; op < ops; op++) {
				const what = rand(11);
				if (what < 5) {
					change();
				} else if (what < 6) {
					steps.push("change-on-landing");
					changeOnLanding = true;
				} else if (what < 7) {
					steps.push("message");
					pushMessage();
				} else if (running.length > 0) {
					steps.push("land");
					running.shift()?.finish();
				} else {
					steps.push("tick");
				}
				await settle();
				// The oracle: a wait has begun exactly when a message announcing its change is on disk, or pi has
				// nothing more to write (its message could not be written, or was written without a change set).
				const idle = running.length === 0;
				for (const wait of waits) {
					const due = announcedOnDisk >= wait.seq || idle;
					assert.equal(
						wait.done,
						due,
						`${where()}: the wait for change ${wait.seq} ${due ? "not begun" : "begun early"}`,
					);
				}
				assert.equal(queue.busy, !idle, `${where()}: busy`);
			}
			while (running.length > 0) {
				running.shift()?.finish();
				await settle();
			}
			await queue.flush();
			// Nothing lost: the newest change set and message landed, and every wait began.
			assert.equal(reviewLanded, reviewsPushed, `${where()}: the newest change set landed`);
			assert.equal(announcedOnDisk, changes, `${where()}: the newest message landed`);
			assert.ok(
				waits.every((w) => w.done),
				`${where()}: every wait began`,
			);
		}
	});
});
