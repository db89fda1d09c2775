package pi.ide.core;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What to do about one file pi said it changed (PROTOCOL.md, "What an editor may and may not do with it"),
 * pure: the facts the shell gathered in, a status and the report out. The shell then only carries out the
 * decision (refresh an unmodified document from disk, notify once about a modified one) and never opens,
 * creates or deletes anything.
 */
public final class Reload {
	private Reload() {}

	/** What a path is on disk, as recorded when the document was read and as it is now. */
	public enum PathKind {
		/** No such file. */
		MISSING,
		REGULAR,
		/** A symlink whose real path is a regular file (the real path is compared separately). */
		LINK_TO_REGULAR,
		/** Anything else: a directory, a FIFO, a dangling or looping link. */
		OTHER,
		/** Not recorded (the document was loaded before the client started). */
		UNKNOWN
	}

	/** The facts about the document holding the file (null document: no loaded document has it). */
	public static final class Facts {
		public final boolean open;
		public final boolean modified;
		public final PathKind recorded;
		public final String recordedRealPath;
		public final PathKind now;
		public final String realPathNow;
		/** Is the disk content equal to the document's (only looked at for an unmodified, readable file)? */
		public final boolean sameContent;

		public Facts(boolean open, boolean modified, PathKind recorded, String recordedRealPath, PathKind now,
				String realPathNow, boolean sameContent) {
			this.open = open;
			this.modified = modified;
			this.recorded = recorded;
			this.recordedRealPath = recordedRealPath;
			this.now = now;
			this.realPathNow = realPathNow;
			this.sameContent = sameContent;
		}
	}

	/** reloaded, unchanged, modified, not-open, gone or refused. */
	public static String decide(Facts f) {
		if (!f.open) return "not-open";
		if (f.modified) return "modified";
		if (f.now == PathKind.MISSING) return "gone";
		if (!isStill(f)) return "refused";
		return f.sameContent ? "unchanged" : "reloaded";
	}

	/**
	 * The path is what it was when the document was read: a regular file then and now, or a symlink then and now
	 * that resolves to the same real path, a regular file. Without a record a symlink is not read.
	 */
	private static boolean isStill(Facts f) {
		if (f.now == PathKind.REGULAR) return f.recorded == PathKind.REGULAR || f.recorded == PathKind.UNKNOWN;
		if (f.now == PathKind.LINK_TO_REGULAR) {
			return f.recorded == PathKind.LINK_TO_REGULAR && f.recordedRealPath != null
					&& f.recordedRealPath.equals(f.realPathNow);
		}
		return false;
	}

	/** Does this status read the file into the document? */
	public static boolean reads(String status) {
		return "reloaded".equals(status);
	}

	/** The v0.3 files[] report. */
	public static Map<String, Object> report(String file, long seq, long piPid, String status, Long version,
			boolean modified, boolean diagnosticsExpected, Map<String, Object> diagnostics) {
		Map<String, Object> r = new LinkedHashMap<>();
		r.put("file", file);
		r.put("seq", seq);
		r.put("status", status);
		r.put("version", "not-open".equals(status) ? null : version);
		r.put("modified", modified);
		r.put("diagnostics_expected", diagnosticsExpected);
		r.put("diagnostics", diagnostics);
		r.put("pi_pid", piPid);
		return r;
	}

	/** The one notice for a document pi changed under unsaved edits (shown once per file and change). */
	public static String modifiedNotice(String file) {
		return "pi changed " + file + " on disk, but this editor has unsaved changes to it: not reloaded. "
				+ "Compare the two (Compare with pi's version), or use File | Reload from Disk to take pi's.";
	}
}
