package pi.ide.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Send to pi (v0.5): what each form hands over, which pi, the request written, pi's answer. Tables. */
class SendTest {
	static final String FILE = "/p/a.txt";
	static final Text.Lines LINES = Text.linesOf("one\ntwo\nthree\n");

	static Text.HostPosition at(int line, int character) {
		return new Text.HostPosition(line, character);
	}

	static Map<String, Object> diagnostics(Object... items) {
		Map<String, Object> report = new LinkedHashMap<>();
		report.put("items", Arrays.asList(items));
		return report;
	}

	static Map<String, Object> diagnostic(int line, Integer endLine, String message) {
		Map<String, Object> d = new LinkedHashMap<>();
		d.put("line", line);
		if (endLine != null) d.put("end_line", endLine);
		d.put("message", message);
		return d;
	}

	/** form, caret, anchor, head, diagnostics, hunk; then kind, start, end, text, message, or the notice. */
	static Stream<Arguments> items() {
		return Stream.of(
				Arguments.of("default", at(1, 0), null, null, null, null, "line 2-2 two null"),
				Arguments.of("default", at(0, 0), at(0, 1), at(1, 2), null, null, "selection 1-2 one\ntwo null"),
				Arguments.of("default", at(0, 0), at(0, 0), at(2, 0), null, null, "selection 1-2 one\ntwo null"),
				Arguments.of("default", at(0, 0), at(2, 1), at(1, 0), null, null, "selection 2-3 two\nthree null"),
				Arguments.of("file", at(1, 0), null, null, null, null, "file 1-3 one\ntwo\nthree null"),
				Arguments.of("diagnostic", at(2, 0), null, null,
						diagnostics(diagnostic(1, null, "elsewhere"), diagnostic(2, 3, "bad")), null, "diagnostic 2-3 two\nthree bad"),
				Arguments.of("diagnostic", at(1, 0), null, null, diagnostics(diagnostic(3, null, "x")), null, Send.NO_DIAGNOSTIC),
				Arguments.of("diagnostic", at(1, 0), null, null, null, null, Send.NO_DIAGNOSTIC),
				Arguments.of("hunk", at(1, 0), null, null, null, new int[] {1, 2}, "hunk 2-3 two\nthree null"),
				Arguments.of("hunk", at(1, 0), null, null, null, null, Send.NO_HUNK));
	}

	@ParameterizedTest
	@MethodSource("items")
	void eachFormHandsOver(String form, Text.HostPosition caret, Text.HostPosition anchor, Text.HostPosition head,
			Map<String, Object> diagnostics, int[] hunk, String expected) {
		Send.Item r = Send.item(form, FILE, LINES, caret, anchor, head, diagnostics, hunk);
		if (r.item == null) {
			assertEquals(expected, r.notice);
			return;
		}
		Map<String, Object> i = r.item;
		assertEquals(expected, i.get("kind") + " " + i.get("start_line") + "-" + i.get("end_line") + " " + i.get("text") + " "
				+ i.get("message"));
		assertEquals(false, i.get("truncated"));
	}

	@Test
	void notAFileSendsNothing() {
		assertEquals(Send.NOT_FILE, Send.item("default", null, LINES, at(0, 0), null, null, null, null).notice);
	}

	@Test
	void aLinePastTheCapIsCutEncoded() {
		String quotes = String.join("", Collections.nCopies(200 * 1024, "\""));
		Send.Item r = Send.item("default", FILE, Text.linesOf(quotes + "\n"), at(0, 0), null, null, null, null);
		assertEquals(true, r.item.get("truncated"));
		assertEquals(128 * 1024, ((String) r.item.get("text")).length(), "two bytes each once encoded: 256 KiB");
	}

	static PiMessage pi(long pid, long editor) {
		PiMessage.Parsed p = PiMessage.parse("{\"protocol\":\"0.5\",\"kind\":\"pi\",\"pid\":" + pid + ",\"cwd\":\"/w" + pid
				+ "\",\"timestamp\":1,\"editor_pid\":" + editor + ",\"seq\":0,\"changed\":[],\"last_turn\":[]}");
		return p.message;
	}

