/**
 * The order of pi's writes for editors (editor-link.ts): the change set, written off pi's thread, and each message
 * after it, one at a time, so a message never lands before the change set it announces. Two rules keep a burst of
 * pi's parallel tool calls (40 writes in one message) from turning into a long line of writes the editor's answers
 * wait behind:
 * - a queued write that a newer one of its kind follows is skipped: the newer carries all it would (each message
 *   lists every change so far, each change set every run), and it still lands after its own change set;
 * - a wait for the editor's answer to change `seq` begins once a message announcing it is out (`announced`), not
 *   once every write queued since is: the editor may answer long before, and drop an old report (PROTOCOL.md
 *   `files`) before pi looks.
 * No I/O of its own: the steps do the writing. Never rejects.
 */

export type WriteKind = "review" | "message";

export class PublishQueue {
	/** The writes under way, in order (null when none). */
	#tail: Promise<void> | null = null;
	/** The newest queued write of each kind, by generation. */
	readonly #newest: Record<WriteKind, number> = { review: 0, message: 0 };
	/** The newest seq a message announced (written, or its write failed: nothing more to wait for). */
	#announcedSeq = 0;
	readonly #waiters = new Set<() => void>();

	/** Whether writes are under way (a message is then queued behind them, not written at once). */
	get busy(): boolean {
		return this.#tail !== null;
	}

	/**
	 * Run `write` after the writes under way, unless a newer write of `kind` is queued by then; at once when none is
	 * under way and `atOnce` (a message, written synchronously). `announces`: the seq of pi's newest change the
	 * write makes known to the editor (a message's `seq`).
	 */
	push(
		kind: WriteKind,
		write: () => void | Promise<void>,
		options: { announces?: number; atOnce?: boolean } = {},
	): void {
		const generation = ++this.#newest[kind];
		const step = async () => {
			if (generation !== this.#newest[kind]) return;
			try {
				await write();
			} finally {
				if (options.announces !== undefined) this.#announce(options.announces);
			}
		};
		if (options.atOnce && !this.#tail) {
			void step().catch(() => {
				// Each write reports its own failure; nothing here may reject.
			});
			return;
		}
		const next = (this.#tail ?? Promise.resolve()).then(step).catch(() => {
			// Each write reports its own failure; nothing here may reject.
		});
		this.#tail = next;
		void next.then(() => {
			if (this.#tail !== next) return;
			this.#tail = null;
			this.#wake();
		});
	}

	/** Once every write under way has landed (the change set and the messages after it). Never rejects. */
	async flush(): Promise<void> {
		while (this.#tail) await this.#tail;
	}

	/** Once a message announcing change `seq` (or a later one) was written, or its write failed, or none is under way. */
	announced(seq: number): Promise<void> {
		const done = () => this.#tail === null || this.#announcedSeq >= seq;
		if (done()) return Promise.resolve();
		return new Promise((resolve) => {
			const waiter = () => {
				if (!done()) return;
				this.#waiters.delete(waiter);
				resolve();
			};
			this.#waiters.add(waiter);
		});
	}

	#announce(seq: number): void {
		this.#announcedSeq = Math.max(this.#announcedSeq, seq);
		this.#wake();
	}

	#wake(): void {
		for (const waiter of [...this.#waiters]) waiter();
	}
}
