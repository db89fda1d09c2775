package pi.ide.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * What the IDE knows at one moment, as plain data: the platform shell fills these on the EDT (reading editor
 * state only) and the core turns them into the state file elsewhere.
 */
public final class Snapshot {
	private Snapshot() {}

	/** The IDE process: one per state file. */
	public static final class Ide {
		public final long pid;
		/** The IDE's own name: "IntelliJ IDEA", "PyCharm", "WebStorm", ... */
		public final String product;
		public final String version;

		/** v0.5: the pid namespace {@code pid} is in ({@link PiIdentity#ownNamespace}); null: left out. */
		public final String pidNs;

		public Ide(long pid, String product, String version) {
			this(pid, null, product, version);
		}

		public Ide(long pid, String pidNs, String product, String version) {
			this.pid = pid;
			this.pidNs = pidNs;
			this.product = product;
			this.version = version;
		}
	}

	/** The active editor of one project window. */
	public static final class Document {
		/** Identity for the selection clock (the window and the file's URL). */
		public final String key;
		/** Absolute path, or null for a buffer that is not a local file (a scratch, a diff, a remote file). */
		public final String file;
		public final String name;
		public final Text.Lines lines;
		/** null when the editor has no caret to report. */
		public final Text.HostPosition cursor;
		/** The primary selection (anchor, head); null when nothing is selected. */
		public final Text.HostPosition anchor;
		public final Text.HostPosition head;
		public final boolean modified;
		/** v0.3: the document's modification stamp, or null. */
		public final Long version;
		/** v0.3: the diagnostics report ({@link Diagnostics#summarize}), or null when none can be dated. */
		public final Map<String, Object> diagnostics;

		public Document(String key, String file, String name, Text.Lines lines, Text.HostPosition cursor,
				Text.HostPosition anchor, Text.HostPosition head, boolean modified, Long version,
				Map<String, Object> diagnostics) {
			this.key = key;
			this.file = file;
			this.name = name;
			this.lines = lines;
			this.cursor = cursor;
			this.anchor = anchor;
			this.head = head;
			this.modified = modified;
			this.version = version;
			this.diagnostics = diagnostics;
		}
	}

	/** One project window. */
	public static final class Window {
		/** The project's base path: the window's cwd and its identity (one window per project in an IDE). */
		public final String projectPath;
		/** null when no editor is active in the window. */
		public final Document document;
		/** A database table view ({@link DatabaseSummary#build}), or null. */
		public final Map<String, Object> database;

		public Window(String projectPath, Document document, Map<String, Object> database) {
			this.projectPath = projectPath;
			this.document = document;
			this.database = database;
		}
	}

	/** Everything one state file describes. */
	public static final class State {
		public final Ide ide;
		/** Open project windows, the one the user touched last first. */
		public final List<Window> windows;
		/** v0.3 reports (newest last), and the last pi message handled (null: none). */
		public final List<Map<String, Object>> files;
		public final Map<String, Object> pi;
		/** v0.4 approval answers, newest last; null: this client does not answer approvals (no field written). */
		public final List<Map<String, Object>> decisions;
		/** v0.5: the serial of the {@code <pid>.buffers.json} written for this state ({@link UnsavedBuffers}); null: none. */
		public final Long buffersSerial;

		public State(Ide ide, List<Window> windows, List<Map<String, Object>> files, Map<String, Object> pi) {
			this(ide, windows, files, pi, null);
		}

		public State(Ide ide, List<Window> windows, List<Map<String, Object>> files, Map<String, Object> pi,
				List<Map<String, Object>> decisions) {
			this(ide, windows, files, pi, decisions, null);
		}

		public State(Ide ide, List<Window> windows, List<Map<String, Object>> files, Map<String, Object> pi,
				List<Map<String, Object>> decisions, Long buffersSerial) {
			this.ide = ide;
			this.windows = Collections.unmodifiableList(new ArrayList<>(windows));
			this.files = files;
			this.pi = pi;
			this.decisions = decisions;
			this.buffersSerial = buffersSerial;
		}
	}
}
