package pi.ide.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * v0.4 approval, the editor's half (PROTOCOL.md, "Approval (optional, off by default)"): the request parsed,
 * read only under the checks of pi's messages and only for a live pi of ours naming this editor and not run
 * out; the proposal applied in memory; the decisions kept, capped, and written in the state file.
 */
class ApprovalTest {
	@TempDir
	Path dir;

	static final long PI = 4242;
	static final long EDITOR = 77;
	static final double NOW = 1700000000;
	static final String HUNK = "{\"id\":\"h1\",\"old_start\":2,\"old_lines\":1,\"new_start\":2,\"new_lines\":1,"
			+ "\"old_text\":[\"beta\"],\"new_text\":[\"beta, by pi\"]}";

	static String request(String requestFields) {
		return "{\"protocol\":\"0.4\",\"kind\":\"pi-approval\",\"pid\":4242,\"editor_pid\":77,\"timestamp\":1700000000.5,"
				+ "\"request\":{" + requestFields + "}}";
	}

	static final String GOOD_FIELDS = "\"id\":\"r1\",\"tool\":\"edit\",\"file\":\"/p/notes.txt\",\"created\":false,"
			+ "\"note\":null,\"hunks_total\":1,\"timeout_s\":120,\"expires\":1700000120.5,\"hunks\":[" + HUNK + "]";
	static final String GOOD = request(GOOD_FIELDS);

	static Stream<Arguments> parsing() {
		// name, text, problem fragment (null: parsed), hunks kept
		return Stream.of(
				Arguments.of("a good request", GOOD, null, 1),
				Arguments.of("not JSON", "{\"kind\":", "invalid JSON", 0),
				Arguments.of("an array", "[]", "not a JSON object", 0),
				Arguments.of("pi's message, not a request", GOOD.replace("pi-approval", "pi"), "kind", 0),
				Arguments.of("pid field differs from the name", GOOD.replace("\"pid\":4242", "\"pid\":4243"), "does not match", 0),
				Arguments.of("editor_pid missing", GOOD.replace("\"editor_pid\":77,", ""), "editor_pid", 0),
				Arguments.of("editor_pid 0", GOOD.replace("\"editor_pid\":77", "\"editor_pid\":0"), "editor_pid", 0),
				Arguments.of("request a list", GOOD.replace("\"request\":{", "\"request\":[{").replace("}}", "}]}"), "request: not an object", 0),
				Arguments.of("an empty id", GOOD.replace("\"id\":\"r1\"", "\"id\":\"\""), "request.id", 0),
				Arguments.of("a 65-character id", GOOD.replace("\"id\":\"r1\"", "\"id\":\"" + repeat('i', 65) + "\""), "request.id", 0),
				Arguments.of("a relative file", GOOD.replace("/p/notes.txt", "notes.txt"), "request.file", 0),
				Arguments.of("timeout_s 0", GOOD.replace("\"timeout_s\":120", "\"timeout_s\":0"), "request.timeout_s", 0),
				Arguments.of("expires a string", GOOD.replace("1700000120.5", "\"soon\""), "request.expires", 0),
				Arguments.of("hunks not a list", GOOD.replace("[" + HUNK + "]", "{}"), "request.hunks", 0),
				Arguments.of("a malformed hunk is dropped, the rest stands",
						GOOD.replace("[" + HUNK + "]", "[" + HUNK + ",{\"id\":\"h2\",\"old_start\":-1}]"), null, 1),
				Arguments.of("a note and no hunks", GOOD.replace("\"note\":null", "\"note\":\"too large\"").replace("[" + HUNK + "]", "[]"), null, 0),
				Arguments.of("unknown fields are fine", GOOD.replace("{\"protocol\"", "{\"later\":[1],\"protocol\""), null, 1));
	}

