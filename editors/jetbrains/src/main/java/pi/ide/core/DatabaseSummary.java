package pi.ide.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The protocol's {@code database} block (PROTOCOL.md, "The database block"), pure: a table view as the
 * Database plugin describes it in, the capped summary out. Lists are capped (40 columns, 10 foreign keys)
 * with {@code columns_total} giving the real count; the cell value is clipped text, null for SQL NULL and
 * {@code <N bytes>} for binary data. Nothing here asks the database: it summarises what the view already has.
 */
public final class DatabaseSummary {
	private DatabaseSummary() {}

	public static final int MAX_COLUMNS = 40;
	public static final int MAX_FOREIGN_KEYS = 10;
	/** pi shows at most 200 characters of a cell (src/context/blocks.ts); a little more is kept for its "…". */
	public static final int MAX_CELL_CHARS = 1000;

	public static final class Column {
		public final String name;
		public final String type;

		public Column(String name, String type) {
			this.name = name;
			this.type = type;
		}
	}

	public static final class ForeignKey {
		public final List<String> columns;
		public final String refTable;
		public final List<String> refColumns;
		public final String onDelete;

		public ForeignKey(List<String> columns, String refTable, List<String> refColumns, String onDelete) {
			this.columns = columns;
			this.refTable = refTable;
			this.refColumns = refColumns;
			this.onDelete = onDelete;
		}
	}

	/** The selected cell; value is a String, null (SQL NULL), a byte[] (binary) or anything else (its text). */
	public static final class Cell {
		public final int row;
		public final String column;
		public final String type;
		public final Object value;

		public Cell(int row, String column, String type, Object value) {
			this.row = row;
			this.column = column;
			this.type = type;
			this.value = value;
		}
	}

	public static final class View {
		public String table;
		public String dataSource;
		public String schema;
		public List<String> primaryKey;
		public List<Column> columns;
		public List<ForeignKey> foreignKeys;
		public String filter;
		public Long rowCount;
		public Cell cell;
	}

	/** The block, or null when the view names no table (the only required field). */
	public static Map<String, Object> build(View v) {
		if (v == null || v.table == null || v.table.isEmpty()) return null;
		Map<String, Object> out = new LinkedHashMap<>();
		out.put("table", v.table);
		putIf(out, "data_source", v.dataSource);
		putIf(out, "schema", v.schema);
		if (v.primaryKey != null) out.put("primary_key", new ArrayList<Object>(v.primaryKey));
		if (v.columns != null) {
			List<Object> cols = new ArrayList<>();
			for (Column c : v.columns.subList(0, Math.min(v.columns.size(), MAX_COLUMNS))) {
				Map<String, Object> m = new LinkedHashMap<>();
				m.put("name", c.name);
				m.put("type", c.type);
				cols.add(m);
			}
			out.put("columns", cols);
			out.put("columns_total", v.columns.size());
		}
		if (v.foreignKeys != null) {
			List<Object> fks = new ArrayList<>();
			for (ForeignKey k : v.foreignKeys.subList(0, Math.min(v.foreignKeys.size(), MAX_FOREIGN_KEYS))) {
				Map<String, Object> m = new LinkedHashMap<>();
				m.put("columns", new ArrayList<Object>(k.columns));
				m.put("ref_table", k.refTable);
				m.put("ref_columns", new ArrayList<Object>(k.refColumns));
				if (k.onDelete != null) m.put("on_delete", k.onDelete);
				fks.add(m);
			}
			out.put("foreign_keys", fks);
			if (v.foreignKeys.size() > MAX_FOREIGN_KEYS) out.put("foreign_keys_total", v.foreignKeys.size());
		}
		putIf(out, "filter", v.filter);
		if (v.rowCount != null) out.put("row_count", v.rowCount);
		if (v.cell != null) {
			Map<String, Object> c = new LinkedHashMap<>();
			c.put("row", v.cell.row);
			c.put("column", v.cell.column);
			c.put("type", v.cell.type);
			c.put("value", cellValue(v.cell.value));
			out.put("cell", c);
		}
		return out;
	}

	/** Clipped text, null for SQL NULL, {@code <N bytes>} for binary data. */
	public static String cellValue(Object value) {
		if (value == null) return null;
		if (value instanceof byte[]) return "<" + ((byte[]) value).length + " bytes>";
		return Diagnostics.clip(String.valueOf(value), MAX_CELL_CHARS);
	}

	private static void putIf(Map<String, Object> out, String key, String value) {
		if (value != null) out.put(key, value);
	}
}
