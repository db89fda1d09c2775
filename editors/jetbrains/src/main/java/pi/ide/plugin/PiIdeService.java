package pi.ide.plugin;

import com.intellij.openapi.Disposable;
import com.intellij.openapi.application.Application;
import com.intellij.openapi.application.ApplicationInfo;
import com.intellij.openapi.application.ApplicationManager;
import com.intellij.openapi.application.ApplicationNamesInfo;
import com.intellij.openapi.application.ModalityState;
import com.intellij.openapi.diagnostic.Logger;
import com.intellij.openapi.editor.Document;
import com.intellij.openapi.editor.Editor;
import com.intellij.openapi.editor.EditorFactory;
import com.intellij.openapi.editor.EditorKind;
import com.intellij.openapi.editor.event.EditorEventMulticaster;
import com.intellij.openapi.fileEditor.FileDocumentManager;
import com.intellij.openapi.project.Project;
import com.intellij.openapi.project.ProjectManager;
import com.intellij.openapi.util.Computable;
import com.intellij.openapi.vfs.StandardFileSystems;
import com.intellij.openapi.vfs.VirtualFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import pi.ide.core.Approval;
import pi.ide.core.ApprovalAgainst;
import pi.ide.core.Approvals;
import pi.ide.core.Client;
import pi.ide.core.FrozenLines;
import pi.ide.core.Inbox;
import pi.ide.core.PathFacts;
import pi.ide.core.PiIdentity;
import pi.ide.core.PiMessage;
import pi.ide.core.Reload;
import pi.ide.core.Send;
import pi.ide.core.ShowAsk;
import pi.ide.core.Snapshot;
import pi.ide.core.StateDir;
import pi.ide.core.UnsavedBuffers;

/**
 * The plugin's one application service: the IDE's events in, {@link Client} (the core's writer and pi's
 * messages) out. Listeners are registered with this service as their parent Disposable, so they and the state
 * file go when the IDE exits (the platform disposes services on exit); a project window's state goes when its
 * project is disposed (see {@link PiIdeStartup}). On the event thread it only reads editor state; building,
 * writing and reading pi's messages run on the client's own thread.
 */
public final class PiIdeService implements Disposable, EditorEvents.Sink, Client.Listener, Inbox.Host {
	private static final Logger LOG = Logger.getInstance(PiIdeService.class);

	private final Windows windows = new Windows();
	private final Snapshot.Ide ide;
	private final Client client;
	/** v0.5 send to pi: the "Send to pi" actions' desk (SendActions). */
	private final Send.Desk sends;
	/** What each open document's path was when read (the reload rule's record). */
	private final Map<String, PathFacts> readFrom = new HashMap<>();
	private boolean listening;
	/** The notification shown for each pending approval request, by request id (touched on the EDT only). */
	private final Map<String, Object> notices = new ConcurrentHashMap<>();

	public PiIdeService() {
		ApplicationInfo info = ApplicationInfo.getInstance();
		ide = new Snapshot.Ide(StateDir.ownPid(), PiIdentity.ownNamespace(), ApplicationNamesInfo.getInstance().getFullProductName(),
				info.getFullVersion());
		client = new Client(ide.pid, StateDir.resolve(System.getenv()), StateDir.ownUid(), this, System::currentTimeMillis);
		sends = new Send.Desk(ide.pid, StateDir.resolve(System.getenv()), StateDir.ownUid());
	}

	/** A project window opened: start listening (once), track the window until its project is disposed. */
	void projectOpened(Project project) {
		String path = project.getBasePath();
		if (path == null) return;
		synchronized (this) {
			if (!listening) {
				listening = true;
				EditorEvents events = new EditorEvents(this);
				EditorEventMulticaster multicaster = EditorFactory.getInstance().getEventMulticaster();
				multicaster.addCaretListener(events, this);
				multicaster.addSelectionListener(events, this);
				multicaster.addDocumentListener(events, this);
				EditorFactory.getInstance().addEditorFactoryListener(events, this);
				client.listen();
			}
		}
		// On IDE exit this service's dispose removes the file first; a project disposed after that writes nothing.
		windows.openUntilDisposed(path, project, () -> publish(true));
		publish(true);
	}

	private void publish(boolean urgent) {
		client.update(new Snapshot.State(ide, windows.snapshot(), null, null), urgent);
	}

