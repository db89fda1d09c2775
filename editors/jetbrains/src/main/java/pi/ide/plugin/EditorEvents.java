package pi.ide.plugin;

import com.intellij.openapi.editor.Document;
import com.intellij.openapi.editor.Editor;
import com.intellij.openapi.editor.event.CaretEvent;
import com.intellij.openapi.editor.event.CaretListener;
import com.intellij.openapi.editor.event.DocumentEvent;
import com.intellij.openapi.editor.event.DocumentListener;
import com.intellij.openapi.editor.event.EditorFactoryEvent;
import com.intellij.openapi.editor.event.EditorFactoryListener;
import com.intellij.openapi.editor.event.SelectionEvent;
import com.intellij.openapi.editor.event.SelectionListener;
import java.awt.event.FocusAdapter;
import java.awt.event.FocusEvent;

/**
 * The platform's editor events, each turned into one call on a {@link Sink}: registered on the application's
 * EditorEventMulticaster and EditorFactory with the service as parent Disposable, so they go away with it.
 * Runs on the event thread: does nothing but hand over which editor or document it was; a failing sink never
 * throws into the platform.
 */
final class EditorEvents implements CaretListener, SelectionListener, DocumentListener, EditorFactoryListener {
	interface Sink {
		/** An editor's caret, selection or focus changed; urgent: write at once (a switch, a selection). */
		void editorTouched(Editor editor, boolean urgent);

		/** A document's text changed (in any editor showing it, or none). */
		void documentChanged(Document document);

		void editorReleased(Editor editor);

		/** A failure inside a handler: reported once by the sink, never thrown into the platform. */
		void failed(String where, Throwable error);
	}

	private final Sink sink;

	EditorEvents(Sink sink) {
		this.sink = sink;
	}

	public void caretPositionChanged(CaretEvent e) {
		try {
			sink.editorTouched(e.getEditor(), false);
		} catch (RuntimeException error) {
			sink.failed("caret", error);
		}
	}

	public void selectionChanged(SelectionEvent e) {
		try {
			sink.editorTouched(e.getEditor(), true);
		} catch (RuntimeException error) {
			sink.failed("selection", error);
		}
	}

	public void documentChanged(DocumentEvent e) {
		try {
			sink.documentChanged(e.getDocument());
		} catch (RuntimeException error) {
			sink.failed("document", error);
		}
	}

	public void editorCreated(EditorFactoryEvent e) {
		final Editor editor = e.getEditor();
		// Switching tabs or windows moves the keyboard focus: that is the "buffer switch" of the protocol.
		editor.getContentComponent().addFocusListener(new FocusAdapter() {
			@Override
			public void focusGained(FocusEvent event) {
				try {
					if (!editor.isDisposed()) sink.editorTouched(editor, true);
				} catch (RuntimeException error) {
					sink.failed("focus", error);
				}
			}
		});
	}

	public void editorReleased(EditorFactoryEvent e) {
		try {
			sink.editorReleased(e.getEditor());
		} catch (RuntimeException error) {
			sink.failed("editor closed", error);
		}
	}
}