	@Test
	void whichPiNoneOneOrPickedOnceAndRemembered(@TempDir Path tmp) {
		Send.Desk desk = new Send.Desk(77, tmp.resolve("d"), StateDir.ownUid());
		String[] why = new String[1];
		int[] asked = {0};
		List<PiMessage> all = Arrays.asList(pi(9, 77), pi(5, 77), pi(6, 78));
		assertNull(desk.pick(Send.naming(Collections.<PiMessage>emptyList(), 77), c -> null, why));
		assertEquals(Send.NO_PI, why[0]);
		List<PiMessage> mine = Send.naming(all, 77);
		assertEquals(Arrays.asList(5L, 9L), Arrays.asList(mine.get(0).pid, mine.get(1).pid));
		assertEquals(9L, desk.pick(mine, c -> {
			asked[0]++;
			return c.get(1);
		}, why).pid);
		assertEquals(9L, desk.pick(mine, c -> {
			asked[0]++;
			return c.get(0);
		}, why).pid, "remembered");
		assertEquals(1, asked[0]);
		assertNull(desk.pick(Arrays.asList(pi(5, 77), pi(7, 77)), c -> null, why));
		assertEquals(Send.NOT_PICKED, why[0]);
	}

	static Stream<Arguments> fates() {
		return Stream.of(Arguments.of("draft", null, "line in pi's input as a draft"),
				Arguments.of("prompt", null, "line sent to pi as a prompt"),
				Arguments.of("follow-up", null, "line queued for pi as a follow-up"),
				Arguments.of("excluded", null, "not sent: the file is excluded by pi's ignore rules"),
				Arguments.of("refused", "old\n\u001b[31m", "pi refused the send: old\\u000a\\u001b[31m"));
	}

	@ParameterizedTest
	@MethodSource("fates")
	void writtenForPiAndAnsweredInOneLine(String fate, String reason, String line, @TempDir Path tmp) throws Exception {
		Path dir = tmp.resolve("pi-ide");
		Send.Desk desk = new Send.Desk(77, dir, StateDir.ownUid());
		Map<String, Object> item = Send.item("default", FILE, LINES, at(1, 0), null, null, null, null).item;
		assertNull(desk.write(pi(5, 77), item, "now", String.join("", Collections.nCopies(9000, "é")), 1700000000.5));
		Path file = dir.resolve("77.send.json");
		Set<PosixFilePermission> mode = Files.getPosixFilePermissions(file);
		assertEquals(2, mode.size(), "0600: " + mode);
		@SuppressWarnings("unchecked")
		Map<String, Object> request = (Map<String, Object>) Json.parse(new String(Files.readAllBytes(file), StandardCharsets.UTF_8));
		assertEquals(Arrays.asList("send", 77L, 5L, "now"),
				Arrays.asList(request.get("kind"), request.get("pid"), request.get("pi_pid"), request.get("mode")));
		assertEquals(8192, ((String) request.get("prompt")).length(), "cut to 16 KiB on a character boundary");
		String id = desk.lastId();
		String answer = "{\"protocol\":\"0.5\",\"kind\":\"pi\",\"pid\":5,\"cwd\":\"/w\",\"timestamp\":1,\"editor_pid\":77,\"seq\":1,"
				+ "\"changed\":[],\"last_turn\":[],\"sent\":{\"editor_pid\":%d,\"id\":\"%s\",\"fate\":\"" + fate + "\""
				+ (reason == null ? "" : ",\"reason\":" + Json.write(reason)) + "}}";
		assertNull(desk.answered(PiMessage.parse(String.format(answer, 78, id)).message), "another editor's");
		assertNull(desk.answered(PiMessage.parse(String.format(answer, 77, "other")).message), "another id");
		assertEquals(line, desk.answered(PiMessage.parse(String.format(answer, 77, id)).message));
		assertNull(desk.answered(PiMessage.parse(String.format(answer, 77, id)).message), "said once");
		assertTrue(desk.summary().endsWith("to pi 5: " + fate), desk.summary());
		desk.dispose();
		assertTrue(!Files.exists(file), "removed on exit");
	}
}
