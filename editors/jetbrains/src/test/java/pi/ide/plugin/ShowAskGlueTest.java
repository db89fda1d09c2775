package pi.ide.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.intellij.openapi.editor.Document;
import com.intellij.openapi.editor.impl.DocumentImpl;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import pi.ide.core.ShowAsk;

/**
 * v0.5 show and ask's glue as far as it runs without an IDE, inside intellij-core's headless application: an ask's
 * documents from real DocumentImpl documents (files only, each once, the active one, unsaved flag and modification
 * stamp after a real edit, line count); without OpenFileDescriptor (Debian's 183 jars lack it) opening a place says
 * so in the log and nothing throws; the follow setting reads off where the platform has no PropertiesComponent.
 * Opening a place in a real editor and the notification need an IDE: editors/jetbrains/README.md says so.
 */
class ShowAskGlueTest {
	@BeforeAll
	static void start() {
		PlatformGlueTest.startTheCoreEnvironment();
	}

	/** The documents' paths and unsaved flags, as FileDocumentManager would say them. */
	static final class Files implements DocumentCapture.Files {
		final Map<Document, String> paths = new IdentityHashMap<>();
		final Map<Document, Boolean> unsaved = new IdentityHashMap<>();

		public String pathOf(Document document) {
			return paths.get(document);
		}

		public boolean isUnsaved(Document document) {
			return Boolean.TRUE.equals(unsaved.get(document));
		}
	}

	@Test
	void anAsksDocumentsAreTheOpenFileDocumentsEachOnce() {
		DocumentImpl a = new DocumentImpl("one\ntwo\nthree\n");
		DocumentImpl b = new DocumentImpl("x\ny");
		DocumentImpl scratch = new DocumentImpl("not a file");
		Files files = new Files();
		files.paths.put(a, "/p/a.ts");
		files.paths.put(b, "/p/b.ts");
		long before = b.getModificationStamp();
		PlatformGlueTest.edit(() -> b.insertString(0, "edited\n"));
		files.unsaved.put(b, true);
		// Two editors on b (a split), one on a scratch document: b once, the scratch not at all.
		List<ShowAsk.OpenDocument> docs = ShowAskUi.documents(Arrays.<Document>asList(b, scratch, a, b), files, "/p/a.ts");
		List<String> seen = new ArrayList<>();
		for (ShowAsk.OpenDocument d : docs) seen.add(d.file + " " + d.modified + " " + d.active + " " + d.linesTotal);
		assertEquals(Arrays.asList("/p/b.ts true false 3", "/p/a.ts false true 3"), seen);
		assertEquals(b.getModificationStamp(), docs.get(0).version);
		assertFalse(before == docs.get(0).version, "the stamp moved with the real edit");
		assertEquals(null, docs.get(0).diagnostics, "the plugin reads no highlighting: none reported");
	}

	@Test
	void withoutTheNavigationApiOpeningAPlaceIsLoggedAndNothingThrows() {
		assertThrows(ClassNotFoundException.class, () -> Class.forName(ShowAskUi.OPEN_FILE_DESCRIPTOR),
				"Debian's 183 jars lack it");
		assertFalse(ShowAskUi.open(null, new ShowAsk.Place("/nonexistent/a.ts", 2, null, "pi")));
		assertFalse(ShowAskUi.follow(), "off by default");
		assertEquals("Open", new ShowAskActions.OpenPlace(null, new ShowAsk.Place("/p/a.ts", 1, null, "pi"))
				.getTemplatePresentation().getText());
	}
}
