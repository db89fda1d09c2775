package pi.ide.plugin;

import com.intellij.openapi.actionSystem.AnAction;
import com.intellij.openapi.actionSystem.AnActionEvent;
import com.intellij.openapi.actionSystem.CommonDataKeys;
import com.intellij.openapi.components.ServiceManager;
import com.intellij.openapi.diagnostic.Logger;
import com.intellij.openapi.editor.Document;
import com.intellij.openapi.editor.Editor;
import com.intellij.openapi.project.DumbAware;
import pi.ide.core.Text;

/**
 * Send to pi (protocol v0.5): "pi: Send to pi" (a draft in pi's input) and "pi: Send to pi now" (a prompt when pi
 * is idle, a follow-up when busy) hand the pi connected to this IDE the selection (or the caret's line) of the
 * editor in focus; "pi: Send this file to pi" and "... now" the whole file. Registered in plugin.xml (Find Action,
 * or a keymap: none is set). The words are asked in a dialog; the rules are the core's (pi.ide.core.Send), run by
 * {@link PiIdeService#send}. DumbAware: they work while the IDE indexes.
 */
public final class SendActions {
	private SendActions() {}

	private static final Logger LOG = Logger.getInstance(SendActions.class);

	abstract static class Base extends AnAction implements DumbAware {
		private final String form;
		private final String mode;

		Base(String text, String form, String mode) {
			super(text);
			this.form = form;
			this.mode = mode;
		}

		@Override
		public void actionPerformed(AnActionEvent e) {
			try {
				Editor editor = e.getData(CommonDataKeys.EDITOR);
				Document document = editor == null ? null : editor.getDocument();
				String path = document == null ? null : DocumentCapture.IDE.pathOf(document);
				Text.HostPosition caret = null;
				Text.HostPosition anchor = null;
				Text.HostPosition head = null;
				if (editor != null) {
					caret = DocumentCapture.position(document, editor.getCaretModel().getOffset());
					if (editor.getSelectionModel().hasSelection()) {
						anchor = DocumentCapture.position(document, editor.getSelectionModel().getSelectionStart());
						head = DocumentCapture.position(document, editor.getSelectionModel().getSelectionEnd());
					}
				}
				ServiceManager.getService(PiIdeService.class).send(e.getProject(), form, mode, path,
						document == null ? "" : document.getText(), caret, anchor, head);
			} catch (RuntimeException | LinkageError error) {
				LOG.warn("pi-ide-context: " + error);
			}
		}
	}

	public static final class Draft extends Base {
		public Draft() {
			super("pi: Send to pi", "default", "draft");
		}
	}

	public static final class Now extends Base {
		public Now() {
			super("pi: Send to pi now", "default", "now");
		}
	}

	public static final class FileDraft extends Base {
		public FileDraft() {
			super("pi: Send this file to pi", "file", "draft");
		}
	}

	public static final class FileNow extends Base {
		public FileNow() {
			super("pi: Send this file to pi now", "file", "now");
		}
	}
}
