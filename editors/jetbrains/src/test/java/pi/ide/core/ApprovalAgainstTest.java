package pi.ide.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 26 item 6: an approval's proposal against a document with unsaved changes (ApprovalAgainst). The cases of
 * test/unit/editors/shared/approval-unsaved.test.ts (the TypeScript clients'), the words of the notice, and the host
 * side (the file on disk read as a reload reads it). The seeded comparison with the rule's oracle is
 * test/jetbrains/approval-against-random.test.ts; the whole client through the headless driver the conformance kit's
 * case "approval: the proposal shown against the user's unsaved buffer".
 */
class ApprovalAgainstTest {
	static final String TAIL = ": if accepted, the file gets pi's text and your buffer keeps yours there";

	static String lines(String... l) {
		return String.join("\n", l) + "\n";
	}

	static final String DISK = lines("1", "2", "3", "4", "5", "6", "7", "8", "9", "10");
	/** pi replaces line 2 and line 8. */
	static final String HUNKS = "{\"id\":\"h1\",\"old_start\":2,\"new_start\":2,\"old_text\":[\"2\"],\"new_text\":[\"TWO\"]},"
			+ "{\"id\":\"h2\",\"old_start\":8,\"new_start\":8,\"old_text\":[\"8\"],\"new_text\":[\"EIGHT\"]}";

	/** pi's request for {@code file} with {@code hunks} (JSON, each counted in hunks_total), {@code note} (JSON). */
	static Approval.Request request(String file, String hunks, String note) {
		int total = hunks.isEmpty() ? 0 : hunks.split("\"id\"").length - 1;
		String json = "{\"protocol\":\"0.4\",\"kind\":\"pi-approval\",\"pid\":4242,\"editor_pid\":77,\"timestamp\":1,"
				+ "\"request\":{\"id\":\"r1\",\"tool\":\"edit\",\"file\":\"" + file + "\",\"created\":false,\"note\":" + note
				+ ",\"hunks_total\":" + total + ",\"timeout_s\":120,\"expires\":121,\"hunks\":[" + hunks + "]}}";
		Approval.Parsed p = Approval.parse(json, 4242);
		assertNull(p.problem, json);
		return p.request;
	}

	static final Approval.Request BOTH = request("/p/notes.txt", HUNKS, "null");

	static Stream<Arguments> against() {
		// name, the document, the disk, the request, the document with the hunks placed (null: no view), places
		// ("from-to" or "from-to!" touching), the notice's words (null: none)
		return Stream.of(
				Arguments.of("no unsaved change: the proposal itself", DISK, DISK, BOTH,
						lines("1", "TWO", "3", "4", "5", "6", "7", "EIGHT", "9", "10"), "1-2 7-8", null),
				Arguments.of("two lines typed at the top: both hunks moved down two lines",
						lines("u1", "u2", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"), DISK, BOTH,
						lines("u1", "u2", "1", "TWO", "3", "4", "5", "6", "7", "EIGHT", "9", "10"), "3-4 9-10", null),
				Arguments.of("lines 4-5 deleted: the second hunk moved up two lines", lines("1", "2", "3", "6", "7", "8", "9", "10"),
						DISK, BOTH, lines("1", "TWO", "3", "6", "7", "EIGHT", "9", "10"), "1-2 5-6", null),
				Arguments.of("line 8 changed: its hunk touches, the user's text kept there",
						lines("1", "2", "3", "4", "5", "6", "7", "mine", "9", "10"), DISK, BOTH,
						lines("1", "TWO", "3", "4", "5", "6", "7", "mine", "9", "10"), "1-2 7-8!",
						"1 of 2 hunks touches your unsaved line 8" + TAIL),
				Arguments.of("lines 7-8 changed, a line typed at the top: named where the user sees them",
						lines("top", "1", "2", "3", "4", "5", "6", "my7", "my8", "9", "10"), DISK, BOTH,
						lines("top", "1", "TWO", "3", "4", "5", "6", "my7", "my8", "9", "10"), "2-3 7-9!",
						"1 of 2 hunks touches your unsaved lines 8-9" + TAIL),
				Arguments.of("both hunks touch", lines("1", "my2", "3", "4", "5", "6", "my7", "my8", "9", "10"), DISK, BOTH,
						lines("1", "my2", "3", "4", "5", "6", "my7", "my8", "9", "10"), "1-2! 6-8!",
						"2 of 2 hunks touch your unsaved lines 2, 7-8" + TAIL),
				Arguments.of("line 8 deleted: the place is where it was", lines("1", "2", "3", "4", "5", "6", "7", "9", "10"), DISK,
						BOTH, lines("1", "TWO", "3", "4", "5", "6", "7", "9", "10"), "1-2 7-7!",
						"1 of 2 hunks touches your unsaved line 8" + TAIL),
				Arguments.of("a line typed right after pi's line 2 (an insertion at its edge): touches",
						lines("1", "2", "new", "3", "4", "5", "6", "7", "8", "9", "10"), DISK, BOTH,
						lines("1", "2", "new", "3", "4", "5", "6", "7", "EIGHT", "9", "10"), "1-3! 8-9",
						"1 of 2 hunks touches your unsaved lines 2-3" + TAIL),
				Arguments.of("a document without a final newline keeps having none", "1\n2\n3\n4\n5\n6\n7\n8\n9\nmine", DISK, BOTH,
						"1\nTWO\n3\n4\n5\n6\n7\nEIGHT\n9\nmine", "1-2 7-8", null),
				Arguments.of("CR-LF document: no view", DISK.replace("\n", "\r\n").replace("5", "mine"), DISK, BOTH, null, null, null),
				Arguments.of("CR-LF on disk: no view", DISK, DISK.replace("\n", "\r\n"), BOTH, null, null, null),
				Arguments.of("a BOM on disk: no view", DISK, "\uFEFF" + DISK, BOTH, null, null, null),
				Arguments.of("a BOM in the document: no view", "\uFEFF" + DISK, DISK, BOTH, null, null, null),
				Arguments.of("the file saved since (pi's lines not on disk): no view", DISK, lines("1", "x", "3"), BOTH, null, null,
						null),
				Arguments.of("the disk shorter than a hunk's place: no view", DISK, lines("1", "2", "3"), BOTH, null, null, null),
				Arguments.of("no disk: no view", DISK, null, BOTH, null, null, null),
				Arguments.of("a request with a note: no view", DISK, DISK, request("/p/notes.txt", "", "\"too large\""), null, null,
						null),
				Arguments.of("a hunk not readable (hunks_total counts it): no view", DISK, DISK,
						request("/p/notes.txt", HUNKS + ",{\"id\":\"h3\",\"old_start\":-1}", "null"), null, null, null),
				Arguments.of("hunks out of order (never pi's): no view", DISK, DISK, request("/p/notes.txt",
						"{\"id\":\"h2\",\"old_start\":8,\"new_start\":8,\"old_text\":[\"8\"],\"new_text\":[\"E\"]},"
								+ "{\"id\":\"h1\",\"old_start\":2,\"new_start\":2,\"old_text\":[\"2\"],\"new_text\":[\"T\"]}", "null"),
						null, null, null),
				Arguments.of("overlapping hunks (never pi's): no view", DISK, DISK, request("/p/notes.txt",
						"{\"id\":\"h1\",\"old_start\":2,\"new_start\":2,\"old_text\":[\"2\",\"3\"],\"new_text\":[]},"
								+ "{\"id\":\"h2\",\"old_start\":3,\"new_start\":2,\"old_text\":[\"3\"],\"new_text\":[\"T\"]}", "null"),
						null, null, null));
	}

	static String places(List<Merge.Place> places) {
		List<String> out = new ArrayList<>();
		for (Merge.Place p : places) out.add(p.from + "-" + p.to + (p.touches ? "!" : ""));
		return String.join(" ", out);
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource
	void against(String name, String document, String disk, Approval.Request r, String placed, String where, String words) {
		ApprovalAgainst.View view = ApprovalAgainst.against(r, disk, document);
		if (placed == null) {
			assertNull(view, name);
			return;
		}
		assertNotNull(view, name);
		assertEquals(placed, view.text, name);
		assertEquals(where, places(view.places), name);
		assertEquals(words, ApprovalAgainst.touchPhrase(view.places, false), name);
	}

	static Merge.Place place(int from, int to, boolean touches) {
		return new Merge.Place(from, to, touches);
	}

	static Stream<Arguments> words() {
		// name, places, the short words (null: none)
		return Stream.of(
				Arguments.of("none touches", Arrays.asList(place(0, 1, false), place(4, 5, false)), null),
				Arguments.of("the only hunk touches one line", Arrays.asList(place(11, 12, true)),
						"1 of 1 hunk touches your unsaved line 12"),
				Arguments.of("one of two, a span", Arrays.asList(place(0, 1, false), place(6, 8, true)),
						"1 of 2 hunks touches your unsaved lines 7-8"),
				Arguments.of("a place of no lines (the user deleted them): the line it stands on",
						Arrays.asList(place(7, 7, true)), "1 of 1 hunk touches your unsaved line 8"),
				Arguments.of("two places apart", Arrays.asList(place(1, 2, true), place(6, 8, true)),
						"2 of 2 hunks touch your unsaved lines 2, 7-8"),
				Arguments.of("two hunks on one change of the user's: named once", Arrays.asList(place(2, 6, true), place(2, 6, true)),
						"2 of 2 hunks touch your unsaved lines 3-6"),
				Arguments.of("spans that overlap are joined", Arrays.asList(place(2, 5, true), place(4, 8, true)),
						"2 of 2 hunks touch your unsaved lines 3-8"),
				Arguments.of("spans that meet are joined", Arrays.asList(place(2, 4, true), place(4, 6, true)),
						"2 of 2 hunks touch your unsaved lines 3-6"),
				Arguments.of("two one-line places that meet: a span, \"lines\"", Arrays.asList(place(2, 3, true), place(3, 4, true)),
						"2 of 2 hunks touch your unsaved lines 3-4"),
				Arguments.of("a deleted place right after a span is joined to it", Arrays.asList(place(2, 4, true), place(4, 4, true)),
						"2 of 2 hunks touch your unsaved lines 3-5"),
				Arguments.of("five places: all named", Arrays.asList(place(0, 1, true), place(2, 3, true), place(4, 5, true),
						place(6, 7, true), place(8, 9, true)), "5 of 5 hunks touch your unsaved lines 1, 3, 5, 7, 9"),
				Arguments.of("six places: five named, then \u2026", Arrays.asList(place(0, 1, true), place(2, 3, true),
						place(4, 5, true), place(6, 7, true), place(8, 9, true), place(10, 12, true), place(14, 15, false)),
						"6 of 7 hunks touch your unsaved lines 1, 3, 5, 7, 9, \u2026"));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource
	void words(String name, List<Merge.Place> places, String words) {
		assertEquals(words, ApprovalAgainst.touchPhrase(places, true), name);
		assertEquals(words == null ? null : words + TAIL, ApprovalAgainst.touchPhrase(places, false), name);
	}

	// ---- the host side: the document through the host, the file on disk real ----

	@TempDir
	Path dir;

	@Test
	void theNoticeNamesTheTouchedLinesOfTheUnsavedDocumentAgainstTheFileOnDisk() throws Exception {
		Path file = dir.resolve("notes.txt");
		Files.write(file, DISK.getBytes(StandardCharsets.UTF_8));
		MergeTest.Documents host = new MergeTest.Documents();
		String path = file.toString();
		host.facts.put(path, new Reload.Facts(true, true, Reload.PathKind.REGULAR, path, Reload.PathKind.REGULAR, path, false));
		host.texts.put(path, lines("top", "1", "2", "3", "4", "5", "6", "my7", "my8", "9", "10"));
		Approval.Request r = request(path, HUNKS, "null");
		ApprovalAgainst.View view = ApprovalAgainst.of(r, host);
		assertEquals("pi wants to edit notes.txt: 2 hunks; 1 of 2 hunks touches your unsaved lines 8-9" + TAIL,
				ApprovalAgainst.notice(r, "notes.txt", view));
		assertEquals(lines("top", "1", "TWO", "3", "4", "5", "6", "my7", "my8", "9", "10"), view.text);
		// Nothing is written: the file and the document are as they were.
		assertEquals(DISK, new String(Files.readAllBytes(file), StandardCharsets.UTF_8));
		assertEquals(lines("top", "1", "2", "3", "4", "5", "6", "my7", "my8", "9", "10"), host.texts.get(path));
	}

	@Test
	void noWordsWhereTheDocumentIsSavedTheFileIsNotWhatWasReadOrTheDiskIsNotTheProposals() throws Exception {
		Path file = dir.resolve("notes.txt");
		Files.write(file, DISK.getBytes(StandardCharsets.UTF_8));
		String path = file.toString();
		Approval.Request r = request(path, HUNKS, "null");
		MergeTest.Documents host = new MergeTest.Documents();
		host.facts.put(path, new Reload.Facts(true, true, Reload.PathKind.REGULAR, path, Reload.PathKind.REGULAR, path, false));
		// Saved (the host has no unsaved text): the words of a request as before.
		host.merges = false;
		assertNull(ApprovalAgainst.of(r, host));
		assertEquals("pi wants to edit notes.txt: 2 hunks", ApprovalAgainst.notice(r, "notes.txt", ApprovalAgainst.of(r, host)));
		host.merges = true;
		host.texts.put(path, lines("1", "2", "3", "4", "5", "6", "7", "mine", "9", "10"));
		assertNotNull(ApprovalAgainst.of(r, host));
		// The path is a symlink now, where a regular file was read: the reload rule refuses, nothing is read.
		Path elsewhere = dir.resolve("elsewhere.txt");
		Files.write(elsewhere, DISK.getBytes(StandardCharsets.UTF_8));
		host.facts.put(path, new Reload.Facts(true, true, Reload.PathKind.REGULAR, path, Reload.PathKind.LINK_TO_REGULAR,
				elsewhere.toString(), false));
		assertNull(ApprovalAgainst.of(r, host));
		host.facts.put(path, new Reload.Facts(true, true, Reload.PathKind.REGULAR, path, Reload.PathKind.REGULAR, path, false));
		// The disk no longer holds pi's old lines where it says.
		Files.write(file, lines("1", "x", "3").getBytes(StandardCharsets.UTF_8));
		assertNull(ApprovalAgainst.of(r, host));
		// Not UTF-8 on disk.
		Files.write(file, new byte[] {'1', '\n', (byte) 0xff, '\n'});
		assertNull(ApprovalAgainst.of(r, host));
		// A host that fails never makes the request fail: no words.
		Inbox.Host broken = new Inbox.Host() {
			public Reload.Facts facts(String f) {
				throw new IllegalStateException("the host failed");
			}

			public void reload(String f) {}

			public Long version(String f) {
				return null;
			}

			public boolean diagnosticsExpected(String f) {
				return false;
			}

			public java.util.Map<String, Object> diagnostics(String f) {
				return null;
			}

			public void notifyModified(String f, String notice) {}

			@Override
			public String documentText(String f) {
				return DISK;
			}
		};
		assertNull(ApprovalAgainst.of(r, broken));
	}
}
