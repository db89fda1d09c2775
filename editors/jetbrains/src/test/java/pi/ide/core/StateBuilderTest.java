package pi.ide.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The state file's fields, the selection clock, several windows and the 1 MiB fit. */
class StateBuilderTest {
	static final Snapshot.Ide IDE = new Snapshot.Ide(4242, "WebStorm", "2025.2");

	static Snapshot.Document doc(String file, String text, int[] cursor, int[] anchor, int[] head, boolean modified) {
		Text.HostPosition a = anchor == null ? null : new Text.HostPosition(anchor[0], anchor[1]);
		Text.HostPosition h = head == null ? null : new Text.HostPosition(head[0], head[1]);
		return new Snapshot.Document("w:" + file, file, file.substring(file.lastIndexOf('/') + 1), Text.linesOf(text),
				new Text.HostPosition(cursor[0], cursor[1]), a, h, modified, null, null);
	}

	static Snapshot.State state(Snapshot.Window... windows) {
		return new Snapshot.State(IDE, Arrays.asList(windows), null, null);
	}

	@SuppressWarnings("unchecked")
	static Map<String, Object> parse(StateBuilder.Built built) throws Exception {
		return (Map<String, Object>) Json.parse(new String(built.content, StandardCharsets.UTF_8));
	}

	@SuppressWarnings("unchecked")
	static Map<String, Object> buffer(Map<String, Object> state) {
		return (Map<String, Object>) state.get("active_buffer");
	}

	@Test
	void theFieldsOfOneWindow() throws Exception {
		Snapshot.Document d = doc("/p/src/main.ts", "let a = 1;\nlet é = 2;\n", new int[] {1, 5}, null, null, true);
		Map<String, Object> s = parse(StateBuilder.build(state(new Snapshot.Window("/p", d, null)), 1700000000, new SelectionClock()));
		assertEquals("0.3", s.get("protocol"));
		assertEquals(4242L, s.get("pid"));
		assertEquals("/p", s.get("cwd"));
		assertEquals(1700000000L, s.get("timestamp"));
		assertEquals("jetbrains", s.get("app"));
		assertEquals("WebStorm", s.get("product"));
		assertEquals(Arrays.asList("WebStorm 2025.2", "/p"), s.get("argv"));
		Map<String, Object> b = buffer(s);
		assertEquals("/p/src/main.ts", b.get("file"));
		assertEquals("main.ts", b.get("name"));
		assertEquals("typescript", b.get("language"));
		Map<String, Object> cursor = (Map<String, Object>) b.get("cursor");
		assertEquals(2L, cursor.get("line"));
		assertEquals(7L, cursor.get("column"), "é is two bytes");
		assertNull(b.get("selection"));
		assertEquals(true, b.get("modified"));
		assertEquals(2L, b.get("lines_total"));
		assertFalse(s.containsKey("windows"), "one window: a plain v0.3 file");
	}

	static Stream<Arguments> languages() {
		return Stream.of(
				Arguments.of("/p/a.ts", "typescript"), Arguments.of("/p/a.tsx", "typescriptreact"),
				Arguments.of("/p/A.JAVA", "java"), Arguments.of("/p/Dockerfile", "dockerfile"),
				Arguments.of("/p/go.mod", "gomod"), Arguments.of("/p/x.kt", "kotlin"), Arguments.of("/p/.env", null),
				Arguments.of("/p/README", null), Arguments.of("/p/q.sql", "sql"), Arguments.of("/p/docker-compose.yml", "dockercompose"));
	}

	@ParameterizedTest
	@MethodSource
	void languages(String file, String expected) {
		assertTrue(Languages.bundled().size() > 100, "the table made it into the build");
		assertEquals(expected, Languages.bundled().of(file));
	}

	@Test
	void noWindowNoFile() {
		StateBuilder.Built built = StateBuilder.build(state(), 1, new SelectionClock());
		assertNull(built.content);
	}

	@Test
	void noEditorInTheWindow() throws Exception {
		Map<String, Object> b = buffer(parse(StateBuilder.build(state(new Snapshot.Window("/p", null, null)), 1, new SelectionClock())));
		assertNull(b.get("file"));
		assertEquals("[No Name]", b.get("name"));
		assertEquals(0L, b.get("lines_total"));
	}

