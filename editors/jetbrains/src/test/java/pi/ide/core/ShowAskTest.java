package pi.ide.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * v0.5 show and ask (PROTOCOL.md, "v0.5: the model shows a place and asks what is open"), the editor's half: pi's
 * request file parsed and read under the checks of pi's message, an ask answered from the open documents (order,
 * caps, dated diagnostics), each request answered once into {@code <pid>.answers.json}, a show listed (or opened
 * with follow) with one inert notice. Tables.
 */
class ShowAskTest {
	@TempDir
	Path dir;

	static final long PI = 4242;
	static final long EDITOR = 7;
	static final String SHOW = "{\"id\":\"s1\",\"kind\":\"show\",\"file\":\"/p/a.ts\",\"line\":2,\"end_line\":3,"
			+ "\"note\":\"look\",\"expires\":2e9}";

	static String file(String requests) {
		return "{\"protocol\":\"0.5\",\"kind\":\"pi-ask\",\"pid\":4242,\"editor_pid\":7,\"timestamp\":1,\"requests\":["
				+ requests + "]}";
	}

	static String repeat(String s, int n) {
		return String.join("", Collections.nCopies(n, s));
	}

	static Stream<Arguments> parses() {
		// name, the file's text, the whole file's problem (null: parsed), requests kept, the first dropped one's problem
		return Stream.of(
				Arguments.of("a show", file(SHOW), null, 1, null),
				Arguments.of("an ask for a file", file("{\"id\":\"a\",\"kind\":\"ask\",\"diagnostics\":\"file\",\"file\":\"/p/b\",\"expires\":1}"), null, 1, null),
				Arguments.of("an ask for all, no file", file("{\"id\":\"a\",\"kind\":\"ask\",\"diagnostics\":\"all\",\"expires\":1}"), null, 1, null),
				Arguments.of("a show without a line", file(SHOW.replace("\"line\":2,", "")), null, 0, "no absolute file and line"),
				Arguments.of("a show of a relative file", file(SHOW.replace("/p/a.ts", "a.ts")), null, 0, "no absolute file"),
				Arguments.of("line 0", file(SHOW.replace("\"line\":2", "\"line\":0")), null, 0, "no absolute file and line"),
				Arguments.of("line 1.5", file(SHOW.replace("\"line\":2", "\"line\":1.5")), null, 0, "no absolute file and line"),
				Arguments.of("line 2^31", file(SHOW.replace("\"line\":2", "\"line\":2147483648")), null, 0, "no absolute file and line"),
				Arguments.of("end_line before line", file(SHOW.replace("\"end_line\":3", "\"end_line\":1")), null, 0, "end_line"),
				Arguments.of("end_line null", file(SHOW.replace("\"end_line\":3", "\"end_line\":null")), null, 1, null),
				Arguments.of("a note of 1024 bytes (341 three-byte characters and one)", file(SHOW.replace("\"look\"", "\"" + repeat("€", 341) + "a\"")), null, 1, null),
				Arguments.of("a note of 1025 bytes", file(SHOW.replace("\"look\"", "\"" + repeat("€", 341) + "ab\"")), null, 0, "note"),
				Arguments.of("a note that is a number", file(SHOW.replace("\"look\"", "5")), null, 0, "note"),
				Arguments.of("an id of 65 bytes", file(SHOW.replace("\"s1\"", "\"" + repeat("i", 65) + "\"")), null, 0, "id"),
				Arguments.of("an empty id", file(SHOW.replace("\"s1\"", "\"\"")), null, 0, "id"),
				Arguments.of("no expires", file(SHOW.replace(",\"expires\":2e9", "")), null, 0, "expires"),
				Arguments.of("an unknown kind", file(SHOW.replace("\"show\"", "\"open\"")), null, 0, "kind"),
				Arguments.of("an ask's diagnostics unknown", file("{\"id\":\"a\",\"kind\":\"ask\",\"diagnostics\":\"some\",\"expires\":1}"), null, 0, "file, all or none"),
				Arguments.of("an ask for a file naming none", file("{\"id\":\"a\",\"kind\":\"ask\",\"diagnostics\":\"file\",\"expires\":1}"), null, 0, "names no absolute file"),
				Arguments.of("a bad request beside a good one", file(SHOW + ",{\"id\":\"x\"}"), null, 1, "expires"),
				Arguments.of("8 requests", file(String.join(",", Collections.nCopies(8, SHOW))), null, 8, null),
				Arguments.of("9 requests", file(String.join(",", Collections.nCopies(9, SHOW))), "at most 8", 0, null),
				Arguments.of("another kind", file(SHOW).replace("pi-ask", "pi"), "kind", 0, null),
				Arguments.of("the pid is not the name's", file(SHOW).replace("\"pid\":4242", "\"pid\":4243"), "does not match", 0, null),
				Arguments.of("pid_ns not a namespace", file(SHOW).replace("\"pid\":4242", "\"pid\":4242,\"pid_ns\":\"x\""), "pid_ns", 0, null),
				Arguments.of("editor_pid missing", file(SHOW).replace("\"editor_pid\":7,", ""), "editor_pid", 0, null),
				Arguments.of("malformed JSON", "{\"kind\": \"pi-ask\", ", "invalid JSON", 0, null),
				Arguments.of("nested 17 levels", file(SHOW).replace("\"timestamp\":1", "\"x\":" + repeat("[", 16) + repeat("]", 16)), "invalid JSON", 0, null));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("parses")
	void parse(String name, String text, String problem, int kept, String dropped) {
		ShowAsk.Parsed p = ShowAsk.parse(text, PI);
		if (problem != null) {
			assertNull(p.file);
			assertTrue(p.problem.contains(problem), p.problem);
			return;
		}
		assertNull(p.problem, p.problem);
		assertEquals(kept, p.file.requests.size());
		if (dropped == null) assertNull(p.file.problem, p.file.problem);
		else assertTrue(p.file.problem.contains(dropped), String.valueOf(p.file.problem));
	}

	static Stream<Arguments> names() {
		// pi's request file names (PiIdentity): name, kind, pid, namespace digits; null kind: not a name of pi's
		return Stream.of(
				Arguments.of("pi-42.ask.json", "ask", 42L, null),
				Arguments.of("pi-1-4026532455.ask.json", "ask", 1L, "4026532455"),
				Arguments.of("pi-7-4026531836.ask.json", null, 0L, null),
				Arguments.of("pi-042.ask.json", null, 0L, null),
				Arguments.of("pi-42.ask.json.tmp", null, 0L, null),
				Arguments.of("pi-42.asks.json", null, 0L, null));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("names")
	void requestFileNames(String name, String kind, long pid, String ns) {
		PiIdentity.Name n = PiIdentity.parse(name);
		if (kind == null) {
			assertNull(n);
			return;
		}
		assertEquals(Arrays.asList(kind, pid, ns), Arrays.asList(n.kind, n.pid, n.ns));
	}

	static void write(Path path, String text, String mode) throws Exception {
		Files.write(path, text.getBytes(StandardCharsets.UTF_8));
		Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(mode));
	}

	static Stream<Arguments> reads() {
		// name, file name, text, mode, liveness of its pid, expected kind, problem fragment
		String boxed = file(SHOW).replace("\"pid\":4242", "\"pid\":4242,\"pid_ns\":\"pid:[4026532455]\"");
		return Stream.of(
				Arguments.of("a live pi's request", "pi-4242.ask.json", file(SHOW), "rw-------", "alive", "ask", null),
				Arguments.of("from a dead pi", "pi-4242.ask.json", file(SHOW), "rw-------", "dead", "dead", null),
				Arguments.of("another user's pid", "pi-4242.ask.json", file(SHOW), "rw-------", "foreign", "problem", "another user"),
				Arguments.of("for another editor", "pi-4242.ask.json", file(SHOW).replace("\"editor_pid\":7", "\"editor_pid\":8"), "rw-------", "alive", "elsewhere", null),
				Arguments.of("group-readable", "pi-4242.ask.json", file(SHOW), "rw-r-----", "alive", "problem", "readable or writable by others"),
				Arguments.of("over 64 KiB", "pi-4242.ask.json", file(SHOW).replace("\"timestamp\":1", "\"pad\":\"" + repeat("x", 65536) + "\""), "rw-------", "alive", "problem", "over the 65536-byte limit"),
				Arguments.of("a sandboxed pi (its pid dead here) is not judged", "pi-4242-4026532455.ask.json", boxed, "rw-------", "dead", "ask", null),
				Arguments.of("a namespace in the name, none in the file", "pi-4242-4026532455.ask.json", file(SHOW), "rw-------", "alive", "problem", "pid_ns"),
				Arguments.of("a host name naming another namespace", "pi-4242.ask.json", boxed, "rw-------", "alive", "problem", "pid_ns"),
				Arguments.of("not a request's name", "pi-4242.json", file(SHOW), "rw-------", "alive", "problem", "not named"));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("reads")
	void read(String name, String fileName, String text, String mode, String liveness, String kind, String problem)
			throws Exception {
		write(dir.resolve(fileName), text, mode);
		ShowAsk.Read r = ShowAsk.read(dir, fileName, StateDir.ownUid(), pid -> liveness, EDITOR, PiIdentity.INITIAL_NS);
		assertEquals(kind, r.kind, String.valueOf(r.problem));
		if (problem != null) assertTrue(r.problem.contains(problem), r.problem);
	}

	@Test
	void aSymlinkedRequestIsRefused() throws Exception {
		write(dir.resolve("real.json"), file(SHOW), "rw-------");
		Files.createSymbolicLink(dir.resolve("pi-4242.ask.json"), dir.resolve("real.json"));
		ShowAsk.Read r = ShowAsk.read(dir, "pi-4242.ask.json", StateDir.ownUid(), pid -> "alive", EDITOR, null);
		assertEquals("problem", r.kind);
		assertTrue(r.problem.contains("symbolic link"), r.problem);
	}

	static ShowAsk.Request ask(String diagnostics, String file) {
		return (ShowAsk.Request) ShowAsk.request(map("id", "a", "kind", "ask", "diagnostics", diagnostics, "file", file,
				"expires", 2e9));
	}

	static Map<String, Object> map(Object... kv) {
		Map<String, Object> m = new LinkedHashMap<>();
		for (int i = 0; i < kv.length; i += 2) m.put((String) kv[i], kv[i + 1] instanceof Integer ? (long) (int) (Integer) kv[i + 1] : kv[i + 1]);
		return m;
	}

	static Map<String, Object> report(long version, int items) {
		List<Diagnostics.Item> list = new ArrayList<>();
		for (int i = 0; i < items; i++) list.add(new Diagnostics.Item("error", i + 1, 1, null, null, "bad " + i, "t", null));
		return Diagnostics.summarize(list, version);
	}

	static ShowAsk.OpenDocument doc(String file, boolean active, Map<String, Object> diagnostics) {
		return new ShowAsk.OpenDocument(file, !active, 3, 10, active, diagnostics);
	}

	@SuppressWarnings("unchecked")
	static List<Map<String, Object>> buffers(Map<String, Object> answer) {
		return (List<Map<String, Object>>) (List<?>) answer.get("buffers");
	}

	static Stream<Arguments> asks() {
		// name, diagnostics, file, the files whose buffers carry diagnostics (in answer order)
		return Stream.of(
				Arguments.of("the named file's", "file", "/p/b", Arrays.asList("/p/b")),
				Arguments.of("every file's", "all", null, Arrays.asList("/p/a", "/p/b", "/p/c")),
				Arguments.of("none", "none", null, Arrays.<String>asList()),
				Arguments.of("a file not open", "file", "/p/zzz", Arrays.<String>asList()));
	}

	@ParameterizedTest(name = "diagnostics: {0}")
	@MethodSource("asks")
	void anAskListsEveryDocumentTheActiveOneFirst(String name, String diagnostics, String file, List<String> with) {
		List<ShowAsk.OpenDocument> docs = Arrays.asList(doc("/p/b", false, report(2, 1)), doc("/p/a", true, null),
				doc("/p/c", false, report(3, 2)));
		Map<String, Object> answer = ShowAsk.answerAsk(ask(diagnostics, file), docs);
		List<String> order = new ArrayList<>();
		List<String> carrying = new ArrayList<>();
		for (Map<String, Object> b : buffers(answer)) {
			order.add((String) b.get("file"));
			if (b.containsKey("diagnostics")) carrying.add((String) b.get("file"));
		}
		assertEquals(Arrays.asList("/p/a", "/p/b", "/p/c"), order, "the active one first");
		assertEquals(with, carrying);
		assertEquals(3L, ((Number) answer.get("buffers_total")).longValue());
		Map<String, Object> a = buffers(answer).get(0);
		assertEquals(Arrays.asList(true, false, 3L, 10L), Arrays.asList(a.get("active"), a.get("modified"), a.get("version"), a.get("lines_total")));
		if ("all".equals(diagnostics)) {
			assertNull(buffers(answer).get(0).get("diagnostics"), "none reported: null, not clean");
			assertEquals(2L, ((Map<?, ?>) buffers(answer).get(1).get("diagnostics")).get("version"), "dated as reported");
		}
	}

	@Test
	void anAskIsCapped() {
		List<ShowAsk.OpenDocument> docs = new ArrayList<>();
		for (int i = 0; i < 250; i++) docs.add(doc("/p/f" + i, i == 0, report(1, 150)));
		Map<String, Object> answer = ShowAsk.answerAsk(ask("all", null), docs);
		assertEquals(200, buffers(answer).size());
		assertEquals(250L, ((Number) answer.get("buffers_total")).longValue());
		List<Integer> counts = new ArrayList<>();
		for (Map<String, Object> b : buffers(answer).subList(0, 4)) {
			Map<?, ?> d = (Map<?, ?>) b.get("diagnostics");
			counts.add(((List<?>) d.get("items")).size());
			assertEquals(150L, ((Number) d.get("total")).longValue(), "total counts them all");
		}
		// Diagnostics.summarize keeps 100 of 150; the answer 200 in all.
		assertEquals(Arrays.asList(100, 100, 0, 0), counts);
	}

	@Test
	void aFileIsNamedByItsRealPathToo() throws Exception {
		Path real = Files.write(dir.resolve("real.ts"), new byte[0]);
		Path link = Files.createSymbolicLink(dir.resolve("link.ts"), real);
		Map<String, Object> answer = ShowAsk.answerAsk(ask("file", link.toString()),
				Arrays.asList(doc(real.toString(), true, report(1, 1))));
		assertTrue(buffers(answer).get(0).containsKey("diagnostics"));
	}

	/** A host that records what the responder did. */
	static final class Host implements ShowAsk.Host {
		boolean follow;
		boolean fail;
		final List<String> notices = new ArrayList<>();
		final List<String> opened = new ArrayList<>();

		public List<ShowAsk.OpenDocument> documents() {
			if (fail) throw new IllegalStateException("boom");
			return Arrays.asList(doc("/p/a", true, null));
		}

		public boolean follow() {
			return follow;
		}

		public boolean open(ShowAsk.Place place) {
			opened.add(place.file + ":" + place.line);
			return true;
		}

		public void shown(ShowAsk.Place place, String notice) {
			if (fail) throw new IllegalStateException("boom");
			notices.add(notice);
		}

		public String shownPath(String file) {
			return file.substring(file.lastIndexOf('/') + 1);
		}
	}

	ShowAsk.AskFile askFile(String requests, String ns) {
		String text = file(requests);
		if (ns != null) text = text.replace("\"pid\":4242", "\"pid\":4242,\"pid_ns\":\"" + ns + "\"");
		ShowAsk.Parsed p = ShowAsk.parse(text, PI);
		assertNull(p.problem);
		return p.file;
	}

	@SuppressWarnings("unchecked")
	List<Map<String, Object>> answersOnDisk() throws Exception {
		Path path = dir.resolve(ShowAsk.fileName(EDITOR));
		assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(path)));
		Map<String, Object> m = (Map<String, Object>) Json.parse(new String(Files.readAllBytes(path), StandardCharsets.UTF_8));
		assertEquals("editor-answers", m.get("kind"));
		assertEquals(EDITOR, m.get("pid"));
		return (List<Map<String, Object>>) m.get("answers");
	}