	private static String keyOf(String projectPath, Document document, String path) {
		return projectPath + "\n" + (path != null ? path : "doc@" + System.identityHashCode(document));
	}

	// ---- EditorEvents.Sink: on the event thread, reading editor state only ----

	public void editorTouched(Editor editor, boolean urgent) {
		Project project = editor.getProject();
		if (project == null || project.isDisposed() || project.getBasePath() == null) return;
		if (editor.getEditorKind() != EditorKind.MAIN_EDITOR) return;
		Document document = editor.getDocument();
		String path = DocumentCapture.IDE.pathOf(document);
		if (path != null) recordReadFrom(path);
		int caret = editor.getCaretModel().getOffset();
		int start = editor.getSelectionModel().getSelectionStart();
		int end = editor.getSelectionModel().getSelectionEnd();
		windows.touch(project.getBasePath(), DocumentCapture.capture(DocumentCapture.IDE,
				keyOf(project.getBasePath(), document, path), "[No Name]", document, caret, start, end));
		publish(urgent);
	}

	private synchronized void recordReadFrom(String path) {
		if (!readFrom.containsKey(path)) readFrom.put(path, PathFacts.of(Paths.get(path)));
	}

	public void documentChanged(Document document) {
		// The caret event that follows a typed character carries the new state; a change without one (an
		// undo in another window, a reload) is picked up by the window's next event or by pi's next read.
		for (Editor editor : EditorFactory.getInstance().getEditors(document)) {
			if (editor.getContentComponent().hasFocus()) {
				editorTouched(editor, false);
				return;
			}
		}
		// v0.5: a document changed in the background still changes the unsaved buffers a connected pi reads.
		if (client.piConnected()) publish(false);
	}

	public void editorReleased(Editor editor) {
		Project project = editor.getProject();
		if (project == null || project.getBasePath() == null) return;
		Document document = editor.getDocument();
		windows.forget(project.getBasePath(), keyOf(project.getBasePath(), document, DocumentCapture.IDE.pathOf(document)));
		publish(true);
	}

	public void failed(String where, Throwable error) {
		warn("pi-ide-context: " + where + " event: " + error);
	}

	// ---- Client.Listener ----

	public void warn(String message) {
		LOG.warn(message);
	}

	public void onMessage(PiMessage message) {
		client.handle(message, this);
		String answered = sends.answered(message);
		if (answered != null) {
			ApplicationManager.getApplication().invokeLater(() -> tell(projectOf(""), "pi: " + answered), ModalityState.any());
		}
	}

	/**
	 * A "Send to pi" action (on the event thread): the item (the core's rules), the pi (a list when several name this
	 * IDE, asked once), the words (a dialog: Swing's, as the platform's dialogs are not in the 183 jars), written.
	 */
	void send(Project project, String form, String mode, String path, String text, pi.ide.core.Text.HostPosition caret,
			pi.ide.core.Text.HostPosition anchor, pi.ide.core.Text.HostPosition head) {
		Send.Item item = Send.item(form, path, pi.ide.core.Text.linesOf(text), caret, anchor, head, null, null);
		if (item.item == null) {
			tell(project, "pi: " + item.notice);
			return;
		}
		String[] why = new String[1];
		PiMessage pi = sends.pick(Send.naming(client.livePis(), ide.pid), choices -> {
			String[] labels = new String[choices.size()];
			for (int i = 0; i < labels.length; i++) labels[i] = Send.describe(choices.get(i));
			Object picked = javax.swing.JOptionPane.showInputDialog(null, "Send to which pi? (remembered)", "pi",
					javax.swing.JOptionPane.QUESTION_MESSAGE, null, labels, labels[0]);
			for (int i = 0; i < labels.length; i++) if (labels[i].equals(picked)) return choices.get(i);
			return null;
		}, why);
		if (pi == null) {
			tell(project, "pi: " + why[0]);
			return;
		}
		String prompt = javax.swing.JOptionPane.showInputDialog(null,
				"now".equals(mode) ? "Send to pi now: your words (optional)" : "Send to pi's input: your words (optional)");
		if (prompt == null) {
			tell(project, "pi: nothing sent");
			return;
		}
		String problem = sends.write(pi, item.item, mode, prompt, System.currentTimeMillis() / 1000.0);
		if (problem != null) tell(project, "pi: " + problem);
	}

