package pi.ide.plugin;

import com.intellij.ide.util.PropertiesComponent;
import com.intellij.openapi.diagnostic.Logger;
import com.intellij.openapi.editor.Document;
import com.intellij.openapi.project.Project;
import com.intellij.openapi.vfs.StandardFileSystems;
import com.intellij.openapi.vfs.VirtualFile;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import pi.ide.core.FrozenLines;
import pi.ide.core.ShowAsk;
import pi.ide.core.Text;

/**
 * v0.5 show and ask in the IDE (the core's rules: {@link ShowAsk}). An ask is answered from the documents of the open
 * editors ({@link #documents}: files only, each once, the one the last touched window shows first, unsaved changes
 * as {@code FileDocumentManager} says, the modification stamp as version; no diagnostics, as the plugin reads no
 * highlighting: null, "none reported"). A show goes to pi's places ({@link ShowAsk.Responder#places}, listed by the
 * action "pi: pi's places") with one notification ("pi shows src/b.ts:2-3: note", button Open), and is opened only
 * with the follow setting on ({@link #FOLLOW}, the action "pi: Open the places pi shows (on/off)"; off by default).
 *
 * <p>Opening a place uses {@code OpenFileDescriptor}, which every IDE of build 183 and later has but Debian's 183
 * jars lack, so it is bound by name here, as {@link ApprovalUi} binds notifications; where it is missing the words
 * go to idea.log and nothing throws.
 */
final class ShowAskUi {
	private ShowAskUi() {}

	private static final Logger LOG = Logger.getInstance(ShowAskUi.class);
	/** The follow setting (application-wide, {@code PropertiesComponent}): open a shown place at once. */
	static final String FOLLOW = "pi.ide.showFollow";
	/** Bound by name: the platform's navigation to a file, line and column. */
	static final String OPEN_FILE_DESCRIPTOR = "com.intellij.openapi.fileEditor.OpenFileDescriptor";

	/** The follow setting; off when it cannot be read. */
	static boolean follow() {
		try {
			return PropertiesComponent.getInstance().getBoolean(FOLLOW, false);
		} catch (RuntimeException | LinkageError e) {
			return false;
		}
	}

	/** Turn the follow setting over; the new value. */
	static boolean toggleFollow() {
		boolean on = !follow();
		PropertiesComponent.getInstance().setValue(FOLLOW, on, false);
		return on;
	}

	/**
	 * The open editors' documents as an ask's answer lists them: files only ({@code files.pathOf}), each document
	 * once, {@code active} the path the user's last touched window shows.
	 */
	static List<ShowAsk.OpenDocument> documents(List<Document> open, DocumentCapture.Files files, String active) {
		List<ShowAsk.OpenDocument> out = new ArrayList<>();
		Map<Document, Boolean> seen = new IdentityHashMap<>();
		for (Document document : open) {
			if (seen.put(document, Boolean.TRUE) != null) continue;
			String path = files.pathOf(document);
			if (path == null) continue;
			out.add(new ShowAsk.OpenDocument(path, files.isUnsaved(document), document.getModificationStamp(),
					Text.countLines(new FrozenLines(document.getImmutableCharSequence())), path.equals(active), null));
		}
		return out;
	}

	/** Open the place in the project's editor, caret on its line (on the event thread). False when it cannot. */
	static boolean open(Project project, ShowAsk.Place place) {
		try {
			VirtualFile file = StandardFileSystems.local().refreshAndFindFileByPath(place.file);
			if (file == null || project == null) {
				LOG.warn("pi-ide-context: cannot open " + place.file + ": no such file or no open project");
				return false;
			}
			Class<?> descriptor = Class.forName(OPEN_FILE_DESCRIPTOR);
			Object d = descriptor.getConstructor(Project.class, VirtualFile.class, int.class, int.class)
					.newInstance(project, file, (int) Math.min(Integer.MAX_VALUE, place.line - 1), 0);
			descriptor.getMethod("navigate", boolean.class).invoke(d, true);
			return true;
		} catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
			LOG.warn("pi-ide-context: cannot open " + place.file + ":" + place.line + " (" + e + ")");
			return false;
		}
	}
}
