package pi.ide.core;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Issue 26, pure: pi's change merged into a document with unsaved changes (PROTOCOL.md, "v0.5: pi's change merged
 * into an unsaved buffer"). A three-way merge of line ranges: the base is the file before pi's change(s), rebuilt
 * from the file on disk (its SHA-256 checked against the newest change's {@code sha256}) by taking pi's hunks back
 * out, newest change first; the user's changes are the line diff base -> document ({@link #diff}); pi's are its
 * hunks. A hunk of pi's that touches no change of the user's goes into the document at its place moved by the
 * user's line-count changes above it; the others are conflicts: the document keeps the user's text, and the
 * conflict names the merged document's lines and quotes them. The rule of editors/shared/merge.ts (the conformance
 * kit's merge cases and the seeded oracle, test/jetbrains/merge-random.test.ts, hold them together). The host
 * applies {@link #textEdits} as one undo step of its own and never saves.
 */
public final class Merge {
	private Merge() {}

	/** PROTOCOL.md: a report's conflicts, their lines and each line's UTF-8 bytes (src/protocol/limits.ts). */
	public static final int MAX_CONFLICTS = 20;
	public static final int MAX_CONFLICT_LINES = 20;
	public static final int MAX_CONFLICT_LINE_BYTES = 500;
	/** The hunks of one change's {@code merge} (MAX_REVIEW_HUNKS_PER_FILE). */
	public static final int MAX_HUNKS = 500;
	/** pi leaves {@code merge} out for a side over 1 MiB: a larger file on disk is not what its tool wrote. */
	public static final int MAX_FILE_BYTES = 1024 * 1024;
	/** The longest edit script the line diff looks for, and its work bound (src/protocol/line-diff.ts). */
	static final int MAX_DIFF_EDIT_LENGTH = 500;
	private static final int DIFF_WORK_BUDGET = 10_000_000;
	private static final Pattern SHA256 = Pattern.compile("[0-9a-fA-F]{64}");
	private static final long MAX_INT = 2147483647L;

	/** A change of lines: [oldStart, oldStart + oldText) replaced by newText; 1-based starts (the wire's). */
	public static final class Hunk {
		public final int oldStart;
		public final int newStart;
		public final List<String> oldText;
		public final List<String> newText;

		public Hunk(int oldStart, List<String> oldText, int newStart, List<String> newText) {
			this.oldStart = oldStart;
			this.newStart = newStart;
			this.oldText = oldText;
			this.newText = newText;
		}
	}

	/** A changed entry's {@code merge}, checked. */
	public static final class Info {
		public final String sha256;
		/** null: none. */
		public final Long prevSeq;
		public final List<Hunk> hunks;

		Info(String sha256, Long prevSeq, List<Hunk> hunks) {
			this.sha256 = sha256;
			this.prevSeq = prevSeq;
			this.hunks = hunks;
		}
	}

	/** One conflict of the report: the merged document's 1-based first line, how many lines, the user's text there. */
	public static final class Conflict {
		public final int line;
		public final int lines;
		public final List<String> text;

		Conflict(int line, int lines, List<String> text) {
			this.line = line;
			this.lines = lines;
			this.text = text;
		}

		/** "line N" or "lines N-M", as the notice and pi's tool result say it. */
		public String phrase() {
			return lines <= 1 ? "line " + line : "lines " + line + "-" + (line + lines - 1);
		}
	}

	/** An edit of the document's lines: [from, to) (0-based) replaced by lines. */
	public static final class LineEdit {
		public final int from;
		public final int to;
		public final List<String> lines;

		public LineEdit(int from, int to, List<String> lines) {
			this.from = from;
			this.to = to;
			this.lines = lines;
		}
	}

	/** An edit of the document's text: [start, end) (UTF-16 offsets) replaced by text. */
	public static final class TextEdit {
		public final int start;
		public final int end;
		public final String text;

		TextEdit(int start, int end, String text) {
			this.start = start;
			this.end = end;
			this.text = text;
		}
	}

	/**
	 * Where one hunk of pi's stands in the document's lines (0-based, [from, to)): a merged hunk's lines it replaces
	 * there; a conflicting one's span of the user's lines it touches, from the first to the last line of the hunk and
	 * of those changes (editors/shared/merge.ts HunkPlace; issue 26 item 6, approval against an unsaved document).
	 */
	public static final class Place {
		public final int from;
		public final int to;
		public final boolean touches;

		Place(int from, int to, boolean touches) {
			this.from = from;
			this.to = to;
			this.touches = touches;
		}
	}

	public static final class Plan {
		public final List<LineEdit> edits = new ArrayList<>();
		/** One per hunk of pi's, in order. */
		public final List<Place> places = new ArrayList<>();
		public int merged;
		/** The report's, at most MAX_CONFLICTS. */
		public final List<Conflict> conflicts = new ArrayList<>();
		public int conflictsTotal;
	}

	/** What a merge does, or why it cannot ({@code why} set, {@code plan} null). */
	public static final class Outcome {
		public final String why;
		/** "merged" or "conflict". */
		public final String status;
		public final int hunks;
		public final Plan plan;

		Outcome(String why, String status, int hunks, Plan plan) {
			this.why = why;
			this.status = status;
			this.hunks = hunks;
			this.plan = plan;
		}

		static Outcome no(String why) {
			return new Outcome(why, null, 0, null);
		}

		/** The report's {@code merge}: hunks, merged, conflicts. */
		public Map<String, Object> report() {
			Map<String, Object> m = new LinkedHashMap<>();
			m.put("hunks", hunks);
			m.put("merged", plan.merged);
			List<Object> list = new ArrayList<>();
			for (Conflict c : plan.conflicts) {
				Map<String, Object> k = new LinkedHashMap<>();
				k.put("line", c.line);
				k.put("lines", c.lines);
				k.put("text", new ArrayList<Object>(c.text));
				list.add(k);
			}
			m.put("conflicts", list);
			return m;
		}
	}

	/** A change of this pi's to the file: its seq and its {@code merge} as the message had it (null: none). */
	public static final class Link {
		public final long seq;
		public final Object merge;

		public Link(long seq, Object merge) {
			this.seq = seq;
			this.merge = merge;
		}
	}

	// ---- parsing -----------------------------------------------------------------------------------------------

	private static boolean isInt(Object v, long min) {
		return v instanceof Long && (Long) v >= min && (Long) v <= MAX_INT;
	}

	@SuppressWarnings("unchecked")
	private static List<String> lines(Object v) {
		if (!(v instanceof List)) return null;
		for (Object s : (List<Object>) v) if (!(s instanceof String)) return null;
		return Collections.unmodifiableList(new ArrayList<>((List<String>) v));
	}

	/** {@code raw} (a changed entry's {@code merge}, untrusted JSON) checked: hunks ascending, apart, as long as they say. */
	@SuppressWarnings("unchecked")
	public static Info parse(Object raw) {
		if (!(raw instanceof Map)) return null;
		Map<String, Object> m = (Map<String, Object>) raw;
		Object sha = m.get("sha256");
		if (!(sha instanceof String) || !SHA256.matcher((String) sha).matches()) return null;
		Object prev = m.get("prev_seq");
		if (prev != null && !isInt(prev, 1)) return null;
		if (!(m.get("hunks") instanceof List)) return null;
		List<Object> raws = (List<Object>) m.get("hunks");
		if (raws.size() > MAX_HUNKS) return null;
		List<Hunk> hunks = new ArrayList<>();
		long oldEnd = 1;
		long newEnd = 1;
		for (Object r : raws) {
			if (!(r instanceof Map)) return null;
			Map<String, Object> h = (Map<String, Object>) r;
			List<String> oldText = lines(h.get("old_text"));
			List<String> newText = lines(h.get("new_text"));
			Object os = h.get("old_start");
			Object ns = h.get("new_start");
			if (!isInt(os, 1) || !isInt(ns, 1) || oldText == null || newText == null) return null;
			if (!Long.valueOf(oldText.size()).equals(h.get("old_lines")) || !Long.valueOf(newText.size()).equals(h.get("new_lines"))) {
				return null;
			}
			long oldStart = (Long) os;
			long newStart = (Long) ns;
			if (oldStart < oldEnd || newStart < newEnd || newStart - newEnd != oldStart - oldEnd) return null;
			oldEnd = oldStart + oldText.size();
			newEnd = newStart + newText.size();
			hunks.add(new Hunk((int) oldStart, oldText, (int) newStart, newText));
		}
		return new Info(((String) sha).toLowerCase(java.util.Locale.ROOT), prev == null ? null : (Long) prev, hunks);
	}

	// ---- lines -------------------------------------------------------------------------------------------------

	/** A text's lines as pi splits a file: at \n, a final newline ending the last line ("" has none). */
	public static List<String> splitLines(String text) {
		if (text.isEmpty()) return new ArrayList<>();
		List<String> out = new ArrayList<>(Arrays.asList(text.split("\n", -1)));
		if (out.get(out.size() - 1).isEmpty()) out.remove(out.size() - 1);
		return out;
	}

	/** The lines before a change, from {@code after} and its hunks; null when {@code after} lacks the hunks' new lines. */
	public static List<String> unapply(List<String> after, List<Hunk> hunks) {
		List<String> before = new ArrayList<>();
		int at = 0;
		for (Hunk h : hunks) {
			if (h.newStart - 1 > after.size()) return null;
			for (; at < h.newStart - 1; at++) before.add(after.get(at));
			for (int i = 0; i < h.newText.size(); i++) {
				int k = h.newStart - 1 + i;
				if (k >= after.size() || !after.get(k).equals(h.newText.get(i))) return null;
			}
			if (before.size() + 1 != h.oldStart) return null;
			before.addAll(h.oldText);
			at = h.newStart - 1 + h.newText.size();
		}
		for (; at < after.size(); at++) before.add(after.get(at));
		return before;
	}

	/**
	 * The hunks from {@code a} to {@code b} (no context lines): the lines both share at either end left out, then
	 * Myers' O(ND) diff of the middle, its edit length held to {@code min(500, 10,000,000 / lines compared)} as
	 * src/protocol/line-diff.ts holds jsdiff's (a bound on the work, not a clock); past it, or with no line in
	 * common, the middle is one hunk.
	 */
	public static List<Hunk> diff(List<String> a, List<String> b) {
		int head = 0;
		while (head < a.size() && head < b.size() && a.get(head).equals(b.get(head))) head++;
		int tail = 0;
		while (tail < a.size() - head && tail < b.size() - head
				&& a.get(a.size() - 1 - tail).equals(b.get(b.size() - 1 - tail))) tail++;
		List<String> x = a.subList(head, a.size() - tail);
		List<String> y = b.subList(head, b.size() - tail);
		List<Hunk> out = new ArrayList<>();
		if (x.isEmpty() && y.isEmpty()) return out;
		int bound = Math.max(1, Math.min(MAX_DIFF_EDIT_LENGTH, DIFF_WORK_BUDGET / Math.max(1, x.size() + y.size())));
		// Each distinct line as a number: the search compares ints, not strings.
		Map<String, Integer> ids = new java.util.HashMap<>();
		int[] xs = new int[x.size()];
		int[] ys = new int[y.size()];
		for (int i = 0; i < xs.length; i++) xs[i] = ids.computeIfAbsent(x.get(i), k -> ids.size());
		int inX = ids.size();
		boolean shared = false;
		for (int j = 0; j < ys.length; j++) {
			ys[j] = ids.computeIfAbsent(y.get(j), k -> ids.size());
			shared |= ys[j] < inX;
		}
		boolean[][] kept = !shared ? null : myers(xs, ys, bound);
		if (kept == null) {
			out.add(new Hunk(head + 1, new ArrayList<>(x), head + 1, new ArrayList<>(y)));
			return out;
		}
		// Walk the two sides: lines kept on both end a hunk; removed and added lines between them make one.
		boolean[] keptX = kept[0];
		boolean[] keptY = kept[1];
		int i = 0;
		int j = 0;
		while (i < x.size() || j < y.size()) {
			if (i < x.size() && j < y.size() && keptX[i] && keptY[j]) {
				i++;
				j++;
				continue;
			}
			int i0 = i;
			int j0 = j;
			while (i < x.size() && !keptX[i]) i++;
			while (j < y.size() && !keptY[j]) j++;
			out.add(new Hunk(head + i0 + 1, new ArrayList<>(x.subList(i0, i)), head + j0 + 1, new ArrayList<>(y.subList(j0, j))));
		}
		return out;
	}

	/**
	 * Myers' greedy shortest edit script: which lines of x and y are kept, or null past {@code bound} edits. The
	 * furthest-reaching x on each diagonal is kept per edit count (a trace of at most bound + 1 rows), then walked
	 * back from the end.
	 */
	private static boolean[][] myers(int[] x, int[] y, int bound) {
		int n = x.length;
		int m = y.length;
		int max = Math.min(bound, n + m);
		int offset = max + 1;
		int[] v = new int[2 * max + 3];
		List<int[]> trace = new ArrayList<>();
		int found = -1;
		for (int d = 0; d <= max && found < 0; d++) {
			trace.add(v.clone());
			for (int k = -d; k <= d; k += 2) {
				int i = k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1;
				int j = i - k;
				while (i < n && j < m && x[i] == y[j]) {
					i++;
					j++;
				}
				v[offset + k] = i;
				if (i >= n && j >= m) {
					found = d;
					break;
				}
			}
		}
		if (found < 0) return null;
		boolean[] keptX = new boolean[n];
		boolean[] keptY = new boolean[m];
		int i = n;
		int j = m;
		for (int d = found; d >= 0; d--) {
			int[] before = trace.get(d);
			int k = i - j;
			int prevK;
			if (d == 0) prevK = 0;
			else prevK = k == -d || (k != d && before[offset + k - 1] < before[offset + k + 1]) ? k + 1 : k - 1;
			int startI = d == 0 ? 0 : (prevK == k + 1 ? before[offset + prevK] : before[offset + prevK] + 1);
			int startJ = startI - k;
			while (i > startI && j > startJ) {
				keptX[--i] = true;
				keptY[--j] = true;
			}
			if (d > 0) {
				i = before[offset + prevK];
				j = i - prevK;
			}
		}
		return new boolean[][] {keptX, keptY};
	}

	// ---- the merge ---------------------------------------------------------------------------------------------

	/** Does a change of base range [a1, e1) touch one of [a2, e2)? Shared lines; an insertion in or at the edge. */
	static boolean touches(int a1, int e1, int a2, int e2) {
		if (a1 < e1 && a2 < e2) return a1 < e2 && a2 < e1;
		return a1 <= e2 && a2 <= e1;
	}

	/** {@code line} cut to at most MAX_CONFLICT_LINE_BYTES of UTF-8, at a character's edge. */
	static String cutLine(String line) {
		if (Bytes.utf8Length(line) <= MAX_CONFLICT_LINE_BYTES) return line;
		int bytes = 0;
		int at = 0;
		while (at < line.length()) {
			int cp = line.codePointAt(at);
			int width = Character.charCount(cp);
			int size = Bytes.utf8Length(line.substring(at, at + width));
			if (bytes + size > MAX_CONFLICT_LINE_BYTES) break;
			bytes += size;
			at += width;
		}
		return line.substring(0, at);
	}

	/** Merge pi's hunks ({@code theirs}, from {@code base}) into {@code ours} (the document's lines). */
	public static Plan plan(List<String> base, List<String> ours, List<Hunk> theirs) {
		List<Hunk> user = diff(base, ours);
		Plan out = new Plan();
		int u = 0; // the first user change not wholly before the current hunk of pi's
		int delta = 0; // the user's line-count change above it
		int shift = 0; // the line-count change of pi's hunks merged above it
		for (Hunk h : theirs) {
			int a = h.oldStart - 1;
			int e = a + h.oldText.size();
			while (u < user.size()) {
				Hunk c = user.get(u);
				int ca = c.oldStart - 1;
				int ce = ca + c.oldText.size();
				if (ce > a || touches(ca, ce, a, e)) break;
				delta += c.newText.size() - c.oldText.size();
				u++;
			}
			int last = u - 1;
			while (last + 1 < user.size()) {
				Hunk c = user.get(last + 1);
				int ca = c.oldStart - 1;
				if (!touches(ca, ca + c.oldText.size(), a, e)) break;
				last++;
			}
			if (last < u) {
				out.edits.add(new LineEdit(a + delta, e + delta, h.newText));
				out.places.add(new Place(a + delta, e + delta, false));
				out.merged++;
				shift += h.newText.size() - h.oldText.size();
				continue;
			}
			out.conflictsTotal++;
			Hunk first = user.get(u);
			Hunk fin = user.get(last);
			int from = Math.min(a + delta, first.newStart - 1);
			int grown = 0;
			for (int i = u; i <= last; i++) grown += user.get(i).newText.size() - user.get(i).oldText.size();
			int to = Math.max(e + delta + grown, fin.newStart - 1 + fin.newText.size());
			out.places.add(new Place(from, to, true));
			if (out.conflicts.size() < MAX_CONFLICTS) {
				List<String> text = new ArrayList<>();
				for (int i = from; i < Math.min(to, from + MAX_CONFLICT_LINES); i++) text.add(cutLine(ours.get(i)));
				out.conflicts.add(new Conflict(from + shift + 1, to - from, text));
			}
		}
		return out;
	}

	/**
	 * {@code edits} (of the lines of {@code text}, split as pi splits a file) as text edits of {@code text},
	 * ascending. A last line without a newline keeps having none.
	 */
	public static List<TextEdit> textEdits(String text, List<LineEdit> edits) {
		List<String> lines = splitLines(text);
		int count = lines.size();
		boolean noEol = !text.isEmpty() && !text.endsWith("\n");
		int[] starts = new int[count + 1];
		for (int i = 0; i < count; i++) starts[i + 1] = starts[i] + lines.get(i).length() + 1;
		if (noEol) starts[count] = text.length();
		List<TextEdit> out = new ArrayList<>();
		for (LineEdit ed : edits) {
			StringBuilder body = new StringBuilder();
			for (String l : ed.lines) body.append(l).append('\n');
			String b = body.toString();
			if (noEol && ed.to >= count && !b.isEmpty()) {
				// The edit reaches the end of a text without a final newline: its lines end there without one too,
				// and lines put after that last line come after a newline.
				b = ed.from >= count ? "\n" + b.substring(0, b.length() - 1) : b.substring(0, b.length() - 1);
			}
			out.add(new TextEdit(starts[Math.min(ed.from, count)], starts[Math.min(ed.to, count)], b));
		}
		return out;
	}

	/** {@code text} with {@code edits} (ascending, apart) made: the headless driver's document. */
	public static String apply(String text, List<TextEdit> edits) {
		StringBuilder out = new StringBuilder(text);
		for (int i = edits.size() - 1; i >= 0; i--) {
			TextEdit e = edits.get(i);
			out.replace(e.start, e.end, e.text);
		}
		return out.toString();
	}

	private static String hex(byte[] bytes) {
		try {
			byte[] d = MessageDigest.getInstance("SHA-256").digest(bytes);
			StringBuilder s = new StringBuilder();
			for (byte x : d) s.append(String.format("%02x", x & 0xff));
			return s.toString();
		} catch (NoSuchAlgorithmException e) {
			throw new IllegalStateException(e);
		}
	}

	/** Strict UTF-8, or null (another encoding, binary). */
	static String utf8(byte[] bytes) {
		// The JDK's own decoding is the fast one; it writes U+FFFD for what is not UTF-8, so only a text holding one
		// (malformed, or a real U+FFFD) is decoded again, strictly.
		String fast = new String(bytes, StandardCharsets.UTF_8);
		if (fast.indexOf('\uFFFD') < 0) return fast;
		try {
			return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
					.onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
		} catch (CharacterCodingException e) {
			return null;
		}
	}

	/**
	 * Merge pi's {@code chain} (its new changes of one file, oldest first; {@code handled}: the seq this editor handled
	 * of this pi before) into {@code document} (the document's text), the file on disk being {@code disk}.
	 */
	public static Outcome chain(List<Link> chain, long handled, byte[] disk, String document) {
		List<Info> infos = new ArrayList<>();
		for (int i = 0; i < chain.size(); i++) {
			Info info = parse(chain.get(i).merge);
			if (info == null) return Outcome.no("a change carries no merge");
			Long prev = info.prevSeq;
			boolean follows = i == 0 ? prev == null || prev <= handled : prev != null && prev == chain.get(i - 1).seq;
			if (!follows) return Outcome.no("a change of this file in between is not in the message");
			infos.add(info);
		}
		if (infos.isEmpty()) return Outcome.no("no change");
		Info newest = infos.get(infos.size() - 1);
		if (disk == null) return Outcome.no("the file cannot be read");
		// A text whose lines are not the file's split at "\n" (CR-LF, a BOM, another encoding, binary) is not compared.
		String text = utf8(disk);
		if (text == null || text.indexOf('\r') >= 0 || text.indexOf('\0') >= 0 || text.startsWith("\uFEFF")
				|| document.indexOf('\r') >= 0) {
			return Outcome.no("the lines are not split at \\n");
		}
		if (!hex(disk).equals(newest.sha256)) return Outcome.no("the file is not what pi's tool wrote");
		List<String> now = splitLines(text);
		List<String> base = now;
		for (int i = infos.size() - 1; i >= 0 && base != null; i--) base = unapply(base, infos.get(i).hunks);
		if (base == null) return Outcome.no("pi's hunks do not fit the file");
		List<Hunk> theirs = infos.size() == 1 ? newest.hunks : diff(base, now);
		Plan plan = plan(base, splitLines(document), theirs);
		return new Outcome(null, plan.conflictsTotal > 0 ? "conflict" : "merged", theirs.size(), plan);
	}

	/** The changes of {@code file} in {@code changed} newer than {@code since}, oldest first. */
	public static List<Link> chainOf(List<PiMessage.Change> changed, String file, long since) {
		List<PiMessage.Change> mine = new ArrayList<>();
		for (PiMessage.Change c : changed) if (c.file.equals(file) && c.seq > since) mine.add(c);
		mine.sort((p, q) -> Long.compare(p.seq, q.seq));
		List<Link> out = new ArrayList<>();
		for (PiMessage.Change c : mine) out.add(new Link(c.seq, c.merge));
		return out;
	}

	/** The one line that tells the user of a conflict: the file, the lines kept, how to compare. */
	public static String conflictNotice(String file, Plan plan) {
		StringBuilder where = new StringBuilder();
		for (int i = 0; i < plan.conflicts.size() && i < 3; i++) where.append(i == 0 ? "" : ", ").append(plan.conflicts.get(i).phrase());
		if (plan.conflictsTotal > 3) where.append(", ...");
		return "pi changed " + file + " on disk where you have unsaved changes (" + where + "): your text is kept there"
				+ (plan.merged > 0 ? ", pi's other " + (plan.merged == 1 ? "change was" : plan.merged + " changes were") + " merged" : "")
				+ ". Compare it with the file on disk through Show Difference in the File Cache Conflict dialog the IDE shows when you save, or use File | Reload from Disk to take pi's.";
	}
}
