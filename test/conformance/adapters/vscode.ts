/**
 * The VS Code extension (editors/vscode) in the conformance kit: its own shell (src/extension.ts, activate and
 * deactivate) with the shared client code it wires (editors/shared: the state writer, pi's message watcher)
 * and its pi-sync, run in the kit's process against a fake of VS Code's API (test/helpers/fake-vscode.ts,
 * mapped onto the `vscode` import with a module hook). The kit checks this code, not VS Code; real VS Code
 * is adapters/vscode-code-server.ts. The fake reloads documents without unsaved changes when their file
 * changes, as VS Code's watcher does; the extension only reports on that.
 */
import "../../helpers/fake-vscode-hook.ts";
import type { ClientAdapter, ClientSession, KitDiagnostic, Position, StartOptions } from "../client.ts";
import { utf16Span } from "../kit.ts";

const vscode = await import("../../helpers/fake-vscode.ts");
const extension = await import("../../../editors/vscode/src/extension.ts");

/** vscode.DiagnosticSeverity's numbers. */
const SEVERITY = { error: 0, warning: 1, info: 2, hint: 3 } as const;

/**
 * What the extension tells about bad input: its warnings, and the lines its output channel gives a pi message or
 * a change set it ignores (not the line saying a gone pi's changes are no longer shown).
 */
const isNotice = (line: string) => / pi message: /.test(line) || /\.review\.json\b.*ignored$/.test(line);

/** Run the extension's command `id` as the user does; what it told the user, joined. */
async function runCommand(bench: InstanceType<typeof vscode.Workbench>, id: string): Promise<string> {
	const [output, status, shown] = [bench.output.length, bench.statusMessages.length, bench.shown.length];
	if (!bench.commands.has(id)) throw new Error(`the extension registered no command ${id}`);
	await vscode.commands.executeCommand(id);
	return [...bench.output.slice(output), ...bench.statusMessages.slice(status), ...bench.shown.slice(shown)].join("\n");
}

async function start(options: StartOptions): Promise<ClientSession> {
	const bench = new vscode.Workbench(options.cwd);
	vscode.useWorkbench(bench);
	const context = vscode.makeContext();
	// The extension reads the state dir from the environment when it activates: the kit's, for this session.
	const saved = process.env["XDG_RUNTIME_DIR"];
	process.env["XDG_RUNTIME_DIR"] = options.env["XDG_RUNTIME_DIR"];
	try {
		extension.activate(context as never);
	} finally {
		if (saved === undefined) delete process.env["XDG_RUNTIME_DIR"];
		else process.env["XDG_RUNTIME_DIR"] = saved;
	}
	const documentOf = (file: string) => {
		const document = bench.documents.find((d) => d.fileName === file && !d.isClosed);
		if (!document) throw new Error(`${file} is not open`);
		return document;
	};
	const toHost = (position: Position, after: boolean) => {
		const editor = bench.activeTextEditor;
		if (!editor) throw new Error("no active editor");
		const span = utf16Span(editor.document.lineAt(position.line - 1).text, position.column);
		return { line: position.line - 1, character: after ? span.end : span.start };
	};
	let active = true;
	const deactivate = () => {
		if (!active) return;
		active = false;
		try {
			extension.deactivate();
			for (const subscription of context.subscriptions) subscription.dispose();
		} finally {
			bench.dispose();
			vscode.useWorkbench(undefined);
		}
	};
	if (options.file !== undefined) bench.open(options.file);
	return {
		pid: process.pid,
		open: async (file) => void bench.open(file),
		moveCursor: async (to) => {
			const at = toHost(to, false);
			bench.select(at, at);
		},
		select: async (from, to) => bench.select(toHost(from, false), toHost(to, true)),
		clearSelection: async () => {
			const at = bench.activeTextEditor?.selection.active ?? { line: 0, character: 0 };
			bench.select(at, at);
		},
		// The selection is made once select returns.
		endSelecting: async () => {},
		setLines: async (file, lines) => bench.edit(documentOf(file), `${lines.join("\n")}\n`),
		save: async (file) => bench.save(documentOf(file)),
		buffer: async (file) => {
			const document = bench.documents.find((d) => d.fileName === file && !d.isClosed);
			return document ? { text: document.getText(), modified: document.isDirty } : undefined;
		},
		loadedFiles: async () => bench.documents.filter((d) => !d.isClosed).map((d) => d.fileName),
		setDiagnostics: async (file, items: KitDiagnostic[]) => {
			const document = documentOf(file);
			bench.setDiagnostics(
				document,
				items.map((d) => {
					const at = { line: d.line - 1, character: utf16Span(document.lineAt(d.line - 1).text, d.column).start };
					return {
						severity: SEVERITY[d.severity],
						range: { start: at, end: at },
						message: d.message,
						source: d.source ?? "kit",
					};
				}),
			);
		},
		messages: async () => [...bench.shown, ...bench.output.filter(isNotice)],
		// ---- approval: the commands "Accept/Reject pi's proposed change" as the user runs them; their reply is
		// what they put in the output channel, the status bar and notifications ----
		approve: () => runCommand(bench, "piIdeContext.approve"),
		reject: () => runCommand(bench, "piIdeContext.reject"),
		// A request's notification (describeApproval: "pi wants to edit a.txt: 2 hunks. ...").
		approvalNotices: async () => bench.shown.filter((m) => m.startsWith("pi wants to ")),
		// The proposal's decorations (the diff editor's "removed" background, approval-view.ts), each line of each
		// named by the note drawn after it ("pi proposes: ..."): a decoration type carries no name of its own.
		approvalMarks: async (file) => {
			const marks: { name: string; line: number }[] = [];
			for (const [type, drawn] of bench.decorations.get(file) ?? []) {
				const background = (type.options as { backgroundColor?: { id?: string } }).backgroundColor?.id;
				if (background !== "diffEditor.removedLineBackground") continue;
				for (const each of drawn as unknown as ApprovalDecoration[]) {
					const name = each.renderOptions?.after?.contentText ?? "";
					for (let l = each.range.start.line; l <= each.range.end.line; l++) marks.push({ name, line: l + 1 });
				}
			}
			return marks;
		},
		// ---- end approval ----
		// ---- send: "pi: Send to pi (draft)" / "pi: Send to pi now" (or a form's command), the prompt its argument ----
		sendToPi: async (file, send) => {
			// Made the active editor only when it is not: opening resets the cursor the case put.
			if (bench.activeTextEditor?.document.fileName !== file) bench.open(file);
			if (send.lines) {
				const [first, last] = send.lines;
				bench.select({ line: first - 1, character: 0 }, { line: last, character: 0 });
			}
			const form = send.form === "diagnostic" ? "Diagnostic" : send.form === "file" ? "File" : "";
			const id = `piIdeContext.send${form}${send.mode === "now" ? "Now" : ""}`;
			const command = bench.commands.get(id);
			if (!command) throw new Error(`the extension registered no command ${id}`);
			await command({ prompt: send.prompt });
		},
		// ---- show: the "pi's places" tree view as VS Code renders it (its provider's items, oldest first) ----
		shownPlaces: async () => {
			const provider = bench.trees.get("piIdeContext.places");
			if (!provider) throw new Error("the extension registered no piIdeContext.places view");
			return (await provider.getChildren()).map((element) => {
				const place = element as { file: string; line: number; end_line: number | null };
				const item = provider.getTreeItem(element);
				return {
					file: place.file,
					line: place.line,
					end_line: place.end_line,
					text: `${item.label} ${item.description}`,
				};
			});
		},
		quit: async () => deactivate(),
		dispose: async () => deactivate(),
		...reviewMethods(bench, documentOf),
	};
}

