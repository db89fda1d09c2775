package pi.ide.plugin;

import com.intellij.openapi.editor.Document;
import com.intellij.openapi.fileEditor.FileDocumentManager;
import com.intellij.openapi.vfs.VirtualFile;
import pi.ide.core.FrozenLines;
import pi.ide.core.Snapshot;
import pi.ide.core.Text;

/**
 * The only reading of editor state the plugin does on the event thread: a Document and the caret's and
 * selection's offsets become a {@link Snapshot.Document} in O(log n) (two line lookups and an immutable text
 * reference); everything that scans the text happens later, on the client's writer thread.
 */
final class DocumentCapture {
	private DocumentCapture() {}

	/** Where a document lives and whether it has unsaved changes (the IDE's FileDocumentManager, or a test's). */
	interface Files {
		/** The local path of the document's file, or null (a scratch, a diff, a remote or in-memory file). */
		String pathOf(Document document);

		boolean isUnsaved(Document document);
	}

	/** The IDE's view of documents. */
	static final Files IDE = new Files() {
		public String pathOf(Document document) {
			VirtualFile file = FileDocumentManager.getInstance().getFile(document);
			return file != null && file.isInLocalFileSystem() ? file.getPath() : null;
		}

		public boolean isUnsaved(Document document) {
			return FileDocumentManager.getInstance().isDocumentUnsaved(document);
		}
	};

	static Text.HostPosition position(Document document, int offset) {
		int at = Math.max(0, Math.min(offset, document.getTextLength()));
		int line = document.getLineNumber(at);
		return new Text.HostPosition(line, at - document.getLineStartOffset(line));
	}

	/**
	 * @param key identity for the selection clock (the window and the document)
	 * @param name shown for a document without a path (the editor's file name, or "[No Name]")
	 * @param selectionStart selectionEnd the primary selection's offsets; equal: nothing selected
	 */
	static Snapshot.Document capture(Files files, String key, String name, Document document, int caretOffset,
			int selectionStart, int selectionEnd) {
		String path = files.pathOf(document);
		boolean selected = selectionStart != selectionEnd;
		String shown = path != null ? path.substring(path.lastIndexOf('/') + 1) : name;
		return new Snapshot.Document(key, path, shown, new FrozenLines(document.getImmutableCharSequence()),
				position(document, caretOffset), selected ? position(document, selectionStart) : null,
				selected ? position(document, selectionEnd) : null, files.isUnsaved(document),
				document.getModificationStamp(), null);
	}
}
