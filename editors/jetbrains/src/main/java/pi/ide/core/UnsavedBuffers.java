package pi.ide.core;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Protocol v0.5 (PROTOCOL.md, "v0.5: the editor's unsaved buffers"): the texts of the IDE's documents with unsaved
 * changes go to {@code <pid>.buffers.json} beside the state file, so that pi's {@code read} of such a file returns
 * what the user sees. The {@link Client} calls {@link #prepare} on its own write, never per keystroke, and only while
 * a pi is connected (the host is not asked for documents otherwise); the file is written again only when a
 * document's version or the set of documents changed, or it went, always before the state file that names its
 * serial, and removed once the state names none. The same file rules as the state file ({@link StateDir}). The
 * TypeScript twin: editors/shared/unsaved-buffers.ts.
 */
public final class UnsavedBuffers {
	/** PROTOCOL.md, Limits: the texts take at most this many bytes once JSON-encoded, in all. */
	public static final long MAX_TEXT_BYTES = 2 * 1024 * 1024;
	/** At most this many documents are listed. */
	public static final int MAX_BUFFERS = 32;

	/** A document with unsaved changes. */
	public static final class Dirty {
		/** Absolute path of its file. */
		public final String file;
		/** Its version, the state file's {@code active_buffer.version}. */
		public final long version;
		public final Text.Lines lines;

		public Dirty(String file, long version, Text.Lines lines) {
			this.file = file;
			this.version = version;
			this.lines = lines;
		}
	}

	/** What {@link #prepare} did: the serial the state names (null: none), or the problem (then none is named). */
	public static final class Prepared {
		public final Long serial;
		public final String problem;

		Prepared(Long serial, String problem) {
			this.serial = serial;
			this.problem = problem;
		}
	}

	private long serial;
	private String key;
	private boolean written;

	/** {@code <pid>.buffers.json}. */
	public static String fileName(long pid) {
		return pid + ".buffers.json";
	}

	/**
	 * The file's text for {@code documents} (the first {@link #MAX_BUFFERS}, the active one first). Each text is
	 * JSON-encoded once: its encoded size decides whether it fits in what is left of {@link #MAX_TEXT_BYTES} (one
	 * that does not is listed {@code too_large} without text). A last empty line (a final newline) is no line.
	 */
	public static String encode(long pid, long serial, List<Dirty> documents, double now) {
		long budget = MAX_TEXT_BYTES;
		StringBuilder out = new StringBuilder();
		out.append("{\"protocol\":\"0.5\",\"kind\":\"editor-buffers\",\"pid\":").append(pid)
				.append(",\"serial\":").append(serial)
				.append(",\"timestamp\":").append(String.format(Locale.ROOT, "%.3f", now))
				.append(",\"buffers\":[");
		int n = 0;
		for (Dirty d : documents) {
			if (n == MAX_BUFFERS) break;
			if (n++ > 0) out.append(',');
			int total = Text.countLines(d.lines);
			StringBuilder text = new StringBuilder();
			for (int i = 0; i < total; i++) {
				if (i > 0) text.append('\n');
				text.append(d.lines.text(i));
			}
			out.append("{\"file\":");
			Json.writeString(out, d.file);
			out.append(",\"version\":").append(d.version).append(",\"lines_total\":").append(total).append(',');
			long bytes = Json.stringBytes(text) + 2;
			if (bytes > budget) {
				out.append("\"note\":\"too_large\"}");
			} else {
				budget -= bytes;
				out.append("\"text\":");
				Json.writeString(out, text.toString());
				out.append('}');
			}
		}
		return out.append("]}").toString();
	}

	/** What decides whether the file is written again: the documents and their versions. */
	static String keyOf(List<Dirty> documents) {
		StringBuilder k = new StringBuilder();
		int n = 0;
		for (Dirty d : documents) {
			if (n++ == MAX_BUFFERS) break;
			k.append(d.file).append('\0').append(d.version).append('\n');
		}
		return k.toString();
	}

	/**
	 * Before the state file's write: write {@code <dir>/<pid>.buffers.json} for {@code documents} when due (null or
	 * empty: none is named).
	 */
	public synchronized Prepared prepare(Path dir, long pid, long uid, List<Dirty> documents, double now) {
		if (documents == null || documents.isEmpty()) return new Prepared(null, null);
		String k = keyOf(documents);
		Path path = dir.resolve(fileName(pid));
		// Unchanged and still there (it goes with the state dir when someone removes that): named again as it is.
		if (written && k.equals(key) && Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS)) {
			return new Prepared(serial, null);
		}
		long next = serial + 1;
		StateDir.Result result = StateDir.write(dir, fileName(pid),
				encode(pid, next, documents, now).getBytes(StandardCharsets.UTF_8), uid);
		if (!result.ok()) return new Prepared(null, result.message);
		serial = next;
		key = k;
		written = true;
		return new Prepared(serial, null);
	}

	/** Remove the file once no state names it; the problem, or null. */
	public synchronized String remove(Path dir, long pid, long uid) {
		if (!written) return null;
		StateDir.Result result = StateDir.remove(dir, fileName(pid), uid);
		if (!result.ok()) return result.message;
		written = false;
		key = null;
		return null;
	}
}
