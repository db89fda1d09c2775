package pi.ide.core;

import java.util.ArrayList;
import java.util.List;

/**
 * Issue 26 item 6: an approval request's proposal shown against a document with unsaved changes (PROTOCOL.md,
 * "The proposal and an unsaved buffer"). The hunks are from the file on disk; the user's changes are the line diff
 * disk -> document, and the merge's own rule ({@link Merge#plan}: placement and "touches") decides where each hunk
 * stands: one that touches no change of the user's where the merge would put it, one that touches the user's lines
 * on those lines. The arrival notice names the touched lines as every client words them ({@link #touchPhrase}; the
 * rule of editors/shared/approval.ts {@code proposalAgainstBuffer}/{@code describeUnsaved}). Pure but for
 * {@link #of}, which reads the document through the host and the disk as a reload reads it.
 */
public final class ApprovalAgainst {
	private ApprovalAgainst() {}

	/** PROTOCOL.md: at most this many places named in the notice. */
	static final int MAX_NAMED = 5;

	/** The proposal against the document: each hunk's place, and the document with the touch-free hunks placed. */
	public static final class View {
		/** The document's text with each hunk that touches nothing of the user's placed ({@code \n} line ends). */
		public final String text;
		/** One per hunk of the request, in order. */
		public final List<Merge.Place> places;

		View(String text, List<Merge.Place> places) {
			this.text = text;
			this.places = places;
		}
	}

	/** Are {@code text}'s lines the file's split at {@code \n} (no CR, no BOM, no NUL)? Else no view. */
	static boolean splitAtNewline(String text) {
		return text.indexOf('\r') < 0 && text.indexOf('\0') < 0 && !text.startsWith("\uFEFF");
	}

	/**
	 * The proposal {@code r} (from {@code disk}, the file as it is) against {@code document} (the unsaved text the
	 * user sees); null when it cannot be shown whole (a note, hunks not all readable, a file pi would create), the
	 * hunks are not ascending and apart, the disk does not hold the hunks' old lines where they say, or either text's
	 * lines are not split at {@code \n} (CR-LF, a BOM: no words).
	 */
	public static View against(Approval.Request r, String disk, String document) {
		if (r.note != null || r.created || r.hunks.size() != r.hunksTotal) return null;
		if (disk == null || document == null || !splitAtNewline(disk) || !splitAtNewline(document)) return null;
		List<String> base = Merge.splitLines(disk);
		List<Merge.Hunk> hunks = new ArrayList<>();
		int at = 1;
		for (Approval.Hunk h : r.hunks) {
			if (h.oldStart < at || h.oldStart - 1 + h.oldText.size() > base.size()) return null;
			if (!base.subList(h.oldStart - 1, h.oldStart - 1 + h.oldText.size()).equals(h.oldText)) return null;
			at = h.oldStart + h.oldText.size();
			hunks.add(new Merge.Hunk(h.oldStart, h.oldText, h.newStart, h.newText));
		}
		Merge.Plan plan = Merge.plan(base, Merge.splitLines(document), hunks);
		String placed = Merge.apply(document, Merge.textEdits(document, plan.edits));
		return new View(placed, plan.places);
	}

	/**
	 * The words naming the user's unsaved lines the proposal touches ("1 of 2 hunks touches your unsaved line 12: if
	 * accepted, the file gets pi's text and your buffer keeps yours there"; {@code shortForm}: without what follows the
	 * colon), or null when none is touched. The touched spans in order, those that overlap or meet joined, at most
	 * {@link #MAX_NAMED} named; where the user deleted, the line the place stands on.
	 */
	public static String touchPhrase(List<Merge.Place> places, boolean shortForm) {
		List<int[]> spans = new ArrayList<>();
		int n = 0;
		for (Merge.Place p : places) {
			if (!p.touches) continue;
			n++;
			int to = Math.max(p.to, p.from + 1);
			int[] last = spans.isEmpty() ? null : spans.get(spans.size() - 1);
			if (last != null && p.from <= last[1]) last[1] = Math.max(last[1], to);
			else spans.add(new int[] {p.from, to});
		}
		if (n == 0) return null;
		StringBuilder named = new StringBuilder();
		for (int i = 0; i < spans.size() && i < MAX_NAMED; i++) {
			int[] s = spans.get(i);
			named.append(i == 0 ? "" : ", ").append(s[1] == s[0] + 1 ? Integer.toString(s[1]) : (s[0] + 1) + "-" + s[1]);
		}
		if (spans.size() > MAX_NAMED) named.append(", \u2026");
		boolean one = spans.size() == 1 && spans.get(0)[1] == spans.get(0)[0] + 1;
		int total = places.size();
		String phrase = n + " of " + total + (total == 1 ? " hunk" : " hunks") + (n == 1 ? " touches" : " touch")
				+ " your unsaved " + (one ? "line " : "lines ") + named;
		return shortForm ? phrase : phrase + ": if accepted, the file gets pi's text and your buffer keeps yours there";
	}

	/**
	 * The proposal against the host's document of {@code r.file} when it has unsaved changes, the file on disk read as
	 * a reload reads it ({@link Merging#diskText}); null otherwise (not open, saved, or no view). Never throws.
	 */
	public static View of(Approval.Request r, Inbox.Host host) {
		try {
			if (r.note != null || r.created) return null;
			String document = host.documentText(r.file);
			if (document == null) return null;
			return against(r, Merging.diskText(r.file, host), document);
		} catch (RuntimeException e) {
			return null;
		}
	}

	/**
	 * The request's arrival notice: "pi wants to edit a.txt: 2 hunks", and when a hunk touches the user's unsaved
	 * lines "; " and the words naming them ({@link #touchPhrase}).
	 */
	public static String notice(Approval.Request r, String shown, View view) {
		String touch = view == null ? null : touchPhrase(view.places, false);
		return Approval.describe(r, shown) + (touch == null ? "" : "; " + touch);
	}
}