	static Stream<Arguments> shows() {
		// name, follow, the note, status, the notice, the list entry's text
		return Stream.of(
				Arguments.of("listed", false, "look here", "listed", "pi shows a.ts:2-3: look here", "pi: look here"),
				Arguments.of("follow on: opened", true, "look", "opened", "pi shows a.ts:2-3: look", "pi: look"),
				Arguments.of("a note's control characters made inert", false, "a\\nb\\u001b[31m\\u2028c", "listed",
						"pi shows a.ts:2-3: a b [31m c", "pi: a b [31m c"),
				Arguments.of("no note", false, null, "listed", "pi shows a.ts:2-3", "pi"));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("shows")
	void aShowIsListedWithOneNotice(String name, boolean follow, String note, String status, String notice, String text)
			throws Exception {
		ShowAsk.Responder r = new ShowAsk.Responder(EDITOR, dir, StateDir.ownUid());
		Host host = new Host();
		host.follow = follow;
		String show = SHOW.replace("\"look\"", note == null ? "null" : "\"" + note + "\"");
		assertNull(r.receive(askFile(show, null), host, 100));
		assertEquals(Arrays.asList(notice), host.notices);
		assertEquals(follow ? Arrays.asList("/p/a.ts:2") : Arrays.<String>asList(), host.opened);
		assertEquals(1, r.places().size());
		assertEquals(Arrays.asList("/p/a.ts", 2L, 3L, text), Arrays.asList(r.places().get(0).file, r.places().get(0).line,
				r.places().get(0).endLine, r.places().get(0).text));
		Map<String, Object> a = answersOnDisk().get(0);
		assertEquals(Arrays.asList(PI, "s1", "show", status, "places"),
				Arrays.asList(a.get("pi_pid"), a.get("id"), a.get("kind"), a.get("status"), a.get("list")));
		assertFalse(a.containsKey("pi_ns"));
	}

	@Test
	void eachRequestIsAnsweredOnceByPiAndId() throws Exception {
		ShowAsk.Responder r = new ShowAsk.Responder(EDITOR, dir, StateDir.ownUid());
		Host host = new Host();
		r.receive(askFile(SHOW, null), host, 100);
		r.receive(askFile(SHOW + "," + SHOW.replace("s1", "s2"), null), host, 100);
		// The same id from the same pi of another namespace is another request.
		r.receive(askFile(SHOW, "pid:[4026532455]"), host, 100);
		List<String> ids = new ArrayList<>();
		for (Map<String, Object> a : answersOnDisk()) ids.add(a.get("id") + "/" + a.get("pi_ns"));
		assertEquals(Arrays.asList("s1/null", "s2/null", "s1/pid:[4026532455]"), ids);
		assertEquals(3, r.places().size());
		assertEquals(3, host.notices.size());
	}

	@Test
	void anExpiredRequestIsNotAnswered() throws Exception {
		ShowAsk.Responder r = new ShowAsk.Responder(EDITOR, dir, StateDir.ownUid());
		assertNull(r.receive(askFile(SHOW.replace("2e9", "99"), null), new Host(), 100));
		assertFalse(Files.exists(dir.resolve(ShowAsk.fileName(EDITOR))));
		assertEquals(0, r.places().size());
	}

	@Test
	void theNewest16AnswersAreKeptAndThePlacesCapped() throws Exception {
		ShowAsk.Responder r = new ShowAsk.Responder(EDITOR, dir, StateDir.ownUid());
		Host host = new Host();
		for (int i = 0; i < 120; i++) r.receive(askFile(SHOW.replace("s1", "s" + i).replace("\"line\":2", "\"line\":" + (i + 1))
				.replace("\"end_line\":3", "\"end_line\":null"), null), host, 100);
		List<Map<String, Object>> answers = answersOnDisk();
		assertEquals(16, answers.size());
		assertEquals("s104", answers.get(0).get("id"));
		assertEquals("s119", answers.get(15).get("id"));
		assertEquals(ShowAsk.MAX_PLACES, r.places().size());
		assertEquals(21L, r.places().get(0).line, "the oldest places go first");
	}

	@Test
	void aHostFailureIsARefusalOrAnEmptyAnswerNeverAnException() throws Exception {
		ShowAsk.Responder r = new ShowAsk.Responder(EDITOR, dir, StateDir.ownUid());
		Host host = new Host();
		host.fail = true;
		r.receive(askFile(SHOW + ",{\"id\":\"a\",\"kind\":\"ask\",\"diagnostics\":\"none\",\"expires\":2e9}", null), host, 100);
		List<Map<String, Object>> answers = answersOnDisk();
		assertEquals("refused", answers.get(0).get("status"));
		assertTrue(((String) answers.get(0).get("reason")).startsWith("the editor failed"));
		assertEquals(Arrays.asList(), answers.get(1).get("buffers"));
	}

	@Test
	void disposeRemovesTheAnswersItWrote() throws Exception {
		ShowAsk.Responder r = new ShowAsk.Responder(EDITOR, dir, StateDir.ownUid());
		r.receive(askFile(SHOW, null), new Host(), 100);
		assertTrue(Files.exists(dir.resolve(ShowAsk.fileName(EDITOR))));
		r.dispose();
		assertFalse(Files.exists(dir.resolve(ShowAsk.fileName(EDITOR))));
	}

	@Test
	void theClientAnswersEachVersionOfARequestFileAndTellsARefusedOneOnce() throws Exception {
		Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
		long me = StateDir.ownPid();
		List<String> warnings = Collections.synchronizedList(new ArrayList<String>());
		Host host = new Host();
		Client client = new Client(EDITOR, dir, StateDir.ownUid(), new Client.Listener() {
			public void warn(String message) {
				warnings.add(message);
			}

			public void onMessage(PiMessage message) {}

			public ShowAsk.Host showAsk() {
				return host;
			}
		}, () -> 100_000L);
		try {
			String name = "pi-" + me + ".ask.json";
			String text = file(SHOW).replace("\"pid\":4242", "\"pid\":" + me);
			write(dir.resolve(name), text, "rw-------");
			client.scanMessages();
			client.scanMessages(); // the same file again: nothing new
			assertEquals(1, host.notices.size());
			assertEquals(1, answersOnDisk().size());
			// pi's next write (a new file by rename) with a second request: only the new one is answered.
			Path temp = dir.resolve(name + ".tmp");
			write(temp, text.replace("]}", "," + SHOW.replace("s1", "s2") + "]}"), "rw-------");
			Files.move(temp, dir.resolve(name), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
			client.scanMessages();
			assertEquals(Arrays.asList("s1", "s2"), Arrays.asList(answersOnDisk().get(0).get("id"), answersOnDisk().get(1).get("id")));
			// A group-readable request: one notice, never answered, however often the dir is scanned.
			write(temp, text.replace("s1", "s3"), "rw-r-----");
			Files.move(temp, dir.resolve(name), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
			client.scanMessages();
			client.scanMessages();
			assertEquals(1, warnings.size(), warnings.toString());
			assertTrue(warnings.get(0).contains("readable or writable by others"), warnings.get(0));
			assertEquals(2, answersOnDisk().size());
		} finally {
			client.dispose();
		}
		assertFalse(Files.exists(dir.resolve(ShowAsk.fileName(EDITOR))), "removed with the state file on exit");
	}
}