	/**
	 * v0.5: FileDocumentManager's unsaved documents of local files, the one the last touched window shows first;
	 * read in a read action on the client's thread (only while a pi is connected).
	 */
	public List<UnsavedBuffers.Dirty> unsavedBuffers() {
		List<Snapshot.Window> shown = windows.snapshot();
		final String first = shown.isEmpty() || shown.get(0).document == null ? null : shown.get(0).document.file;
		return ApplicationManager.getApplication().runReadAction((Computable<List<UnsavedBuffers.Dirty>>) () -> {
			List<UnsavedBuffers.Dirty> out = new ArrayList<>();
			for (Document document : FileDocumentManager.getInstance().getUnsavedDocuments()) {
				String path = DocumentCapture.IDE.pathOf(document);
				if (path == null) continue;
				UnsavedBuffers.Dirty dirty = new UnsavedBuffers.Dirty(path, document.getModificationStamp(),
						new FrozenLines(document.getImmutableCharSequence()));
				if (path.equals(first)) out.add(0, dirty);
				else out.add(dirty);
			}
			return out;
		});
	}

	// ---- v0.5 show and ask: answered on the client's thread; documents read in a read action, UI on the EDT ----

	private final ShowAsk.Host showAskHost = new ShowAsk.Host() {
		public List<ShowAsk.OpenDocument> documents() {
			List<Snapshot.Window> shown = windows.snapshot();
			final String active = shown.isEmpty() || shown.get(0).document == null ? null : shown.get(0).document.file;
			return ApplicationManager.getApplication().runReadAction((Computable<List<ShowAsk.OpenDocument>>) () -> {
				List<Document> open = new ArrayList<>();
				for (Editor editor : EditorFactory.getInstance().getAllEditors()) {
					if (editor.getEditorKind() == EditorKind.MAIN_EDITOR) open.add(editor.getDocument());
				}
				return ShowAskUi.documents(open, DocumentCapture.IDE, active);
			});
		}

		public boolean follow() {
			return ShowAskUi.follow();
		}

		public boolean open(ShowAsk.Place place) {
			ApplicationManager.getApplication().invokeLater(() -> ShowAskUi.open(projectOf(place.file), place),
					ModalityState.any());
			return true;
		}

		public void shown(ShowAsk.Place place, String notice) {
			ApplicationManager.getApplication().invokeLater(() -> {
				Project project = projectOf(place.file);
				ApprovalUi.notify(project, "pi", notice, new ShowAskActions.OpenPlace(project, place));
			}, ModalityState.any());
		}

		public String shownPath(String file) {
			Project project = projectOf(file);
			return Approval.shownPath(file, project == null ? null : project.getBasePath());
		}
	};

	public ShowAsk.Host showAsk() {
		return showAskHost;
	}

	/** "pi: pi's places" (on the event thread): the list, newest last; the one picked is opened. */
	void pickPlace(Project project) {
		List<ShowAsk.Place> places = client.asks().places();
		if (places.isEmpty()) {
			tell(project, "pi: pi has shown no place yet");
			return;
		}
		String[] labels = new String[places.size()];
		for (int i = 0; i < labels.length; i++) {
			ShowAsk.Place p = places.get(i);
			String lines = p.endLine != null && p.endLine != p.line ? p.line + "-" + p.endLine : Long.toString(p.line);
			labels[i] = Approval.shownPath(p.file, project == null ? null : project.getBasePath()) + ":" + lines + "  " + p.text;
		}
		Object picked = javax.swing.JOptionPane.showInputDialog(null, "Open one of pi's places", "pi's places",
				javax.swing.JOptionPane.PLAIN_MESSAGE, null, labels, labels[labels.length - 1]);
		for (int i = 0; i < labels.length; i++) {
			if (labels[i].equals(picked)) ShowAskUi.open(project != null ? project : projectOf(places.get(i).file), places.get(i));
		}
	}

	// ---- v0.4 approval: told on the client's thread, shown and answered on the event thread ----