	/** selected_at: when the selection was made, kept while it stays, renewed when it changes, gone with it. */
	@SuppressWarnings("unchecked")
	@Test
	void theSelectionClock() throws Exception {
		SelectionClock clock = new SelectionClock();
		String text = "alpha\nbeta\n";
		Object[][] steps = {
				// time, anchor, head, expected selected_at (null: no selection)
				{100L, new int[] {0, 0}, new int[] {0, 5}, 100L},
				{130L, new int[] {0, 0}, new int[] {0, 5}, 100L},
				{140L, new int[] {0, 0}, new int[] {0, 3}, 140L},
				{150L, null, null, null},
				{160L, new int[] {0, 0}, new int[] {0, 3}, 160L},
		};
		for (Object[] step : steps) {
			Snapshot.Document d = doc("/p/a.txt", text, new int[] {0, 0}, (int[]) step[1], (int[]) step[2], false);
			Map<String, Object> sel = (Map<String, Object>) buffer(parse(StateBuilder.build(
					state(new Snapshot.Window("/p", d, null)), (Long) step[0], clock))).get("selection");
			if (step[3] == null) assertNull(sel);
			else assertEquals(step[3], sel.get("selected_at"), "at " + step[0]);
		}
	}

	@SuppressWarnings("unchecked")
	@Test
	void otherWindowsAreListed() throws Exception {
		Snapshot.Window a = new Snapshot.Window("/a", doc("/a/x.py", "x = 1\n", new int[] {0, 1}, null, null, false), null);
		Snapshot.Window b = new Snapshot.Window("/b", doc("/b/y.rs", "fn main() {}\n", new int[] {0, 3}, null, null, false), null);
		Snapshot.Window c = new Snapshot.Window("/c", null, null);
		Map<String, Object> s = parse(StateBuilder.build(state(a, b, c), 1, new SelectionClock()));
		assertEquals("/a", s.get("cwd"), "the window touched last is the top level");
		List<Object> windows = (List<Object>) s.get("windows");
		assertEquals(2, windows.size());
		Map<String, Object> first = (Map<String, Object>) windows.get(0);
		assertEquals("/b", first.get("cwd"));
		assertEquals(Arrays.asList("WebStorm 2025.2", "/b"), first.get("argv"));
		assertEquals("rust", buffer(first).get("language"));
		assertEquals("/c", ((Map<String, Object>) windows.get(1)).get("cwd"));
	}

	@Test
	void atMostEightOtherWindows() throws Exception {
		List<Snapshot.Window> many = new ArrayList<>();
		for (int i = 0; i < 12; i++) many.add(new Snapshot.Window("/w" + i, null, null));
		Map<String, Object> s = parse(StateBuilder.build(new Snapshot.State(IDE, many, null, null), 1, new SelectionClock()));
		assertEquals(StateBuilder.MAX_OTHER_WINDOWS, ((List<?>) s.get("windows")).size());
	}

	/** Long paths push the file over 1 MiB: the selection is cut further; nothing fits: nothing written. */
	@SuppressWarnings("unchecked")
	@Test
	void theFileStaysUnderOneMebibyte() throws Exception {
		String longPath = "/" + String.join("", Collections.nCopies(300 * 1024, "p"));
		StringBuilder text = new StringBuilder();
		for (int i = 0; i < 30000; i++) text.append("some selected line ").append(i).append('\n');
		Snapshot.Document d = doc(longPath + "/a.txt", text.toString(), new int[] {0, 0}, new int[] {0, 0}, new int[] {29999, 5}, false);
		StateBuilder.Built built = StateBuilder.build(state(new Snapshot.Window(longPath, d, null)), 1, new SelectionClock());
		assertTrue(built.content.length <= StateBuilder.MAX_STATE_FILE_BYTES);
		Map<String, Object> sel = (Map<String, Object>) buffer(parse(built)).get("selection");
		assertEquals(true, sel.get("truncated"));
		String tooLong = "/" + String.join("", Collections.nCopies(400 * 1024, "p"));
		Snapshot.Document hopeless = doc(tooLong + "/a.txt", "x", new int[] {0, 0}, null, null, false);
		StateBuilder.Built none = StateBuilder.build(state(new Snapshot.Window(tooLong, hopeless, null)), 1, new SelectionClock());
		assertNull(none.content);
		assertTrue(none.problem.contains("not written"));
	}

	@Test
	void theKeyIgnoresTheTimestamp() {
		Snapshot.State s = state(new Snapshot.Window("/p", doc("/p/a.ts", "x", new int[] {0, 0}, null, null, false), null));
		SelectionClock clock = new SelectionClock();
		assertEquals(StateBuilder.build(s, 1, clock).key, StateBuilder.build(s, 2, clock).key);
	}
}
