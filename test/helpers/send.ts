/**
 * v0.5 send to pi in tests: a send request as an editor writes it (`<pid>.send.json`, through the state-file
 * writer), and pi's answer read back from its message.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writePrivateFile } from "../../src/protocol/state-dir.ts";
import { editorSendFileName, type PiMessage, type SendItem, type SendMode } from "../../src/protocol/wire.ts";

export interface SendSpec {
	editorPid: number;
	piPid: number;
	id: string;
	mode?: SendMode;
	prompt?: string;
	item: Partial<SendItem> & Pick<SendItem, "file" | "text">;
	/** Seconds since the epoch; default now. */
	timestamp?: number;
}

export function sendRequest(spec: SendSpec): Record<string, unknown> {
	const lines = spec.item.text.split("\n").length;
	return {
		protocol: "0.5",
		kind: "send",
		pid: spec.editorPid,
		pi_pid: spec.piPid,
		id: spec.id,
		timestamp: spec.timestamp ?? Date.now() / 1000,
		mode: spec.mode ?? "draft",
		prompt: spec.prompt ?? "",
		item: { kind: "selection", start_line: 1, end_line: lines, truncated: false, ...spec.item },
	};
}

/** Write the send atomically (0600) as the editor would. */
export function writeSend(stateDir: string, spec: SendSpec): void {
	const written = writePrivateFile(stateDir, editorSendFileName(spec.editorPid), JSON.stringify(sendRequest(spec)));
	if (!written.ok) throw new Error(written.error);
}

/** The pids of the pis that have a message in `stateDir`. */
export function piPids(stateDir: string): number[] {
	return readdirSync(stateDir)
		.map((name) => /^pi-(\d+)\.json$/.exec(name)?.[1])
		.filter((pid): pid is string => pid !== undefined)
		.map(Number);
}

/** pi `pid`'s message, or undefined while it has none. */
export function readPiMessage(stateDir: string, pid: number): PiMessage | undefined {
	try {
		return JSON.parse(readFileSync(join(stateDir, `pi-${pid}.json`), "utf8")) as PiMessage;
	} catch {
		return undefined;
	}
}
