/**
 * The protocol's numeric limits (PROTOCOL.md, "Limits" and v0.3), written once: pi reads with them and the
 * TypeScript clients write with them. Dependency-free, so the editor bundles can import it. The
 * Lua, Vim9, Emacs Lisp and Java clients keep copies: test/{nvim,vim,emacs,jetbrains}/limits-agree.test.ts fail
 * when one drifts, and test/unit/repo/limits-coverage.test.ts when a limit here is in none of a language's rows
 * (and not listed there as pi's alone or a feature that client lacks).
 */

/** Editor state files larger than this are refused unread by pi, so every writer keeps its encoded file below it. */
export const MAX_STATE_FILE_BYTES = 1024 * 1024;

/**
 * Selection text is cut at a line boundary once its *encoded* form (the bytes it takes inside the JSON string,
 * escapes included) would pass this, so the state file stays far below MAX_STATE_FILE_BYTES whatever the user
 * selects: escaping grows ordinary text by a few percent, quotes and backslashes double, and control bytes
 * (binary files) take six bytes each (`\u0001`).
 */
export const MAX_SELECTION_TEXT_BYTES = 256 * 1024;

/** v0.3 diagnostics: at most this many items, each message at most this many characters. */
export const MAX_DIAGNOSTIC_ITEMS = 100;
export const MAX_DIAGNOSTIC_MESSAGE_CHARS = 500;

/**
 * v0.3 `files`: at most this many reports on pi's changes in one state file (pi reads no more). An editor
 * keeps each pi's newest KEPT_FILE_REPORTS, and every report on a change its pi's newest message still lists in
 * `changed` (at most MAX_PI_CHANGED): pi writing 200 files in one run, or slow to read, must find every answer
 * (a report that rolled out before pi read it made pi tell its model the editor did not answer). No clock (v0.5).
 */
export const MAX_FILE_REPORTS = 200;
export const KEPT_FILE_REPORTS = 20;

/** v0.3 pi message (`pi-<pid>.json`): its lists, and its size (larger files are ignored by editors, unread). */
export const MAX_PI_CHANGED = 50;
export const MAX_PI_LAST_TURN = 50;
export const MAX_PI_MESSAGE_BYTES = 64 * 1024;

/**
 * Issue 26, merges into unsaved buffers: the `merge` fields of one pi message take at most this many bytes once
 * JSON-encoded (the newest changes keep theirs; an older change without it is reported `modified`, as before), so
 * the message stays under MAX_PI_MESSAGE_BYTES. An editor's report lists at most MAX_CONFLICTS conflicts, each with
 * at most MAX_CONFLICT_LINES of the user's lines (each cut at MAX_CONFLICT_LINE_BYTES).
 */
export const MAX_PI_MERGE_BYTES = 32 * 1024;
export const MAX_CONFLICTS = 20;
export const MAX_CONFLICT_LINES = 20;
export const MAX_CONFLICT_LINE_BYTES = 500;

/**
 * v0.4 change set (`pi-<pid>.review.json`): the runs kept, the largest file whose contents it carries, the hunks
 * listed per file, and the whole file's size (pi keeps under it; editors ignore a larger one, unread).
 */
export const MAX_REVIEW_RUNS = 3;
export const MAX_REVIEW_FILE_BYTES = 1024 * 1024;
export const MAX_REVIEW_HUNKS_PER_FILE = 500;
export const MAX_REVIEW_BYTES = 8 * 1024 * 1024;
/** v0.4 `reverted`: the editor's newest reports of hunks the user took back. */
export const MAX_REVERTED_REPORTS = 50;
/**
 * v0.4 approval (`pi-<pid>.approval.json`): the largest file (pi drops the hunks' text, with a note, to stay
 * under it; editors ignore a larger one, unread), and the editor's newest `decisions` read.
 */
export const MAX_APPROVAL_BYTES = 1024 * 1024;
export const MAX_DECISIONS = 20;

