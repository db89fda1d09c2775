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

	@Test
	void fortyFilesInOneMessageAllAnsweredThenEachPisNewestTwentyStay() {
		Buffers host = new Buffers();
		double[] now = {1000};
		Inbox inbox = new Inbox(1, () -> now[0]);
		StringBuilder changes = new StringBuilder("[");
		for (int i = 1; i <= 40; i++) changes.append(i == 1 ? "" : ",").append(change("/f" + i, 4));
		inbox.handle(parsed("1", changes.append("]").toString()), host);
		assertEquals(40, inbox.files().size(), "every report kept while pi may wait for it");
		now[0] += PiMessage.FILE_REPORT_HOLD_SECONDS;
		List<Map<String, Object>> files = inbox.files();
		assertEquals(PiMessage.KEPT_FILE_REPORTS, files.size());
		assertEquals("/f21", files.get(0).get("file"));
		assertEquals("/f40", files.get(files.size() - 1).get("file"));
	}

	@Test
	void twoPisWritingOneFileEachKeepTheirAnswer() {
		Map<String, Object> a = Reload.report("/a", 1, 100, "reloaded", 1L, false, false, null);
		Map<String, Object> b = Reload.report("/a", 1, 200, "reloaded", 1L, false, false, null);
		List<PiMessage.Held> held = PiMessage.addReport(PiMessage.addReport(new java.util.ArrayList<>(), a, 0), b, 0);
		assertEquals(List.of(100L, 200L), held.stream().map(h -> h.report.get("pi_pid")).collect(Collectors.toList()));
		Map<String, Object> a2 = Reload.report("/a", 2, 100, "reloaded", 2L, false, false, null);
		held = PiMessage.addReport(held, a2, 0);
		assertEquals(List.of(200L, 100L), held.stream().map(h -> h.report.get("pi_pid")).collect(Collectors.toList()));
	}

	@Test
	void atMostTwoHundredReportsTheNewest() {
		List<PiMessage.Held> held = new java.util.ArrayList<>();
		for (int i = 0; i < 250; i++) held = PiMessage.addReport(held, Reload.report("/f" + i, 1, 100, "not-open", null, false, false, null), 0);
		assertEquals(PiMessage.MAX_FILE_REPORTS, held.size());
		assertEquals("/f50", held.get(0).report.get("file"));
	}
}