	public void approvalAsked(Approval.Request r) {
		// Issue 26 item 6: against an unsaved document, read here on the client's thread (the document on the event
		// thread, the disk off it): the notice names the user's unsaved lines a hunk touches.
		ApprovalAgainst.View view = ApprovalAgainst.of(r, this);
		// Queued on the event thread, as the end of the request is: a notice is always shown before it expires.
		ApplicationManager.getApplication().invokeLater(() -> {
			Project project = projectOf(r.file);
			String shown = Approval.shownPath(r.file, project == null ? null : project.getBasePath());
			Object notice = ApprovalUi.notify(project, "pi waits for your approval", ApprovalAgainst.notice(r, shown, view)
					+ ". No answer within " + r.timeoutS + " s leaves the file unchanged.",
					new ApprovalActions.Accept(r.id), new ApprovalActions.Reject(r.id), new ApprovalActions.ShowChange(r.id));
			if (notice != null) notices.put(r.id, notice);
		}, ModalityState.any());
	}

	public void approvalEnded(Approval.Request r, String why) {
		ApplicationManager.getApplication().invokeLater(() -> ApprovalUi.expire(notices.remove(r.id)), ModalityState.any());
	}

	/** An action's answer (on the event thread): recorded for pi, or only said when the request is gone. */
	void answerApproval(String requestId, String decision, Project project) {
		Approvals.Answer answer = client.decide(requestId, decision, project == null ? null : project.getBasePath());
		tell(project, answer.said);
	}

	/**
	 * "Show change" (on the event thread): the platform's diff of the document's text as it is (or the file's,
	 * when no document is open for it) against pi's proposal applied to that text in memory; a document with unsaved
	 * changes beside itself with pi's hunks that touch none of them placed (issue 26 item 6, ApprovalAgainst), the
	 * touched lines named in the title. Nothing is written.
	 */
	void showProposal(String requestId, Project project) {
		Approvals approvals = client.approvals();
		Approval.Request r = requestId != null ? approvals.find(requestId)
				: approvals.seen() != null ? approvals.seen() : approvals.current();
		if (r == null) {
			tell(project, "pi-ide-context: pi is not waiting for your approval of that change (any more)");
			return;
		}
		approvals.shown(r);
		String shown = Approval.shownPath(r.file, project == null ? null : project.getBasePath());
		Document document = cachedDocument(r.file);
		Application app = ApplicationManager.getApplication();
		if (document != null && FileDocumentManager.getInstance().isDocumentUnsaved(document)) {
			// The disk is read off the event thread (the document on it, through the host), then shown on it.
			app.executeOnPooledThread(() -> {
				ApprovalAgainst.View view = ApprovalAgainst.of(r, this);
				app.invokeLater(() -> {
					Document now = cachedDocument(r.file);
					if (view == null || now == null) {
						showProposal(project, r, shown, now == null ? null : now.getText());
						return;
					}
					String touch = ApprovalAgainst.touchPhrase(view.places, true);
					if (!ApprovalUi.showDiff(project, Approval.describe(r, shown) + (touch == null ? "" : "; " + touch),
							Paths.get(r.file).getFileName().toString(), now.getText(), view.text, "Your unsaved document",
							"pi's proposal in your unsaved document")) {
						tell(project, "pi-ide-context: this IDE has no diff window for pi's change to " + shown
								+ "; Accept and Reject still answer");
					}
				}, ModalityState.any());
			});
			return;
		}
		if (document != null) {
			showProposal(project, r, shown, document.getText());
			return;
		}
		// No document: the file is read off the event thread, then shown on it.
		app.executeOnPooledThread(() -> {
			String text = PathFacts.readRegular(r.file);
			app.invokeLater(() -> showProposal(project, r, shown, text), ModalityState.any());
		});
	}

	private static void showProposal(Project project, Approval.Request r, String shown, String current) {
		String proposal = current == null ? null : Approval.proposal(current, r);
		if (current == null) {
			tell(project, "pi-ide-context: cannot show pi's change to " + shown + ": it is not a regular file");
		} else if (proposal == null) {
			tell(project, "pi-ide-context: cannot show pi's change to " + shown + ": " + Approval.whyNoProposal(r));
		} else if (!ApprovalUi.showDiff(project, Approval.describe(r, shown), Paths.get(r.file).getFileName().toString(),
				current, proposal)) {
			tell(project, "pi-ide-context: this IDE has no diff window for pi's change to " + shown
					+ "; Accept and Reject still answer");
		}
	}

	private static void tell(Project project, String line) {
		ApprovalUi.notify(project, "pi-ide-context", line);
	}

