/**
 * Approval (v0.4), the two pieces that need pi itself: what a write/edit would leave (pi's own edit tool run on the
 * text in memory) and pi's dialog (the TUI's, or an RPC client's extension UI). src/index.ts hands both to
 * ApprovalDesk (src/link/approval-desk.ts).
 */
import { createEditTool, type EditToolInput, type ExtensionContext } from "@earendil-works/pi-coding-agent";
import { DIALOG_ACCEPT, DIALOG_REJECT } from "../link/approval.ts";

/**
 * What a write/edit would leave in its file, given the file's text now (null: no such file), or null when the tool
 * would fail. The edit is pi's own edit tool, run on the text in memory (its matching rules, line endings and
 * errors, not a copy of them); nothing is written.
 */
export async function proposeContent(
	toolName: string,
	input: unknown,
	current: string | null,
	cwd: string,
): Promise<string | null> {
	if (toolName === "write") {
		const content = input && typeof input === "object" ? (input as { content?: unknown }).content : undefined;
		return typeof content === "string" ? content : null;
	}
	if (toolName !== "edit" || current === null) return null;
	let written: string | null = null;
	const dryRun = createEditTool(cwd, {
		operations: {
			readFile: async () => Buffer.from(current, "utf8"),
			writeFile: async (_path, content) => {
				written = content;
			},
			access: async () => {},
		},
	});
	try {
		await dryRun.execute("pi-ide-approval", input as EditToolInput);
	} catch {
		return null;
	}
	return written;
}

/** pi's approval dialog (the TUI's, or an RPC client's): dismissed through `signal` when the editor answers first. */
export async function askApproval(
	ctx: ExtensionContext,
	title: string,
	signal: AbortSignal,
): Promise<"accept" | "reject" | undefined> {
	const choice = await ctx.ui.select(title, [DIALOG_ACCEPT, DIALOG_REJECT], { signal });
	return choice === DIALOG_ACCEPT ? "accept" : choice === DIALOG_REJECT ? "reject" : undefined;
}
