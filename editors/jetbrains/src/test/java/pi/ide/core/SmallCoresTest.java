package pi.ide.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

/** Diagnostics capping, the database summary and the reload decisions: tables. */
class SmallCoresTest {
	static Diagnostics.Item item(String severity, int line, int column, String message) {
		return new Diagnostics.Item(severity, line, column, null, null, message, "ide", null);
	}

	@SuppressWarnings("unchecked")
	@Test
	void diagnosticsAreSortedCappedAndClipped() {
		List<Diagnostics.Item> items = new ArrayList<>();
		for (int i = 0; i < 150; i++) items.add(item(i % 3 == 0 ? "warning" : "error", 150 - i, 1, "m" + i));
		items.add(item("hint", 1, 1, String.join("", Collections.nCopies(600, "x"))));
		Map<String, Object> r = Diagnostics.summarize(items, 17);
		assertEquals(17L, ((Number) r.get("version")).longValue());
		assertEquals(151, r.get("total"));
		List<Map<String, Object>> kept = (List<Map<String, Object>>) r.get("items");
		assertEquals(Diagnostics.MAX_ITEMS, kept.size());
		assertEquals("error", kept.get(0).get("severity"));
		assertEquals(1, kept.get(0).get("line"), "errors first, then by line");
		assertEquals(2, kept.get(1).get("line"));
		assertEquals("error", kept.get(99).get("severity"));
	}

	static Stream<Arguments> clipping() {
		return Stream.of(Arguments.of("short", 10, "short"), Arguments.of("abcdefghijkl", 5, "abcd…"),
				Arguments.of("abc😀def", 5, "abc…"), Arguments.of(null, 5, null));
	}

	@ParameterizedTest
	@MethodSource
	void clipping(String text, int max, String expected) {
		assertEquals(expected, Diagnostics.clip(text, max));
	}

	static Stream<Arguments> severities() {
		return Stream.of(Arguments.of("ERROR", "error"), Arguments.of("WARNING", "warning"),
				Arguments.of("WEAK WARNING", "info"), Arguments.of("INFORMATION", "hint"), Arguments.of("TEXT ATTRIBUTES", null),
				Arguments.of("SYMBOL_TYPE_SEVERITY", null));
	}

	@ParameterizedTest
	@MethodSource
	void severities(String ide, String wire) {
		assertEquals(wire, Diagnostics.severityOf(ide));
	}

	static DatabaseSummary.View view(int columns, int keys, Object cell) {
		DatabaseSummary.View v = new DatabaseSummary.View();
		v.table = "rooms";
		v.dataSource = "mwac@localhost";
		v.schema = "public";
		v.primaryKey = Arrays.asList("id");
		v.columns = new ArrayList<>();
		for (int i = 0; i < columns; i++) v.columns.add(new DatabaseSummary.Column("c" + i, "int4"));
		v.foreignKeys = new ArrayList<>();
		for (int i = 0; i < keys; i++) {
			v.foreignKeys.add(new DatabaseSummary.ForeignKey(Arrays.asList("k" + i), "public.t" + i, Arrays.asList("id"), "CASCADE"));
		}
		v.filter = "attributes ? 'office_description'";
		v.rowCount = 1200L;
		v.cell = new DatabaseSummary.Cell(4, "attributes", "jsonb", cell);
		return v;
	}

	static Stream<Arguments> database() {
		String longText = String.join("", Collections.nCopies(5000, "v"));
		return Stream.of(
				// name, columns, keys, cell, kept columns, total, kept keys, keys total (null: absent), cell value
				Arguments.of("the spec's example", 2, 1, "{\"a\":1}", 2, 2, 1, null, "{\"a\":1}"),
				Arguments.of("columns capped at 40", 42, 0, "x", 40, 42, 0, null, "x"),
				Arguments.of("foreign keys capped at 10", 3, 12, "x", 3, 3, 10, 12, "x"),
				Arguments.of("SQL NULL", 1, 0, null, 1, 1, 0, null, null),
				Arguments.of("binary", 1, 0, new byte[] {1, 2, 3}, 1, 1, 0, null, "<3 bytes>"),
				Arguments.of("numbers as text", 1, 0, 42, 1, 1, 0, null, "42"),
				Arguments.of("long text clipped", 1, 0, longText, 1, 1, 0, null, longText.substring(0, 999) + "…"));
	}

