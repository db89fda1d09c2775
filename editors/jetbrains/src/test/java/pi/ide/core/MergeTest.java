package pi.ide.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 26: pi's change merged into an unsaved document (Merge, Merging, the inbox). Tables for each rule; the
 * seeded comparison with the rule's oracle is test/jetbrains/merge-random.test.ts, the whole client through the
 * headless driver the conformance kit's merge cases.
 */
class MergeTest {
	static String sha(String text) throws Exception {
		StringBuilder s = new StringBuilder();
		for (byte b : MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8))) {
			s.append(String.format("%02x", b & 0xff));
		}
		return s.toString();
	}

	static String hunk(int oldStart, String oldText, int newStart, String newText) {
		return "{\"old_start\":" + oldStart + ",\"old_lines\":" + count(oldText) + ",\"new_start\":" + newStart
				+ ",\"new_lines\":" + count(newText) + ",\"old_text\":" + oldText + ",\"new_text\":" + newText + "}";
	}

	static int count(String jsonList) {
		try {
			return ((List<?>) Json.parse(jsonList)).size();
		} catch (Json.ParseError e) {
			return -1; // not a list: the count stays wrong, as the table wants
		}
	}

	static Object field(String json) {
		try {
			return Json.parse(json);
		} catch (Json.ParseError e) {
			throw new IllegalArgumentException(e);
		}
	}

	static final String SHA = "\"" + new String(new char[64]).replace('\0', 'a') + "\"";

	static Stream<Arguments> parseCases() {
		String two = "[" + hunk(2, "[\"b\"]", 2, "[\"B\",\"B2\"]") + "," + hunk(5, "[]", 6, "[\"x\"]") + "]";
		StringBuilder many = new StringBuilder("[");
		for (int i = 0; i < 501; i++) many.append(i == 0 ? "" : ",").append(hunk(2 * i + 1, "[\"a\"]", 2 * i + 1, "[\"b\"]"));
		many.append("]");
		return Stream.of(
				Arguments.of("well-formed", "{\"sha256\":" + SHA + ",\"hunks\":" + two + "}", true),
				Arguments.of("with prev_seq", "{\"sha256\":" + SHA + ",\"prev_seq\":3,\"hunks\":" + two + "}", true),
				Arguments.of("prev_seq null", "{\"sha256\":" + SHA + ",\"prev_seq\":null,\"hunks\":" + two + "}", true),
				Arguments.of("not an object", "\"x\"", false),
				Arguments.of("a short hash", "{\"sha256\":\"abc\",\"hunks\":" + two + "}", false),
				Arguments.of("prev_seq 0", "{\"sha256\":" + SHA + ",\"prev_seq\":0,\"hunks\":" + two + "}", false),
				Arguments.of("prev_seq a string", "{\"sha256\":" + SHA + ",\"prev_seq\":\"3\",\"hunks\":" + two + "}", false),
				Arguments.of("hunks not a list", "{\"sha256\":" + SHA + ",\"hunks\":{}}", false),
				Arguments.of("a count that is not the text's", "{\"sha256\":" + SHA + ",\"hunks\":["
						+ hunk(2, "[\"b\"]", 2, "[\"B\"]").replace("\"old_lines\":1", "\"old_lines\":2") + "]}", false),
				Arguments.of("hunks out of order", "{\"sha256\":" + SHA + ",\"hunks\":[" + hunk(5, "[]", 5, "[\"x\"]") + ","
						+ hunk(2, "[\"b\"]", 3, "[\"B\"]") + "]}", false),
				Arguments.of("a new_start that does not follow", "{\"sha256\":" + SHA + ",\"hunks\":[" + hunk(2, "[\"b\"]", 3, "[\"B\"]") + "]}", false),
				Arguments.of("501 hunks", "{\"sha256\":" + SHA + ",\"hunks\":" + many + "}", false),
				Arguments.of("a line not a string", "{\"sha256\":" + SHA + ",\"hunks\":[" + hunk(2, "[1]", 2, "[\"B\"]") + "]}", false),
				Arguments.of("a start of 0", "{\"sha256\":" + SHA + ",\"hunks\":[" + hunk(0, "[]", 0, "[\"B\"]") + "]}", false));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("parseCases")
	void aChangedEntrysMergeFieldIsChecked(String name, String json, boolean ok) {
		assertEquals(ok, Merge.parse(field(json)) != null);
	}

	static List<String> l(String... lines) {
		return new ArrayList<>(Arrays.asList(lines));
	}

	static Merge.Hunk h(int oldStart, List<String> oldText, int newStart, List<String> newText) {
		return new Merge.Hunk(oldStart, oldText, newStart, newText);
	}

	@Test
	void piHunksTakenBackOutGiveTheTextBefore() {
		List<Merge.Hunk> hunks = Arrays.asList(h(2, l("b"), 2, l("B", "B2")), h(5, l(), 6, l("e")));
		assertEquals(l("a", "b", "c", "d"), Merge.unapply(l("a", "B", "B2", "c", "d", "e"), hunks));
		assertNull(Merge.unapply(l("a", "X", "B2", "c", "d", "e"), hunks), "a file without the hunk's new lines");
		assertNull(Merge.unapply(l("a"), hunks), "a shorter file");
	}

	static Stream<Arguments> splitCases() {
		return Stream.of(Arguments.of("", l()), Arguments.of("a", l("a")), Arguments.of("a\n", l("a")),
				Arguments.of("a\n\n", l("a", "")), Arguments.of("\n", l("")), Arguments.of("a\nb", l("a", "b")));
	}

	@ParameterizedTest
	@MethodSource("splitCases")
	void linesAreSplitAsPiSplitsAFile(String text, List<String> lines) {
		assertEquals(lines, Merge.splitLines(text));
	}

	/** b from a and the hunks: the diff is a true change set. */
	static List<String> replay(List<String> a, List<Merge.Hunk> hunks) {
		List<String> out = new ArrayList<>();
		int at = 0;
		for (Merge.Hunk x : hunks) {
			out.addAll(a.subList(at, x.oldStart - 1));
			out.addAll(x.newText);
			at = x.oldStart - 1 + x.oldText.size();
		}
		out.addAll(a.subList(at, a.size()));
		return out;
	}

	static Stream<Arguments> diffCases() {
		return Stream.of(
				Arguments.of("the same", l("a", "b"), l("a", "b"), 0),
				Arguments.of("one line changed", l("a", "b", "c"), l("a", "B", "c"), 1),
				Arguments.of("lines added at the end", l("a"), l("a", "b", "c"), 1),
				Arguments.of("lines removed at the start", l("a", "b", "c"), l("c"), 1),
				Arguments.of("from nothing", l(), l("a", "b"), 1),
				Arguments.of("to nothing", l("a", "b"), l(), 1),
				Arguments.of("no line in common: one hunk", l("a", "b", "c"), l("x", "y"), 1),
				Arguments.of("two apart", l("a", "b", "c", "d", "e"), l("A", "b", "c", "d", "E"), 2),
				Arguments.of("an insertion and a deletion", l("a", "b", "c", "d"), l("a", "x", "b", "d"), 2),
				Arguments.of("repeated lines", l("a", "b", "a", "b", "a"), l("b", "a", "b", "a", "b"), 2));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("diffCases")
	void theLineDiffIsATrueAndShortChangeSet(String name, List<String> a, List<String> b, int hunks) {
		List<Merge.Hunk> d = Merge.diff(a, b);
		assertEquals(b, replay(a, d));
		assertEquals(hunks, d.size());
	}

	@Test
	void aTenThousandLineFileWithFiftyScatteredEditsGivesFiftyHunks() {
		List<String> a = new ArrayList<>();
		for (int i = 0; i < 10_000; i++) a.add("line " + i);
		List<String> b = new ArrayList<>(a);
		for (int k = 49; k >= 0; k--) b.set(100 + k * 190, "user's " + k);
		List<Merge.Hunk> d = Merge.diff(a, b);
		assertEquals(50, d.size());
		assertEquals(b, replay(a, d));
	}

	@Test
	void pastTheEditBoundTheChangedRegionIsOneHunk() {
		List<String> a = new ArrayList<>();
		List<String> b = new ArrayList<>();
		for (int i = 0; i < 2_000; i++) {
			a.add("a" + i);
			b.add(i % 2 == 0 ? "a" + i : "b" + i); // 1,000 lines replaced: 2,000 edits, past the bound of 500
		}
		List<Merge.Hunk> d = Merge.diff(a, b);
		assertEquals(b, replay(a, d));
		assertEquals(1, d.size());
	}

	@Test
	void theSeededDiffIsATrueChangeSetOnRepeatedLines() {
		for (int seed = 1; seed <= 300; seed++) {
			Random r = new Random(seed);
			List<String> a = new ArrayList<>();
			for (int i = r.nextInt(30); i > 0; i--) a.add("x" + r.nextInt(4));
			List<String> b = new ArrayList<>(a);
			for (int e = r.nextInt(5); e > 0; e--) {
				int at = r.nextInt(b.size() + 1);
				for (int k = r.nextInt(3); k > 0 && at < b.size(); k--) b.remove(at);
				for (int k = r.nextInt(3); k > 0; k--) b.add(at, "x" + r.nextInt(4));
			}
			assertEquals(b, replay(a, Merge.diff(a, b)), "seed " + seed);
		}
	}

	static final List<String> BASE = l("1", "2", "3", "4", "5", "6", "7", "8");

	static String conflicts(Merge.Plan p) {
		StringBuilder s = new StringBuilder();
		for (Merge.Conflict c : p.conflicts) s.append(c.phrase()).append(c.text).append(';');
		return s.toString();
	}

	static Stream<Arguments> planCases() {
		return Stream.of(
				Arguments.of("away from the user's line", l("1", "two", "3", "4", "5", "6", "7", "8"),
						Arrays.asList(h(7, l("7"), 7, l("seven"))), l("1", "two", "3", "4", "5", "6", "seven", "8"), ""),
				Arguments.of("moved by the user's added lines", l("1", "2", "x", "y", "3", "4", "5", "6", "7", "8"),
						Arrays.asList(h(6, l("6"), 6, l("six"))), l("1", "2", "x", "y", "3", "4", "5", "six", "7", "8"), ""),
				Arguments.of("on the user's line", l("1", "two", "3", "4", "5", "6", "7", "8"),
						Arrays.asList(h(2, l("2"), 2, l("TWO"))), l("1", "two", "3", "4", "5", "6", "7", "8"), "line 2[two];"),
				Arguments.of("an insertion at the edge of the user's change", l("1", "two", "3", "4", "5", "6", "7", "8"),
						Arrays.asList(h(3, l(), 3, l("new"))), l("1", "two", "3", "4", "5", "6", "7", "8"), "line 2[two];"),
				Arguments.of("a line between: no touch", l("1", "two", "3", "4", "5", "6", "7", "8"),
						Arrays.asList(h(4, l("4"), 4, l("four"))), l("1", "two", "3", "four", "5", "6", "7", "8"), ""),
				Arguments.of("the user deleted the lines pi changed", l("1", "2", "5", "6", "7", "8"),
						Arrays.asList(h(3, l("3", "4"), 3, l("three"))), l("1", "2", "5", "6", "7", "8"), "line 3[];"),
				Arguments.of("one merged above a conflict moves it", l("1", "2", "3", "4", "5", "six", "7", "8"),
						Arrays.asList(h(1, l("1"), 1, l("a", "b", "c")), h(6, l("6"), 8, l("SIX"))),
						l("a", "b", "c", "2", "3", "4", "5", "six", "7", "8"), "line 8[six];"),
				Arguments.of("spanning two of the user's changes", l("1", "two", "3", "four", "5", "6", "7", "8"),
						Arrays.asList(h(2, l("2", "3", "4"), 2, l("x"))), l("1", "two", "3", "four", "5", "6", "7", "8"),
						"lines 2-4[two, 3, four];"));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("planCases")
	void piHunksThatTouchNoUserChangeGoIn(String name, List<String> ours, List<Merge.Hunk> theirs, List<String> merged,
			String conflicts) {
		Merge.Plan p = Merge.plan(BASE, ours, theirs);
		String text = String.join("\n", ours) + "\n";
		assertEquals(merged, Merge.splitLines(Merge.apply(text, Merge.textEdits(text, p.edits))));
		assertEquals(conflicts, conflicts(p));
		assertEquals(theirs.size() - p.conflictsTotal, p.merged);
	}

	@Test
	void conflictsAreCappedTwentyOfTwentyLinesOfFiveHundredBytes() {
		List<String> base = new ArrayList<>();
		List<String> ours = new ArrayList<>();
		List<Merge.Hunk> theirs = new ArrayList<>();
		String wide = new String(new char[300]).replace("\0", "é"); // 600 bytes
		for (int i = 0; i < 25; i++) {
			for (int k = 0; k < 30; k++) base.add(i + "." + k);
			// The first block's line 0 becomes 25 lines of the user's (the first one wide), every other block's one line.
			if (i == 0) {
				ours.add(wide);
				for (int k = 1; k < 25; k++) ours.add("u" + k);
			} else {
				ours.add("u" + i);
			}
			for (int k = 1; k < 30; k++) ours.add(i + "." + k);
			theirs.add(h(i * 30 + 1, l(i + ".0"), i * 30 + 1, l("pi" + i)));
		}
		Merge.Plan p = Merge.plan(base, ours, theirs);
		assertEquals(25, p.conflictsTotal);
		assertEquals(Merge.MAX_CONFLICTS, p.conflicts.size());
		Merge.Conflict first = p.conflicts.get(0);
		assertEquals(25, first.lines, "the lines counted in full");
		assertEquals(Merge.MAX_CONFLICT_LINES, first.text.size(), "the text quoted capped");
		assertEquals(250, first.text.get(0).length(), "500 bytes of two-byte characters");
	}

	static Stream<Arguments> cutCases() {
		String emoji = new String(new char[126]).replace("\0", "😀"); // 504 bytes: 125 whole ones fit
		return Stream.of(Arguments.of("short", "short"), Arguments.of(new String(new char[500]).replace("\0", "x"),
				new String(new char[500]).replace("\0", "x")), Arguments.of(emoji, emoji.substring(0, 250)));
	}

	@ParameterizedTest
	@MethodSource("cutCases")
	void aQuotedLineIsCutAtACharactersEdge(String line, String cut) {
		assertEquals(cut, Merge.cutLine(line));
	}

	static Stream<Arguments> textEditCases() {
		return Stream.of(
				Arguments.of("a replaced line", "a\nb\nc\n", 1, 2, l("B"), "a\nB\nc\n"),
				Arguments.of("lines added at the end", "a\nb\n", 2, 2, l("c", "d"), "a\nb\nc\nd\n"),
				Arguments.of("no final newline: the last line replaced", "a\nb", 1, 2, l("B"), "a\nB"),
				Arguments.of("no final newline: lines added after the last", "a\nb", 2, 2, l("c"), "a\nb\nc"),
				Arguments.of("no final newline: the last line removed", "a\nb", 1, 2, l(), "a\n"),
				Arguments.of("into an empty text", "", 0, 0, l("x"), "x\n"));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("textEditCases")
	void lineEditsAsTextEdits(String name, String text, int from, int to, List<String> lines, String want) {
		assertEquals(want, Merge.apply(text, Merge.textEdits(text, Collections.singletonList(new Merge.LineEdit(from, to, lines)))));
	}

	static final String BEFORE = "1\n2\n3\n4\n5\n";
	static final String AFTER = "1\n2\n3\n4\nfive\n";

	static Object mergeOf(String after, String prev) throws Exception {
		return field("{\"sha256\":\"" + sha(after) + "\"" + (prev == null ? "" : ",\"prev_seq\":" + prev) + ",\"hunks\":["
				+ hunk(5, "[\"5\"]", 5, "[\"five\"]") + "]}");
	}

	static Stream<Arguments> chainCases() throws Exception {
		Object merge = mergeOf(AFTER, null);
		Object second = field("{\"sha256\":\"" + sha("one\n2\n3\n4\nfive\n") + "\",\"prev_seq\":4,\"hunks\":["
				+ hunk(1, "[\"1\"]", 1, "[\"one\"]") + "]}");
		Object notNext = field(Json.write(second).replace("\"prev_seq\":4", "\"prev_seq\":5"));
		byte[] latin1 = "1\n2\n3\n4\nf\u00e9ve\n".getBytes(StandardCharsets.ISO_8859_1);
		return Stream.of(
				Arguments.of("one change", Arrays.asList(new Merge.Link(4, merge)), 3L, AFTER.getBytes(StandardCharsets.UTF_8), "1\nuser\n3\n4\n5\n", "merged"),
				Arguments.of("no merge field", Arrays.asList(new Merge.Link(4, null)), 3L, AFTER.getBytes(StandardCharsets.UTF_8), "1\nuser\n3\n4\n5\n", null),
				Arguments.of("a change in between not handled", Arrays.asList(new Merge.Link(4, mergeOf(AFTER, "2"))), 1L,
						AFTER.getBytes(StandardCharsets.UTF_8), "1\nuser\n", null),
				Arguments.of("another file on disk", Arrays.asList(new Merge.Link(4, merge)), 3L, "1\n2\n3\n4\nFIVE\n".getBytes(StandardCharsets.UTF_8), "1\n", null),
				Arguments.of("CR-LF in the document", Arrays.asList(new Merge.Link(4, merge)), 3L, AFTER.getBytes(StandardCharsets.UTF_8), "one\r\n2\r\n3\r\n4\r\n5\r\n", null),
				Arguments.of("CR-LF on disk", Arrays.asList(new Merge.Link(4, mergeOf("1\r\n2\r\n3\r\n4\r\nfive\r\n", null))), 3L,
						"1\r\n2\r\n3\r\n4\r\nfive\r\n".getBytes(StandardCharsets.UTF_8), "1\nuser\n3\n4\n5\n", null),
				Arguments.of("a BOM", Arrays.asList(new Merge.Link(4, mergeOf("\uFEFF" + AFTER, null))), 3L,
						("\uFEFF" + AFTER).getBytes(StandardCharsets.UTF_8), "1\nuser\n3\n4\n5\n", null),
				Arguments.of("another encoding", Arrays.asList(new Merge.Link(4, merge)), 3L, latin1, "1\nuser\n3\n4\n5\n", null),
				Arguments.of("a real U+FFFD in the file", Arrays.asList(new Merge.Link(4, field("{\"sha256\":\"" + sha("1\n2\n3\n4\nfive\uFFFD\n")
						+ "\",\"hunks\":[" + hunk(5, "[\"5\"]", 5, "[\"five\uFFFD\"]") + "]}"))), 3L,
						"1\n2\n3\n4\nfive\uFFFD\n".getBytes(StandardCharsets.UTF_8), "1\nuser\n3\n4\n5\n", "merged"),
				Arguments.of("unreadable", Arrays.asList(new Merge.Link(4, merge)), 3L, null, "1\nuser\n3\n4\n5\n", null),
				Arguments.of("a conflict", Arrays.asList(new Merge.Link(4, merge)), 3L, AFTER.getBytes(StandardCharsets.UTF_8), "1\n2\n3\n4\nuser\n", "conflict"),
				Arguments.of("two changes chained", Arrays.asList(new Merge.Link(4, merge), new Merge.Link(6, second)), 3L,
						"one\n2\n3\n4\nfive\n".getBytes(StandardCharsets.UTF_8), "1\n2\nuser\n4\n5\n", "merged"),
				Arguments.of("two changes, the second not following", Arrays.asList(new Merge.Link(4, merge), new Merge.Link(6, notNext)), 3L,
						"one\n2\n3\n4\nfive\n".getBytes(StandardCharsets.UTF_8), "1\n2\nuser\n4\n5\n", null),
				Arguments.of("pi's hunks not in the file", Arrays.asList(new Merge.Link(4, mergeOf("1\n", null))), 3L,
						"1\n".getBytes(StandardCharsets.UTF_8), "1\nuser\n", null));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("chainCases")
	void whenAMergeIsMade(String name, List<Merge.Link> chain, long handled, byte[] disk, String document, String status) {
		Merge.Outcome o = Merge.chain(chain, handled, disk, document);
		assertEquals(status, o.status, o.why);
	}

	@Test
	void twoChangesChainedMergeBothIntoTheDocument() throws Exception {
		Object second = field("{\"sha256\":\"" + sha("one\n2\n3\n4\nfive\n") + "\",\"prev_seq\":4,\"hunks\":["
				+ hunk(1, "[\"1\"]", 1, "[\"one\"]") + "]}");
		String document = "1\n2\nuser\n4\n5\n";
		Merge.Outcome o = Merge.chain(Arrays.asList(new Merge.Link(4, mergeOf(AFTER, null)), new Merge.Link(6, second)), 3,
				"one\n2\n3\n4\nfive\n".getBytes(StandardCharsets.UTF_8), document);
		assertEquals("one\n2\nuser\n4\nfive\n", Merge.apply(document, Merge.textEdits(document, o.plan.edits)));
		assertEquals(2, o.report().get("hunks"));
		assertEquals(2, o.report().get("merged"));
	}

	// ---- the inbox: a host over plain documents, the file on disk real ----

	static final class Documents implements Inbox.Host {
		final Map<String, Reload.Facts> facts = new java.util.HashMap<>();
		final Map<String, String> texts = new java.util.HashMap<>();
		final List<String> notices = new ArrayList<>();
		boolean merges = true;
		boolean refuse;
		final List<String> merged = new ArrayList<>();

		public Reload.Facts facts(String file) {
			return facts.get(file);
		}

		public void reload(String file) {
			throw new AssertionError("a modified document is never reloaded");
		}

		public Long version(String file) {
			return 7L;
		}

		public boolean diagnosticsExpected(String file) {
			return false;
		}

		public Map<String, Object> diagnostics(String file) {
			return null;
		}

		public void notifyModified(String file, String notice) {
			notices.add(notice);
		}

		public String documentText(String file) {
			return merges ? texts.get(file) : null;
		}

		public boolean applyMerge(String file, String text, List<Merge.TextEdit> edits) {
			if (refuse || !text.equals(texts.get(file))) return false;
			texts.put(file, Merge.apply(text, edits));
			merged.add(file);
			return true;
		}
	}

	static PiMessage message(String file, long seq, Object merge) {
		String json = "{\"kind\":\"pi\",\"protocol\":\"0.5\",\"pid\":77,\"cwd\":\"/w\",\"timestamp\":1,\"editor_pid\":1,\"seq\":" + seq
				+ ",\"changed\":[{\"file\":\"" + file + "\",\"seq\":" + seq + ",\"tool\":\"edit\""
				+ (merge == null ? "" : ",\"merge\":" + Json.write(merge)) + "}],\"last_turn\":[]}";
		PiMessage.Parsed p = PiMessage.parse(json);
		assertNull(p.problem);
		return p.message;
	}

	static PiMessage hello() {
		PiMessage.Parsed p = PiMessage.parse(
				"{\"kind\":\"pi\",\"protocol\":\"0.5\",\"pid\":77,\"cwd\":\"/w\",\"timestamp\":1,\"editor_pid\":1,\"seq\":0,\"changed\":[],\"last_turn\":[]}");
		return p.message;
	}

	@SuppressWarnings("unchecked")
	static Map<String, Object> reportOn(Inbox inbox, String file) {
		for (Map<String, Object> r : inbox.files()) if (r.get("file").equals(file)) return r;
		return null;
	}

	Path file;
	Documents host;
	Inbox inbox;

	void setUp(Path dir, String document) throws Exception {
		file = dir.resolve("notes.txt");
		Files.write(file, AFTER.getBytes(StandardCharsets.UTF_8));
		host = new Documents();
		host.facts.put(file.toString(), new Reload.Facts(true, true, Reload.PathKind.REGULAR, file.toRealPath().toString(),
				Reload.PathKind.REGULAR, file.toRealPath().toString(), false));
		host.texts.put(file.toString(), document);
		inbox = new Inbox(1);
		inbox.handle(hello(), host);
	}

	@SuppressWarnings("unchecked")
	@Test
	void theInboxMergesAndReportsMerged(@TempDir Path dir) throws Exception {
		setUp(dir, "1\nuser\n3\n4\n5\n");
		assertTrue(inbox.handle(message(file.toString(), 1, mergeOf(AFTER, null)), host));
		assertEquals("1\nuser\n3\n4\nfive\n", host.texts.get(file.toString()));
		Map<String, Object> r = reportOn(inbox, file.toString());
		assertEquals("merged", r.get("status"));
		assertEquals(true, r.get("modified"));
		Map<String, Object> merge = (Map<String, Object>) r.get("merge");
		assertEquals(1, merge.get("hunks"));
		assertEquals(1, merge.get("merged"));
		assertEquals(Collections.emptyList(), merge.get("conflicts"));
		assertEquals(Collections.emptyList(), host.notices, "a merge is not told");
		assertEquals(AFTER, new String(Files.readAllBytes(file), StandardCharsets.UTF_8), "the disk is pi's");
	}

	@SuppressWarnings("unchecked")
	@Test
	void aConflictKeepsTheUsersTextAndIsToldOnceInOneLine(@TempDir Path dir) throws Exception {
		setUp(dir, "1\n2\n3\n4\nuser's five\n");
		PiMessage m = message(file.toString(), 1, mergeOf(AFTER, null));
		inbox.handle(m, host);
		inbox.handle(m, host);
		assertEquals("1\n2\n3\n4\nuser's five\n", host.texts.get(file.toString()));
		Map<String, Object> r = reportOn(inbox, file.toString());
		assertEquals("conflict", r.get("status"));
		Map<String, Object> k = ((List<Map<String, Object>>) ((Map<String, Object>) r.get("merge")).get("conflicts")).get(0);
		assertEquals(5, k.get("line"));
		assertEquals(1, k.get("lines"));
		assertEquals(Arrays.asList("user's five"), k.get("text"));
		assertEquals(1, host.notices.size());
		String notice = host.notices.get(0);
		assertFalse(notice.contains("\n"));
		assertTrue(notice.contains(file.toString()) && notice.contains("line 5") && notice.contains("Show Difference"), notice);
	}

	static Stream<Arguments> notMerged() {
		return Stream.of(Arguments.of("a host that does not merge"), Arguments.of("the document changed meanwhile"),
				Arguments.of("the path is now a symlink"), Arguments.of("an entry without merge"));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("notMerged")
	void otherwiseTheDocumentIsKeptAndReportedModified(String why, @TempDir Path dir) throws Exception {
		setUp(dir, "1\nuser\n3\n4\n5\n");
		Object merge = mergeOf(AFTER, null);
		if (why.startsWith("a host")) host.merges = false;
		if (why.startsWith("the document")) host.refuse = true;
		if (why.startsWith("an entry")) merge = null;
		if (why.startsWith("the path")) {
			Path target = dir.resolve("elsewhere.txt");
			Files.write(target, AFTER.getBytes(StandardCharsets.UTF_8));
			Files.delete(file);
			Files.createSymbolicLink(file, target);
			host.facts.put(file.toString(), new Reload.Facts(true, true, Reload.PathKind.REGULAR, file.getParent().toRealPath()
					.resolve("notes.txt").toString(), Reload.PathKind.LINK_TO_REGULAR, target.toRealPath().toString(), false));
		}
		inbox.handle(message(file.toString(), 1, merge), host);
		assertEquals("1\nuser\n3\n4\n5\n", host.texts.get(file.toString()));
		Map<String, Object> r = reportOn(inbox, file.toString());
		assertEquals("modified", r.get("status"));
		assertNull(r.get("merge"));
		assertEquals(1, host.notices.size());
	}

	@Test
	void theFileIsReadWithoutFollowingALink(@TempDir Path dir) throws Exception {
		Path target = dir.resolve("t.txt");
		Files.write(target, "x\n".getBytes(StandardCharsets.UTF_8));
		Path link = dir.resolve("l.txt");
		Files.createSymbolicLink(link, target);
		assertNotNull(Merging.read(target.toString()));
		assertNull(Merging.read(link.toString()));
		assertNull(Merging.read(dir.toString()), "a directory");
		assertNull(Merging.read(dir.resolve("missing").toString()));
	}
}