// ---- capability "review" (protocol v0.4; cases/review.ts) ----

type Bench = InstanceType<typeof vscode.Workbench>;
type Document = InstanceType<typeof vscode.TextDocument>;

/** A decoration of the approval's: its range and the note after it (vscode.DecorationOptions). */
interface ApprovalDecoration {
	range: { start: { line: number }; end: { line: number } };
	renderOptions?: { after?: { contentText?: string } };
}

/**
 * Whether a decoration type is one of the review's: VS Code gives decoration types no name, and the extension
 * draws pi's hunks with the diff gutter's colours (editors/vscode/src/review-view.ts, its `KINDS`).
 */
const isReviewDecoration = (type: { options: object }) =>
	String((type.options as { borderColor?: { id?: string } }).borderColor?.id).startsWith("editorGutter.");

function reviewMethods(
	bench: Bench,
	documentOf: (file: string) => Document,
): Pick<ClientSession, "reviewMarks" | "editLines" | "revertHunk" | "undo"> {
	return {
		reviewMarks: async (file) => {
			const lines = new Set<number>();
			for (const [type, ranges] of bench.decorations.get(file) ?? []) {
				if (!isReviewDecoration(type)) continue;
				for (const range of ranges) for (let l = range.start.line; l <= range.end.line; l++) lines.add(l + 1);
			}
			return [...lines].sort((a, b) => a - b);
		},
		editLines: async (file, line, remove, insert) => bench.editLines(documentOf(file), line - 1, remove, insert),
		// The file's editor made the active one, the cursor on `line`, then the command "pi: Revert this change".
		revertHunk: async (file, line) => {
			bench.open(file);
			bench.select({ line: line - 1, character: 0 }, { line: line - 1, character: 0 });
			const revert = bench.commands.get("piIdeContext.revertHunk");
			if (!revert) throw new Error("the extension registered no piIdeContext.revertHunk");
			await revert();
		},
		undo: async (file) => bench.undo(documentOf(file)),
	};
}

export const adapters: ClientAdapter[] = [
	{
		name: "vscode (extension code, fake VS Code API)",
		app: "vscode",
		capabilities: new Set([
			"selection",
			"edit",
			"reload",
			"diagnostics",
			"editor-per-row",
			"review",
			"approval",
			"approval-marks",
			"pi-identity",
			"unsaved-buffers",
			"send",
			"merge",
			"show",
			"ask",
		]),
		missing: {
			"ui-gate": "a VS Code extension host always belongs to a window: there is no VS Code without a UI",
		},
		inProcess: true,
		hostReloads: true,
		start,
	},
];