	/** The open project holding {@code file}, else any open one (a notification needs a frame), else null. */
	private static Project projectOf(String file) {
		Project any = null;
		for (Project p : ProjectManager.getInstance().getOpenProjects()) {
			if (p.isDisposed()) continue;
			String base = p.getBasePath();
			if (base != null && file.startsWith(base.endsWith("/") ? base : base + "/")) return p;
			if (any == null) any = p;
		}
		return any;
	}

	// ---- Inbox.Host: on the client's thread; document state is read and changed on the event thread ----

	private static <T> T onEventThread(java.util.function.Supplier<T> read) {
		AtomicReference<T> result = new AtomicReference<>();
		Application app = ApplicationManager.getApplication();
		app.invokeAndWait(() -> result.set(read.get()), ModalityState.defaultModalityState());
		return result.get();
	}

	private static Document cachedDocument(String file) {
		VirtualFile vfile = StandardFileSystems.local().findFileByPath(file);
		return vfile == null ? null : FileDocumentManager.getInstance().getCachedDocument(vfile);
	}

	public Reload.Facts facts(String file) {
		// Document state on the event thread; the disk (lstat, realpath, the new content) here, off it.
		final Object[] doc = onEventThread(() -> {
			Document d = cachedDocument(file);
			return d == null ? null : new Object[] {FileDocumentManager.getInstance().isDocumentUnsaved(d), d.getText()};
		});
		if (doc == null) {
			return new Reload.Facts(false, false, Reload.PathKind.UNKNOWN, null, Reload.PathKind.UNKNOWN, null, false);
		}
		boolean modified = (Boolean) doc[0];
		PathFacts recorded;
		synchronized (this) {
			recorded = readFrom.get(file);
		}
		PathFacts now = PathFacts.of(Paths.get(file));
		boolean same = false;
		if (!modified && now.realPath != null) {
			try {
				// A Document holds \n line ends; compare with the disk's text normalised the same way.
				String disk = new String(Files.readAllBytes(Paths.get(now.realPath)), StandardCharsets.UTF_8);
				same = disk.replace("\r\n", "\n").replace('\r', '\n').equals(doc[1]);
			} catch (java.io.IOException | RuntimeException e) {
				same = false;
			}
		}
		return new Reload.Facts(true, modified, recorded == null ? Reload.PathKind.UNKNOWN : recorded.kind,
				recorded == null ? null : recorded.realPath, now.kind, now.realPath, same);
	}

	public void reload(String file) {
		onEventThread(() -> {
			Document d = cachedDocument(file);
			// Decided off the event thread: check again here, where nothing can change in between.
			if (d == null || FileDocumentManager.getInstance().isDocumentUnsaved(d)) return null;
			VirtualFile vfile = FileDocumentManager.getInstance().getFile(d);
			if (vfile != null) vfile.refresh(false, false);
			FileDocumentManager.getInstance().reloadFromDisk(d);
			return null;
		});
		synchronized (this) {
			readFrom.put(file, PathFacts.of(Paths.get(file)));
		}
	}

	public Long version(String file) {
		return onEventThread(() -> {
			Document d = cachedDocument(file);
			return d == null ? null : d.getModificationStamp();
		});
	}

	public boolean diagnosticsExpected(String file) {
		// Diagnostics are not bound to the IDE's highlighting in this build (editors/jetbrains/README.md).
		return false;
	}

	public Map<String, Object> diagnostics(String file) {
		return null;
	}

	public void notifyModified(String file, String notice) {
		// The platform's notification and diff APIs are not in the IntelliJ 183 jars this plugin is compiled
		// against (editors/jetbrains/README.md): the notice goes to idea.log, once per change.
		LOG.warn(notice);
	}

	public String documentText(String file) {
		return onEventThread(() -> {
			Document d = cachedDocument(file);
			return d == null || !FileDocumentManager.getInstance().isDocumentUnsaved(d) ? null : d.getText();
		});
	}

	public boolean applyMerge(String file, String text, List<pi.ide.core.Merge.TextEdit> edits) {
		Boolean done = onEventThread(() -> {
			Document d = cachedDocument(file);
			// Decided off the event thread: the document must still be unsaved and hold the text merged into.
			if (d == null || !FileDocumentManager.getInstance().isDocumentUnsaved(d)) return false;
			return MergeEdit.apply(projectOf(file), d, text, edits);
		});
		return Boolean.TRUE.equals(done);
	}

	@Override
	public void dispose() {
		client.dispose();
		sends.dispose();
	}
}
