package pi.ide.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** pi's message: the parser's problems, which changes are pending, and the inbox acting on them. */
class PiMessageTest {
	static String message(String editorPid, String changed) {
		return "{\"protocol\":\"0.3\",\"kind\":\"pi\",\"pid\":77,\"cwd\":\"/p\",\"timestamp\":1.5,\"editor_pid\":" + editorPid
				+ ",\"seq\":9,\"changed\":" + changed + ",\"last_turn\":[]}";
	}

	static Stream<Arguments> problems() {
		return Stream.of(
				Arguments.of("not json", "{", "invalid JSON"),
				Arguments.of("an array", "[]", "not a JSON object"),
				Arguments.of("wrong kind", "{\"kind\":\"editor\"}", "kind"),
				Arguments.of("a string pid", message("1", "[]").replace("\"pid\":77", "\"pid\":\"77\""), "pid"),
				Arguments.of("pid 0", message("1", "[]").replace("\"pid\":77", "\"pid\":0"), "pid"),
				Arguments.of("editor_pid 1.5", message("1.5", "[]"), "editor_pid"),
				Arguments.of("changed not a list", message("1", "{}"), "changed: not an array"),
				Arguments.of("a relative file", message("1", "[{\"file\":\"a.ts\",\"seq\":1,\"tool\":\"edit\"}]"), "changed[0].file"),
				Arguments.of("a negative seq", message("1", "[{\"file\":\"/a\",\"seq\":-1,\"tool\":\"edit\"}]"), "changed[0].seq"),
				Arguments.of("a tool number", message("1", "[{\"file\":\"/a\",\"seq\":1,\"tool\":3}]"), "changed[0].tool"),
				Arguments.of("fine", message("null", "[]"), null),
				Arguments.of("unknown fields are fine", message("1", "[]").replace("{", "{\"later\":[1],"), null));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource
	void problems(String name, String text, String problem) {
		PiMessage.Parsed parsed = PiMessage.parse(text);
		if (problem == null) assertNull(parsed.problem, parsed.problem);
		else assertTrue(parsed.problem != null && parsed.problem.startsWith(problem), parsed.problem);
	}

	static PiMessage parsed(String editorPid, String changed) {
		return PiMessage.parse(message(editorPid, changed)).message;
	}

	static String change(String file, int seq) {
		return "{\"file\":\"" + file + "\",\"seq\":" + seq + ",\"tool\":\"edit\"}";
	}

	static Stream<Arguments> pending() {
		String three = "[" + change("/a", 1) + "," + change("/b", 2) + "," + change("/a", 3) + "]";
		return Stream.of(
				Arguments.of("another editor's", "5", three, null, ""),
				Arguments.of("no editor", "null", three, null, ""),
				Arguments.of("first message: only the newest batch", "1", three, null, "/a@3"),
				Arguments.of("after seq 1: the newest entry per file", "1", three, 1L, "/b@2 /a@3"),
				Arguments.of("all handled", "1", three, 3L, ""));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource
	void pending(String name, String editorPid, String changed, Long handled, String expected) {
		String got = parsed(editorPid, changed).pending(1, handled).stream().map(c -> c.file + "@" + c.seq)
				.collect(Collectors.joining(" "));
		assertEquals(expected, got);
	}

	static Stream<Arguments> names() {
		return Stream.of(Arguments.of("pi-42.json", 42L), Arguments.of("pi-042.json", -1L), Arguments.of("pi-2147483648.json", -1L),
				Arguments.of("pi-42.json.tmp", -1L), Arguments.of("42.json", -1L));
	}

	@ParameterizedTest
	@MethodSource
	void names(String name, long pid) {
		assertEquals(pid, PiMessage.pidOfName(name));
	}

	/** A host over plain data: what the inbox asked for and did. */
	static final class Buffers implements Inbox.Host {
		final Map<String, Reload.Facts> facts = new HashMap<>();
		final List<String> reloaded = new ArrayList<>();
		final List<String> notices = new ArrayList<>();

		public Reload.Facts facts(String file) {
			Reload.Facts f = facts.get(file);
			return f != null ? f : new Reload.Facts(false, false, Reload.PathKind.UNKNOWN, null, Reload.PathKind.REGULAR, file, false);
		}

		public void reload(String file) {
			reloaded.add(file);
		}

		public Long version(String file) {
			return 7L;
		}

		public boolean diagnosticsExpected(String file) {
			return true;
		}

		public Map<String, Object> diagnostics(String file) {
			return null;
		}

		public void notifyModified(String file, String notice) {
			notices.add(file);
		}
	}

	static Reload.Facts open(boolean modified) {
		return new Reload.Facts(true, modified, Reload.PathKind.REGULAR, "/r", Reload.PathKind.REGULAR, "/r", false);
	}

	@Test
	void theInboxActsOnceAndNotifiesOnce() {
		Buffers host = new Buffers();
		host.facts.put("/a", open(false));
		host.facts.put("/m", open(true));
		Inbox inbox = new Inbox(1);
		PiMessage first = parsed("1", "[" + change("/a", 4) + "," + change("/m", 4) + "," + change("/x", 4) + "]");
		assertTrue(inbox.handle(first, host));
		assertFalse(inbox.handle(first, host), "the same message twice is acted on once");
		assertEquals(List.of("/a"), host.reloaded);
		assertEquals(List.of("/m"), host.notices);
		List<String> statuses = inbox.files().stream().map(r -> r.get("file") + "=" + r.get("status") + "@" + r.get("version"))
				.collect(Collectors.toList());
		assertEquals(List.of("/a=reloaded@7", "/m=modified@7", "/x=not-open@null"), statuses);
		assertEquals(77L, inbox.pi().get("pid"));
		assertEquals(9L, inbox.pi().get("seq"));
		assertEquals(77L, inbox.files().get(0).get("pi_pid"));
	}

	/** pi 77's message to editor 1 with seq {@code seq} listing /f{from}../f{to} at seqs from..to (inclusive). */
	static PiMessage listing(long seq, int from, int to) {
		StringBuilder changes = new StringBuilder("[");
		for (int i = from; i <= to; i++) changes.append(i == from ? "" : ",").append(change("/f" + i, i));
		return PiMessage.parse(message("1", changes.append("]").toString()).replace("\"seq\":9,", "\"seq\":" + seq + ","))
				.message;
	}

	static List<String> files(Inbox inbox) {
		List<Map<String, Object>> files = inbox.files();
		return files == null ? List.of() : files.stream().map(r -> (String) r.get("file")).collect(Collectors.toList());
	}

	static List<String> fileRange(int from, int to) {
		List<String> out = new ArrayList<>();
		for (int i = from; i <= to; i++) out.add("/f" + i);
		return out;
	}

	@Test
	void fortyFilesAllAnsweredWhileListedThenEachPisNewestTwentyStay() {
		Buffers host = new Buffers();
		Inbox inbox = new Inbox(1);
		inbox.handle(listing(0, 1, 0), host); // connected: every later change is news
		inbox.handle(listing(40, 1, 40), host);
		assertEquals(fileRange(1, 40), files(inbox), "every report its message lists, however late pi reads");
		assertEquals(fileRange(1, 40), files(inbox), "no clock: read again, still all 40");
		// pi's newer message lists only its newest 5 changes: those beyond its newest 20 go.
		inbox.handle(listing(41, 37, 41), host);
		assertEquals(fileRange(22, 41), files(inbox));
	}

	@Test
	void aPiWhoseNewestMessageNamesAnotherEditorListsNothingHere() {
		Buffers host = new Buffers();
		Inbox inbox = new Inbox(1);
		inbox.handle(listing(0, 1, 0), host);
		inbox.handle(listing(40, 1, 40), host);
		inbox.handle(PiMessage.parse(message("5", "[]")).message, host);
		assertEquals(fileRange(21, 40), files(inbox));
	}

	static Map<String, Object> report(String file, long seq, long piPid, String piNs) {
		Map<String, Object> r = Reload.report(file, seq, piPid, "not-open", null, false, false, null);
		if (piNs != null) r.put("pi_ns", piNs);
		return r;
	}

	static Stream<Arguments> retention() {
		String ns = "pid:[4026532455]";
		return Stream.of(
				Arguments.of("the pi's own listing keeps its oldest 5", 100L, null, 5, 25),
				Arguments.of("another pi's listing of the same changes keeps none", 200L, null, 0, 20),
				Arguments.of("the same pid in another namespace is another pi", 100L, ns, 0, 20));
	}

	/** 40 reports of pi 100 (host namespace) on /f1../f40 at seqs 1..40; a listing of /f1../f5 by listedPid, listedNs. */
	@ParameterizedTest(name = "{0}")
	@MethodSource
	void retention(String name, long listedPid, String listedNs, int oldestKept, int kept) {
		List<Map<String, Object>> held = new ArrayList<>();
		for (int i = 1; i <= 40; i++) held.add(report("/f" + i, i, 100, null));
		List<PiMessage.Change> changed = new ArrayList<>();
		for (int i = 1; i <= 5; i++) changed.add(new PiMessage.Change("/f" + i, i, "write"));
		Map<String, List<PiMessage.Change>> listed = new HashMap<>();
		listed.put(PiIdentity.keyOf(report("/x", 1, listedPid, listedNs)), changed);
		List<String> expected = new ArrayList<>(fileRange(1, oldestKept));
		expected.addAll(fileRange(21, 40));
		assertEquals(expected, PiMessage.retain(held, listed).stream().map(r -> (String) r.get("file"))
				.collect(Collectors.toList()));
		assertEquals(kept, expected.size());
	}

	@Test
	void aListedFileAtAnotherSeqKeepsNothing() {
		List<Map<String, Object>> held = new ArrayList<>();
		for (int i = 1; i <= 40; i++) held.add(report("/f" + i, i, 100, null));
		Map<String, List<PiMessage.Change>> listed = new HashMap<>();
		listed.put(PiIdentity.keyOf(held.get(0)), List.of(new PiMessage.Change("/f1", 2, "write")));
		assertEquals(fileRange(21, 40), PiMessage.retain(held, listed).stream().map(r -> (String) r.get("file"))
				.collect(Collectors.toList()));
	}

	@Test
	void twoPisWritingOneFileEachKeepTheirAnswer() {
		Map<String, List<PiMessage.Change>> none = Map.of();
		Map<String, Object> a = Reload.report("/a", 1, 100, "reloaded", 1L, false, false, null);
		Map<String, Object> b = Reload.report("/a", 1, 200, "reloaded", 1L, false, false, null);
		List<Map<String, Object>> held = PiMessage.addReport(PiMessage.addReport(new ArrayList<>(), a, none), b, none);
		assertEquals(List.of(100L, 200L), held.stream().map(h -> h.get("pi_pid")).collect(Collectors.toList()));
		Map<String, Object> a2 = Reload.report("/a", 2, 100, "reloaded", 2L, false, false, null);
		held = PiMessage.addReport(held, a2, none);
		assertEquals(List.of(200L, 100L), held.stream().map(h -> h.get("pi_pid")).collect(Collectors.toList()));
	}

	@Test
	void atMostTwoHundredReportsTheNewest() {
		// Five pis listing 50 changes each: 250 wanted, the newest 200 stay.
		List<Map<String, Object>> held = new ArrayList<>();
		Map<String, List<PiMessage.Change>> listed = new HashMap<>();
		for (long pid = 1; pid <= 5; pid++) {
			List<PiMessage.Change> changed = new ArrayList<>();
			for (int i = 0; i < 50; i++) {
				changed.add(new PiMessage.Change("/p" + pid + "f" + i, i + 1, "write"));
				listed.put(PiIdentity.keyOf(report("/x", 1, pid, null)), changed);
				held = PiMessage.addReport(held, report("/p" + pid + "f" + i, i + 1, pid, null), listed);
			}
		}
		assertEquals(PiMessage.MAX_FILE_REPORTS, held.size());
		assertEquals("/p2f0", held.get(0).get("file"));
	}
}