/**
 * Every file pi writes for the editors (`pi-<pid>.json`, `.review.json`, `.approval.json`) nests at most this many
 * arrays and objects (the change set needs 8: runs, a run, its files, a file, its hunks, a hunk, its lines; the
 * rest is margin for compatible additions). An editor refuses a deeper file before decoding it, by a scan of its
 * bytes that counts `[` and `{` outside strings: some JSON decoders recurse per level (Vim 9.0's crashes).
 */
export const MAX_PI_FILE_DEPTH = 16;

/**
 * The largest line number or line count an editor takes from pi's files (hunks' `old_start`, `new_start`,
 * `hunks_total`): integers 0 to 2^31-1, so each fits every client's integer (a Java int, a Vim Number);
 * anything else (1.5, -1, 1e400, 2^53) is malformed.
 */
export const MAX_LINE_NUMBER = 2 ** 31 - 1;

/**
 * An id in pi's files (a hunk's `id` in the change set and in an approval request, the request's `id`) is 1 to this
 * many bytes of its UTF-8 encoding (pi writes `h` and 10 hex digits, `r` and a number): counted in bytes in every
 * client, never in characters or UTF-16 units.
 */
export const MAX_ID_BYTES = 64;

/**
 * v0.5 `<pid>.buffers.json`: the texts of the editor's unsaved buffers, at most this many bytes once JSON-encoded
 * in all (a buffer that would pass it is listed with `note: "too_large"` and no text), at most this many buffers
 * (the current one first), and the file's size (pi refuses a larger one, unread).
 */
export const MAX_UNSAVED_TEXT_BYTES = 2 * 1024 * 1024;
export const MAX_UNSAVED_BUFFERS = 32;
export const MAX_BUFFERS_FILE_BYTES = 3 * 1024 * 1024;

/**
 * v0.5 send to pi (`<pid>.send.json`): the file is at most this big on disk (pi refuses a bigger one unread), the
 * typed prompt at most MAX_SEND_PROMPT_BYTES of UTF-8, and what is sent (`item.text`) at most
 * MAX_SELECTION_TEXT_BYTES, as a selection (the editor cuts it and sets `truncated`; pi refuses a longer one).
 */
export const MAX_SEND_FILE_BYTES = 512 * 1024;
export const MAX_SEND_PROMPT_BYTES = 16 * 1024;
/** A send older than this (by its `timestamp`, seconds) when pi reads it is stale: pi refuses it. */
export const SEND_MAX_AGE_SECONDS = 30;

/**
 * v0.5 show and ask (`pi-<pid>.ask.json`, the editor's `<pid>.answers.json`): pi's request file lists at most
 * MAX_ASK_REQUESTS requests and is at most MAX_ASK_FILE_BYTES (an editor refuses a larger one unread); a show's
 * note is at most MAX_SHOW_NOTE_BYTES of UTF-8. The editor's answers file keeps its newest MAX_ANSWERS answers and
 * is at most MAX_ANSWERS_FILE_BYTES (pi refuses a larger one unread); an ask's answer lists at most
 * MAX_ASK_BUFFERS buffers and, over all of them, at most MAX_ASK_DIAGNOSTIC_ITEMS diagnostics (each buffer's at
 * most MAX_DIAGNOSTIC_ITEMS, as the state file's). pi waits ASK_WAIT_MS for the answer.
 */
export const MAX_ASK_REQUESTS = 8;
export const MAX_ASK_FILE_BYTES = 64 * 1024;
export const MAX_SHOW_NOTE_BYTES = 1024;
export const MAX_ANSWERS = 16;
export const MAX_ANSWERS_FILE_BYTES = 1024 * 1024;
export const MAX_ASK_BUFFERS = 200;
export const MAX_ASK_DIAGNOSTIC_ITEMS = 200;
export const ASK_WAIT_MS = 1000;