	@SuppressWarnings("unchecked")
	@ParameterizedTest(name = "{0}")
	@MethodSource
	void database(String name, int columns, int keys, Object cell, int keptColumns, int total, int keptKeys, Integer keysTotal,
			String value) {
		Map<String, Object> b = DatabaseSummary.build(view(columns, keys, cell));
		assertEquals("rooms", b.get("table"));
		assertEquals(keptColumns, ((List<?>) b.get("columns")).size());
		assertEquals(total, b.get("columns_total"));
		assertEquals(keptKeys, ((List<?>) b.get("foreign_keys")).size());
		assertEquals(keysTotal, b.get("foreign_keys_total"));
		assertEquals(value, ((Map<String, Object>) b.get("cell")).get("value"));
	}

	@Test
	void aViewWithoutATableIsNoBlock() {
		assertNull(DatabaseSummary.build(new DatabaseSummary.View()));
		DatabaseSummary.View onlyTable = new DatabaseSummary.View();
		onlyTable.table = "t";
		assertEquals("{\"table\":\"t\"}", Json.write(DatabaseSummary.build(onlyTable)));
	}

	static final Reload.PathKind M = Reload.PathKind.MISSING, R = Reload.PathKind.REGULAR,
			L = Reload.PathKind.LINK_TO_REGULAR, O = Reload.PathKind.OTHER, U = Reload.PathKind.UNKNOWN;

	static Stream<Arguments> reloads() {
		return Stream.of(
				// name, open, modified, recorded, recorded real, now, real now, same content, status
				Arguments.of("not open", false, false, R, "/r", R, "/r", false, "not-open"),
				Arguments.of("unsaved changes are never touched", true, true, R, "/r", R, "/r", false, "modified"),
				Arguments.of("modified wins over gone", true, true, R, "/r", M, null, false, "modified"),
				Arguments.of("a regular file reloads", true, false, R, "/r", R, "/r", false, "reloaded"),
				Arguments.of("same content", true, false, R, "/r", R, "/r", true, "unchanged"),
				Arguments.of("gone", true, false, R, "/r", M, null, false, "gone"),
				Arguments.of("now a symlink: refused", true, false, R, "/r", L, "/elsewhere", false, "refused"),
				Arguments.of("a link then and now, same target", true, false, L, "/real", L, "/real", false, "reloaded"),
				Arguments.of("a link re-pointed", true, false, L, "/real", L, "/other", false, "refused"),
				Arguments.of("a link replaced by a file", true, false, L, "/real", R, "/x", false, "refused"),
				Arguments.of("no record, regular", true, false, U, null, R, "/r", false, "reloaded"),
				Arguments.of("no record, a link is not read", true, false, U, null, L, "/r", false, "refused"),
				Arguments.of("now a directory or FIFO", true, false, R, "/r", O, null, false, "refused"));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource
	void reloads(String name, boolean open, boolean modified, Reload.PathKind recorded, String recordedReal,
			Reload.PathKind now, String realNow, boolean same, String status) {
		assertEquals(status, Reload.decide(new Reload.Facts(open, modified, recorded, recordedReal, now, realNow, same)));
	}

	@Test
	void theModifiedNoticeNamesTheFileAndTheWayToCompare() {
		String notice = Reload.modifiedNotice("/p/a.ts");
		assertTrue(notice.contains("/p/a.ts") && notice.contains("Compare"));
	}
}
