package pi.ide.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.intellij.openapi.Disposable;
import com.intellij.openapi.editor.Document;
import com.intellij.openapi.editor.Editor;
import com.intellij.openapi.editor.impl.DocumentImpl;
import com.intellij.openapi.util.Disposer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import pi.ide.core.Json;
import pi.ide.core.SelectionClock;
import pi.ide.core.Snapshot;
import pi.ide.core.StateBuilder;

/**
 * The plugin's glue against real IntelliJ platform 183 classes from Debian's jars, without an IDE: real
 * DocumentImpl documents and their real DocumentListener events, real Disposer trees. The IDE's
 * FileDocumentManager (which needs a running IDE) is the one seam: {@link DocumentCapture.Files}. Documents run
 * inside the platform's own headless application, intellij-core's CoreApplicationEnvironment.
 */
class PlatformGlueTest {
	/** The platform's own headless application (intellij-core, as the Kotlin compiler uses it), for DocumentImpl. */
	static final Disposable ENVIRONMENT = Disposer.newDisposable("core environment");

	@org.junit.jupiter.api.BeforeAll
	static void startTheCoreEnvironment() {
		if (com.intellij.openapi.application.ApplicationManager.getApplication() == null) {
			new com.intellij.core.CoreApplicationEnvironment(ENVIRONMENT);
		}
	}

	static final class Files implements DocumentCapture.Files {
		final String path;
		boolean unsaved;

		Files(String path) {
			this.path = path;
		}

		public String pathOf(Document document) {
			return path;
		}

		public boolean isUnsaved(Document document) {
			return unsaved;
		}
	}

	/** An edit as the IDE makes one: a write action inside a command (the platform refuses anything else). */
	static void edit(Runnable change) {
		com.intellij.openapi.command.CommandProcessor.getInstance().executeCommand(null,
				() -> com.intellij.openapi.application.ApplicationManager.getApplication().runWriteAction(change), "edit", null);
	}

	@SuppressWarnings("unchecked")
	static Map<String, Object> state(Snapshot.Window... windows) throws Exception {
		StateBuilder.Built built = StateBuilder.build(
				new Snapshot.State(new Snapshot.Ide(7, "IntelliJ IDEA", "2025.2"), Arrays.asList(windows), null, null), 100,
				new SelectionClock());
		return (Map<String, Object>) Json.parse(new String(built.content, StandardCharsets.UTF_8));
	}

	@SuppressWarnings("unchecked")
	@Test
	void aRealDocumentIsCapturedWithByteColumnsAndItsModificationStamp() throws Exception {
		DocumentImpl document = new DocumentImpl("fun main() {\n  val é = \"€\"\n}\n");
		Files files = new Files("/p/src/Main.kt");
		int caret = document.getLineStartOffset(1) + 11; // after `  val é = "`, before €
		Snapshot.Document captured = DocumentCapture.capture(files, "w", "[No Name]", document, caret,
				document.getLineStartOffset(1) + 2, document.getLineStartOffset(1) + 9);
		Map<String, Object> buffer = (Map<String, Object>) state(new Snapshot.Window("/p", captured, null)).get("active_buffer");
		assertEquals("/p/src/Main.kt", buffer.get("file"));
		assertEquals("kotlin", buffer.get("language"));
		Map<String, Object> cursor = (Map<String, Object>) buffer.get("cursor");
		assertEquals(2L, cursor.get("line"));
		assertEquals(13L, cursor.get("column"), "é is two bytes");
		Map<String, Object> selection = (Map<String, Object>) buffer.get("selection");
		assertEquals("val é =", selection.get("text"));
		assertEquals(3L, buffer.get("lines_total"));
		long before = document.getModificationStamp();
		assertEquals(before, buffer.get("version"));

		edit(() -> document.insertString(0, "// edited\n")); // a real edit: the stamp moves, the captured text does not
		assertTrue(document.getModificationStamp() > before);
		assertEquals("fun main() {", captured.lines.text(0), "a capture is a snapshot, immune to later edits");
		files.unsaved = true;
		Snapshot.Document after = DocumentCapture.capture(files, "w", "[No Name]", document, 0, 0, 0);
		Map<String, Object> edited = (Map<String, Object>) state(new Snapshot.Window("/p", after, null)).get("active_buffer");
		assertEquals(true, edited.get("modified"));
		assertEquals(document.getModificationStamp(), edited.get("version"));
		assertNull(edited.get("selection"));
	}

	/** What the listener handed on, in order. */
	static class Recorder implements EditorEvents.Sink {
		final List<String> calls = new ArrayList<>();

		public void editorTouched(Editor editor, boolean urgent) {
			calls.add("touched");
		}

		public void documentChanged(Document document) {
			calls.add("changed:" + document.getTextLength());
		}

		public void editorReleased(Editor editor) {
			calls.add("released");
		}

		public void failed(String where, Throwable error) {
			calls.add("failed:" + where);
		}
	}

	@Test
	void realDocumentEventsReachTheSinkUntilTheParentIsDisposed() {
		DocumentImpl document = new DocumentImpl("abc");
		Recorder recorder = new Recorder();
		Disposable service = Disposer.newDisposable("pi-ide-context service");
		document.addDocumentListener(new EditorEvents(recorder), service);
		edit(() -> document.insertString(3, "d"));
		edit(() -> document.deleteString(0, 1));
		assertEquals(Arrays.asList("changed:4", "changed:3"), recorder.calls);
		Disposer.dispose(service);
		edit(() -> document.insertString(0, "z"));
		assertEquals(2, recorder.calls.size(), "a disposed parent takes its listeners with it");
	}

	@Test
	void aFailingSinkNeverThrowsIntoTheDocument() {
		DocumentImpl document = new DocumentImpl("abc");
		List<String> failures = new ArrayList<>();
		Disposable service = Disposer.newDisposable("service");
		document.addDocumentListener(new EditorEvents(new Recorder() {
			@Override
			public void documentChanged(Document d) {
				throw new IllegalStateException("boom");
			}

			@Override
			public void failed(String where, Throwable error) {
				failures.add(where + ": " + error.getMessage());
			}
		}), service);
		edit(() -> document.insertString(0, "x"));
		assertEquals("xabc", document.getText());
		assertEquals(Arrays.asList("document: boom"), failures);
		Disposer.dispose(service);
	}

	/** A window lives until its project is disposed (closed, or the IDE exiting), and is closed exactly once. */
	@Test
	void windowsCloseWithTheirProject() {
		Windows windows = new Windows();
		List<String> closed = new ArrayList<>();
		Disposable ide = Disposer.newDisposable("ide");
		Disposable a = Disposer.newDisposable("project a");
		Disposable b = Disposer.newDisposable("project b");
		Disposer.register(ide, a);
		Disposer.register(ide, b);
		windows.openUntilDisposed("/a", a, () -> closed.add("/a"));
		windows.openUntilDisposed("/b", b, () -> closed.add("/b"));
		windows.touch("/b", null);
		assertEquals(Arrays.asList("/b", "/a"), paths(windows), "the window touched last first");
		Disposer.dispose(b);
		assertEquals(Arrays.asList("/a"), paths(windows), "a closed project's window is gone at once");
		Disposer.dispose(ide);
		assertTrue(windows.isEmpty());
		assertEquals(Arrays.asList("/b", "/a"), closed, "each window closed exactly once");
		Disposer.dispose(b);
		assertEquals(2, closed.size());
	}

	static List<String> paths(Windows windows) {
		List<String> out = new ArrayList<>();
		for (Snapshot.Window w : windows.snapshot()) out.add(w.projectPath);
		return out;
	}
}
