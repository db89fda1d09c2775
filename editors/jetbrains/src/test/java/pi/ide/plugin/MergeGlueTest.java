package pi.ide.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.intellij.openapi.command.CommandEvent;
import com.intellij.openapi.command.CommandListener;
import com.intellij.openapi.command.CommandProcessor;
import com.intellij.openapi.editor.event.DocumentEvent;
import com.intellij.openapi.editor.event.DocumentListener;
import com.intellij.openapi.editor.impl.DocumentImpl;
import com.intellij.openapi.util.Disposer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import pi.ide.core.Merge;

/**
 * Issue 26, the plugin's merge edit (MergeEdit) against real IntelliJ 183 classes without an IDE: a real DocumentImpl
 * changed through the platform's real WriteCommandAction and CommandProcessor (intellij-core's headless application,
 * as PlatformGlueTest runs it). What is checked is what the IDE's UndoManager groups by: every change of a merge
 * is made inside one command named for it, in a command group of its own (never the user's, never another merge's).
 * The UndoManager itself is the IDE's (platform-impl's, needing a running IDE): not run here.
 */
class MergeGlueTest {
	@BeforeAll
	static void startTheCoreEnvironment() {
		PlatformGlueTest.startTheCoreEnvironment();
		// WriteCommandAction asks the IDE's FileModificationService to make its PSI files writable (here none):
		// intellij-core's headless application has no such service, the IDE does; a stand-in that allows all.
		com.intellij.mock.MockApplication app = (com.intellij.mock.MockApplication) com.intellij.openapi.application.ApplicationManager
				.getApplication();
		if (com.intellij.codeInsight.FileModificationService.getInstance() == null) {
			app.registerService(com.intellij.codeInsight.FileModificationService.class, new WritableFiles());
		}
	}

	static final class WritableFiles extends com.intellij.codeInsight.FileModificationService {
		@Override
		public boolean preparePsiElementsForWrite(java.util.Collection<? extends com.intellij.psi.PsiElement> elements) {
			return true;
		}

		@Override
		public boolean prepareFileForWrite(com.intellij.psi.PsiFile file) {
			return true;
		}

		@Override
		public boolean prepareVirtualFilesForWrite(com.intellij.openapi.project.Project project,
				java.util.Collection<com.intellij.openapi.vfs.VirtualFile> files) {
			return true;
		}
	}

	/** Each document change with the command it was made in: its name and group. */
	static final class Recorder implements CommandListener, DocumentListener {
		final List<String> changes = new ArrayList<>();
		final List<Object> groups = new ArrayList<>();
		String command;
		Object group;

		@Override
		public void commandStarted(CommandEvent event) {
			command = event.getCommandName();
			group = event.getCommandGroupId();
			groups.add(group);
		}

		@Override
		public void commandFinished(CommandEvent event) {
			command = null;
			group = null;
		}

		@Override
		public void documentChanged(DocumentEvent event) {
			changes.add(command + "@" + group);
		}
	}

	static List<Merge.TextEdit> editsOf(String text, int from, int to, String... lines) {
		return Merge.textEdits(text, Collections.singletonList(new Merge.LineEdit(from, to, Arrays.asList(lines))));
	}

	@Test
	void aMergeIsOneCommandOfItsOwnGroupAndNothingElse() {
		com.intellij.openapi.Disposable scope = Disposer.newDisposable("merge glue");
		try {
			String text = "1\nuser\n3\n4\n5\n";
			DocumentImpl document = new DocumentImpl(text);
			Recorder r = new Recorder();
			CommandProcessor.getInstance().addCommandListener(r, scope);
			document.addDocumentListener(r, scope);
			// The user's own typing: a command of its own group, as the editor's typing makes one.
			CommandProcessor.getInstance().executeCommand(null,
					() -> com.intellij.openapi.application.ApplicationManager.getApplication()
							.runWriteAction(() -> document.insertString(0, "0\n")),
					"Typing", "user's typing");
			String typed = document.getText();
			List<Merge.TextEdit> two = new ArrayList<>(editsOf(typed, 1, 2, "ONE"));
			two.addAll(editsOf(typed, 5, 6, "FIVE", "five and a half"));
			assertTrue(MergeEdit.apply(null, document, typed, two));
			assertEquals("0\nONE\nuser\n3\n4\nFIVE\nfive and a half\n", document.getText());
			String merged = document.getText();
			assertTrue(MergeEdit.apply(null, document, merged, editsOf(merged, 3, 4, "three")));
			assertEquals(4, r.changes.size());
			assertEquals("Typing@user's typing", r.changes.get(0));
			assertEquals(r.changes.get(1), r.changes.get(2), "both hunks of one merge: one command, one group");
			assertTrue(r.changes.get(1).startsWith(MergeEdit.COMMAND + "@"), r.changes.get(1));
			assertNotEquals(r.changes.get(1), r.changes.get(3), "the next merge is a group of its own");
			assertFalse(r.changes.get(1).endsWith("@null"), "a group: never joined to a neighbour by the IDE's default");
		} finally {
			Disposer.dispose(scope);
		}
	}

	@Test
	void aDocumentThatChangedMeanwhileIsNotTouched() {
		DocumentImpl document = new DocumentImpl("a\nb\n");
		assertFalse(MergeEdit.apply(null, document, "a\nB\n", editsOf("a\nB\n", 0, 1, "x")));
		assertEquals("a\nb\n", document.getText());
	}
}