	static String repeat(char c, int n) {
		return new String(new char[n]).replace('\0', c);
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource
	void parsing(String name, String text, String problem, int hunks) {
		Approval.Parsed p = Approval.parse(text, PI);
		if (problem == null) {
			assertNull(p.problem, p.problem);
			assertEquals(hunks, p.request.hunks.size());
			assertEquals(EDITOR, p.request.editorPid);
			assertEquals("r1", p.request.id);
		} else {
			assertNull(p.request);
			assertTrue(p.problem.contains(problem), p.problem);
		}
	}

	@Test
	void names() {
		assertEquals(4242, Approval.pidOfName("pi-4242.approval.json"));
		for (String bad : Arrays.asList("pi-4242.json", "pi-04242.approval.json", "pi-4242.approval.json.tmp",
				"pi-99999999999.approval.json", "pi-.approval.json", "x-4242.approval.json")) {
			assertEquals(-1, Approval.pidOfName(bad), bad);
		}
	}

	// ---- reading the file: the checks of pi's messages, the editor and the clock ----

	static Stream<Arguments> reading() {
		// name, how the file is laid out, liveness of pi, the uid we read as ("own" or "other"), expected kind, problem
		return Stream.of(
				Arguments.of("a good request for this editor", "file", "alive", "own", "request", null),
				Arguments.of("missing", "none", "alive", "own", "gone", null),
				Arguments.of("its pi exited", "file", "dead", "own", "dead", null),
				Arguments.of("its pid is another user's process", "file", "foreign", "own", "problem", "another user"),
				Arguments.of("a file owned by another user", "file", "alive", "other", "problem", "not by you"),
				Arguments.of("group-readable", "file-0640", "alive", "own", "problem", "readable or writable by others"),
				Arguments.of("a symlink to a good file", "symlink", "alive", "own", "problem", "symbolic link"),
				Arguments.of("a FIFO is refused without blocking", "fifo", "alive", "own", "problem", "not a regular file"),
				Arguments.of("over 1 MiB", "big", "alive", "own", "problem", "over the 1048576-byte limit"),
				Arguments.of("malformed", "garbage", "alive", "own", "problem", "invalid approval request"),
				Arguments.of("another editor's request", "other-editor", "alive", "own", "elsewhere", null),
				Arguments.of("ran out", "expired", "alive", "own", "problem", "ran out"));
	}

	void lay(String how, Path path) throws Exception {
		switch (how) {
			case "none": return;
			case "fifo": new ProcessBuilder("mkfifo", "-m", "600", path.toString()).start().waitFor(); return;
			case "symlink": {
				Path real = dir.resolve("real.json");
				PiReaderTest.write(real, GOOD, "rw-------");
				Files.createSymbolicLink(path, real);
				return;
			}
			case "file-0640": PiReaderTest.write(path, GOOD, "rw-r-----"); return;
			case "big": PiReaderTest.write(path, GOOD.replace("\"r1\",", "\"r1\",\"pad\":\"" + repeat('x', 1024 * 1024) + "\","), "rw-------"); return;
			case "garbage": PiReaderTest.write(path, GOOD.substring(0, 40), "rw-------"); return;
			case "other-editor": PiReaderTest.write(path, GOOD.replace("\"editor_pid\":77", "\"editor_pid\":78"), "rw-------"); return;
			case "expired": PiReaderTest.write(path, GOOD.replace("1700000120.5", "1699999999"), "rw-------"); return;
			default: PiReaderTest.write(path, GOOD, "rw-------");
		}
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource
	void reading(String name, String how, String liveness, String reader, String kind, String problem) throws Exception {
		lay(how, dir.resolve("pi-" + PI + ".approval.json"));
		// Another user reading: the file (ours) is then not theirs. uid 0 reads as 1, anyone else as 0.
		long uid = "own".equals(reader) ? StateDir.ownUid() : StateDir.ownUid() == 0 ? 1 : 0;
		PiReader.Verdict v = assertTimeoutPreemptively(Duration.ofSeconds(5),
				() -> PiReader.readApproval(dir, "pi-" + PI + ".approval.json", uid, pid -> liveness, EDITOR, NOW));
		assertEquals(kind, v.kind, String.valueOf(v.problem));
		if (problem != null) assertTrue(v.problem.contains(problem), v.problem);
		if ("request".equals(kind)) assertEquals("/p/notes.txt", v.request.file);
	}

	// ---- the proposal applied in memory ----

	static String hunk(int oldStart, String oldLines, String newLines) {
		return "{\"id\":\"h\",\"old_start\":" + oldStart + ",\"new_start\":" + oldStart + ",\"old_text\":" + oldLines
				+ ",\"new_text\":" + newLines + "}";
	}

	static Approval.Request withHunks(String note, String... hunks) {
		String fields = GOOD_FIELDS.replace("[" + HUNK + "]", "[" + String.join(",", hunks) + "]")
				.replace("\"hunks_total\":1", "\"hunks_total\":" + hunks.length);
		if (note != null) fields = fields.replace("\"note\":null", "\"note\":\"" + note + "\"");
		return Approval.parse(request(fields), PI).request;
	}

	static Stream<Arguments> proposals() {
		String abc = "alpha\nbeta\ngamma\n";
		// name, the text the user sees, the request, the proposal (null: cannot be shown against this text)
		return Stream.of(
				Arguments.of("one line replaced", abc, withHunks(null, hunk(2, "[\"beta\"]", "[\"beta, by pi\"]")),
						"alpha\nbeta, by pi\ngamma\n"),
				Arguments.of("lines inserted at the top", abc, withHunks(null, hunk(1, "[]", "[\"zero\",\"one\"]")),
						"zero\none\nalpha\nbeta\ngamma\n"),
				Arguments.of("a line appended", abc, withHunks(null, hunk(4, "[]", "[\"delta\"]")), "alpha\nbeta\ngamma\ndelta\n"),
				Arguments.of("a line deleted", abc, withHunks(null, hunk(1, "[\"alpha\"]", "[]")), "beta\ngamma\n"),
				Arguments.of("two hunks, given top down, applied bottom up", abc,
						withHunks(null, hunk(1, "[\"alpha\"]", "[\"A\",\"A2\"]"), hunk(3, "[\"gamma\"]", "[\"G\"]")), "A\nA2\nbeta\nG\n"),
				Arguments.of("no final newline is kept", "alpha\nbeta", withHunks(null, hunk(2, "[\"beta\"]", "[\"b\"]")), "alpha\nb"),
				Arguments.of("a new file", "", withHunks(null, hunk(1, "[]", "[\"first\"]")), "first\n"),
				Arguments.of("everything deleted", "x\n", withHunks(null, hunk(1, "[\"x\"]", "[]")), ""),
				Arguments.of("the text is not the one pi read", "alpha\nBETA\ngamma\n",
						withHunks(null, hunk(2, "[\"beta\"]", "[\"b\"]")), null),
				Arguments.of("a hunk past the end", abc, withHunks(null, hunk(3, "[\"gamma\",\"delta\"]", "[]")), null),
				Arguments.of("overlapping hunks", abc,
						withHunks(null, hunk(1, "[\"alpha\",\"beta\"]", "[]"), hunk(2, "[\"beta\"]", "[]")), null),
				Arguments.of("no hunks carried (too large)", abc, withHunks("too large"), null),
				Arguments.of("a malformed hunk was dropped: no partial proposal", abc,
						Approval.parse(GOOD.replace("[" + HUNK + "]", "[" + HUNK + ",{\"id\":7}]").replace("\"hunks_total\":1", "\"hunks_total\":2"), PI).request,
						null));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource
	void proposals(String name, String text, Approval.Request r, String expected) {
		assertEquals(expected, Approval.proposal(text, r));
	}

	@Test
	void describeSaysWhatAndHowMuch() {
		Approval.Request r = Approval.parse(GOOD, PI).request;
		assertEquals("pi wants to edit notes.txt: 1 hunk", Approval.describe(r, Approval.shownPath(r.file, "/p")));
		assertEquals("pi wants to edit /p/notes.txt: 1 hunk", Approval.describe(r, Approval.shownPath(r.file, "/q")));
		Approval.Request big = withHunks("too large");
		assertEquals("pi wants to edit notes.txt: (too large, no preview)", Approval.describe(big, "notes.txt"));
		Approval.Request created = Approval.parse(GOOD.replace("\"created\":false", "\"created\":true").replace("\"edit\"", "\"write\""), PI).request;
		assertTrue(Approval.describe(created, "n").startsWith("pi wants to create n: "));
	}

	// ---- answering, and the decisions ----

	static Approval.Request req(long pi, String id, double expires) {
		return Approval.parse(GOOD.replace("\"pid\":4242", "\"pid\":" + pi).replace("\"r1\"", "\"" + id + "\"")
				.replace("1700000120.5", String.valueOf(expires)), pi).request;
	}

	@Test
	void answeringTheRequestPiWaitsOn() {
		Approvals a = new Approvals();
		assertTrue(a.decisions().isEmpty(), "an empty list before the first");
		Approvals.Answer none = a.decide(null, "accept", NOW, "/p");
		assertNull(none.request);
		assertTrue(none.said.contains("not waiting"), none.said);
		assertTrue(a.offer(req(1, "a", NOW + 60)));
		assertFalse(a.offer(req(1, "a", NOW + 60)), "the same request again is no news");
		assertTrue(a.offer(req(2, "b", NOW + 30)));
		assertEquals("b", a.current().id, "the one that runs out first");
		Approvals.Answer byId = a.decide("a", "reject", NOW, "/p");
		assertEquals("a", byId.request.id);
		assertEquals("pi-ide-context: rejected: pi leaves notes.txt as it is", byId.said);
		assertNull(a.decide("a", "accept", NOW, "/p").request, "answered once");
		assertTrue(byId.recorded);
		// "a" was the one shown (told first) and is answered: "b" was told while "a" waited, so an answer naming
		// no request names "b" first (PROTOCOL.md "An answer is for the request the user saw").
		Approvals.Answer moved = a.decide(null, "accept", NOW + 31, "/p");
		assertNull(moved.request);
		assertFalse(moved.recorded);
		assertTrue(moved.said.startsWith("pi-ide-context: not approved: the request you saw is gone; pi wants to"), moved.said);
		Approvals.Answer late = a.decide(null, "accept", NOW + 31, "/p");
		assertFalse(late.recorded, "a request that ran out records nothing");
		assertEquals("b", late.request.id, "and is no longer pending");
		assertTrue(late.said.contains("ran out (120 s)"), late.said);
		assertNull(a.current());
		assertEquals(1, a.decisions().size());
		assertEquals("{\"pi_pid\":1,\"id\":\"a\",\"decision\":\"reject\"}", Json.write(a.decisions().get(0)));
		assertThrows(IllegalArgumentException.class, () -> a.decide(null, "maybe", NOW, "/p"));
	}

	/** Issue 22, item 8: A shown, A ends (timed out), B arrives; an answer naming no request must not answer B. */
	@Test
	void anAnswerIsForTheRequestTheUserSaw() {
		String[][] cases = {
				// decision, then the steps: +id arrives (pi 1), -id ends, "show" (Show change), "answer"; want: decisions
				{ "accept", "+A -A +B answer", "" },
				{ "reject", "+A -A +B answer", "" },
				{ "accept", "+A -A +B answer answer", "B=accept" },
				{ "reject", "+A -A +B show answer", "B=reject" },
				{ "accept", "+A +B answer", "" },
				{ "accept", "+A answer -A +B answer", "A=accept,B=accept" },
		};
		for (String[] c : cases) {
			Approvals a = new Approvals();
			List<String> said = new ArrayList<>();
			for (String step : c[1].split(" ")) {
				if (step.startsWith("+")) a.offer(req(1, step.substring(1), NOW + 60));
				else if (step.startsWith("-")) a.forget(1);
				else if (step.equals("show")) a.shown(a.seen() != null ? a.seen() : a.current());
				else said.add(a.decide(null, c[0], NOW, "/p").said);
			}
			List<String> got = new ArrayList<>();
			for (Map<String, Object> d : a.decisions()) got.add(d.get("id") + "=" + d.get("decision"));
			assertEquals(c[2], String.join(",", got), c[0] + " " + c[1] + ": " + said);
			if (c[1].equals("+A -A +B answer")) {
				assertTrue(said.get(0).contains("the request you saw is gone; pi wants to edit notes.txt"), said.get(0));
			}
		}
	}

	@Test
	void decisionsAreCappedAtTwentyNewestLast() {
		Approvals a = new Approvals();
		for (int i = 0; i < 25; i++) {
			a.offer(req(1, "r" + i, NOW + 60));
			a.decide(null, i % 2 == 0 ? "accept" : "reject", NOW, "/p");
		}
		List<Map<String, Object>> d = a.decisions();
		assertEquals(Approval.MAX_DECISIONS, d.size());
		assertEquals("r5", d.get(0).get("id"));
		assertEquals("r24", d.get(19).get("id"));
		assertEquals("accept", d.get(19).get("decision"));
	}

	@Test
	@SuppressWarnings("unchecked")
	void theStateFileCarriesDecisionsOnlyWhenTheClientAnswers() throws Exception {
		Snapshot.Ide ide = new Snapshot.Ide(7, "IntelliJ IDEA", "2025.2");
		List<Snapshot.Window> windows = Arrays.asList(new Snapshot.Window("/p", null, null));
		Map<String, Object> without = (Map<String, Object>) Json.parse(new String(
				StateBuilder.build(new Snapshot.State(ide, windows, null, null), 1, new SelectionClock()).content, StandardCharsets.UTF_8));
		assertFalse(without.containsKey("decisions"));
		Map<String, Object> empty = (Map<String, Object>) Json.parse(new String(StateBuilder.build(
				new Snapshot.State(ide, windows, null, null, new ArrayList<Map<String, Object>>()), 1, new SelectionClock()).content,
				StandardCharsets.UTF_8));
		assertEquals(new ArrayList<Object>(), empty.get("decisions"), "an empty list before the first");
		List<Map<String, Object>> thirty = new ArrayList<>();
		for (int i = 0; i < 30; i++) {
			Map<String, Object> d = new java.util.LinkedHashMap<>();
			d.put("pi_pid", 1L);
			d.put("id", "r" + i);
			d.put("decision", "accept");
			thirty.add(d);
		}
		Map<String, Object> capped = (Map<String, Object>) Json.parse(new String(StateBuilder.build(
				new Snapshot.State(ide, windows, null, null, thirty), 1, new SelectionClock()).content, StandardCharsets.UTF_8));
		List<Map<String, Object>> kept = (List<Map<String, Object>>) capped.get("decisions");
		assertEquals(Approval.MAX_DECISIONS, kept.size(), "the builder caps a longer list too");
		assertEquals("r29", kept.get(kept.size() - 1).get("id"), "newest last");
	}

	@Test
	void theClientReadsARequestAnswersItAndEndsItWhenTheFileGoes() throws Exception {
		Path state = dir.resolve("pi-ide");
		long own = StateDir.ownPid(); // a live process of ours stands in for pi, and for the IDE
		List<String> told = new java.util.concurrent.CopyOnWriteArrayList<>();
		Client client = new Client(own, state, StateDir.ownUid(), new Client.Listener() {
			public void warn(String message) {
				told.add("warn " + message);
			}

			public void onMessage(PiMessage message) {}

			public void approvalAsked(Approval.Request r) {
				told.add("asked " + r.id);
			}

			public void approvalEnded(Approval.Request r, String why) {
				told.add("ended " + r.id + ": " + why);
			}
		}, () -> (long) (NOW * 1000));
		try {
			client.update(new Snapshot.State(new Snapshot.Ide(own, "IntelliJ IDEA", "2025.2"),
					Arrays.asList(new Snapshot.Window("/p", null, null)), null, null), true);
			ClientTest.waitFor(() -> Files.exists(client.stateFile()), "the state file");
			assertTrue(read(client.stateFile()).contains("\"decisions\":[]"), "the client says it answers");
			Path file = state.resolve("pi-" + own + ".approval.json");
			PiReaderTest.write(file, GOOD.replace("\"pid\":4242", "\"pid\":" + own).replace("\"editor_pid\":77", "\"editor_pid\":" + own),
					"rw-------");
			client.scanMessages();
			client.scanMessages();
			assertEquals(Arrays.asList("asked r1"), told, "told once");
			assertEquals("r1", client.decide(null, "accept", "/p").request.id);
			ClientTest.waitFor(() -> read(client.stateFile()).contains("\"decisions\":[{\"pi_pid\":" + own + ",\"id\":\"r1\",\"decision\":\"accept\"}]"),
					"the decision written");
			assertEquals("ended r1: approved", told.get(1));
			// pi asks again (a new id); it stops waiting (its file goes): the notice is expired.
			PiReaderTest.write(file, GOOD.replace("\"pid\":4242", "\"pid\":" + own).replace("\"editor_pid\":77", "\"editor_pid\":" + own)
					.replace("\"r1\"", "\"r2\"").replace("\"edit\"", "\"write\""), "rw-------");
			client.scanMessages();
			assertEquals("asked r2", told.get(2));
			// A new request written over a pending one (no scan saw the file go): the old notice expires first.
			PiReaderTest.write(file, GOOD.replace("\"pid\":4242", "\"pid\":" + own).replace("\"editor_pid\":77", "\"editor_pid\":" + own)
					.replace("\"r1\"", "\"r3\"").replace("\"edit\"", "\"write\"").replace("120.5", "120.25"), "rw-------");
			client.scanMessages();
			assertEquals(Arrays.asList("ended r2: pi stopped waiting", "asked r3"), told.subList(3, 5));
			Files.delete(file);
			client.scanMessages();
			assertEquals("ended r3: pi stopped waiting", told.get(5));
			Approvals.Answer gone = client.decide(null, "reject", "/p");
			assertFalse(gone.recorded, "answering what is gone does nothing");
			assertTrue(gone.said.contains("not waiting"), gone.said);
			assertEquals(6, told.size(), told.toString());
		} finally {
			client.dispose();
		}
	}

	static String read(Path p) {
		try {
			return new String(Files.readAllBytes(p), StandardCharsets.UTF_8);
		} catch (java.io.IOException e) {
			return "";
		}
	}
}
