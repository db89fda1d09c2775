package pi.ide.plugin;

import com.intellij.openapi.command.WriteCommandAction;
import com.intellij.openapi.editor.Document;
import com.intellij.openapi.project.Project;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import pi.ide.core.Merge;

/**
 * Issue 26: pi's merged hunks ({@link Merge#textEdits}) made in the IDE's Document as one undo step of its own: one
 * WriteCommandAction per merge, in a command group of its own (never joined to the user's typing, so one Undo takes
 * pi's lines out and leaves the user's). The Document stays unsaved; nothing here saves it. Called on the event thread.
 */
final class MergeEdit {
	private MergeEdit() {}

	static final String COMMAND = "pi: merge pi's change";
	private static final AtomicLong GROUPS = new AtomicLong();

	/** Make {@code edits} (of {@code text}) in {@code document}; false, nothing changed, when it no longer holds text. */
	static boolean apply(Project project, Document document, String text, List<Merge.TextEdit> edits) {
		if (!document.isWritable() || !document.getText().equals(text)) return false;
		String group = "pi-ide-merge-" + GROUPS.incrementAndGet();
		WriteCommandAction.runWriteCommandAction(project, COMMAND, group, () -> {
			// Newest offsets first: each replacement leaves the offsets before it as they were.
			for (int i = edits.size() - 1; i >= 0; i--) {
				Merge.TextEdit e = edits.get(i);
				document.replaceString(e.start, e.end, e.text);
			}
		});
		return true;
	}
}
