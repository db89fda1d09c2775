package pi.ide.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * JSON as the protocol needs it, with no library: a writer whose escaping is byte for byte JavaScript's
 * {@code JSON.stringify} (so the encoded selection cap counts what pi's clients count), and a strict parser for
 * pi's messages. Objects are {@link LinkedHashMap}s (field order kept), arrays {@link List}s, numbers
 * {@link Long} when integral and in range, else {@link Double}.
 */
public final class Json {
	private Json() {}

	/** Thrown by {@link #parse} only; callers turn it into a problem string. */
	public static final class ParseError extends Exception {
		public ParseError(String message) {
			super(message);
		}
	}

	public static String write(Object value) {
		StringBuilder out = new StringBuilder();
		write(out, value);
		return out.toString();
	}

	private static void write(StringBuilder out, Object value) {
		if (value == null) {
			out.append("null");
		} else if (value instanceof String) {
			writeString(out, (String) value);
		} else if (value instanceof Boolean) {
			out.append(((Boolean) value) ? "true" : "false");
		} else if (value instanceof Double || value instanceof Float) {
			double d = ((Number) value).doubleValue();
			if (!Double.isFinite(d)) out.append("null");
			else if (d == Math.rint(d) && Math.abs(d) < 1e15) out.append((long) d);
			else out.append(d);
		} else if (value instanceof Number) {
			out.append(((Number) value).longValue());
		} else if (value instanceof Map) {
			out.append('{');
			boolean first = true;
			for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
				if (!first) out.append(',');
				first = false;
				writeString(out, String.valueOf(e.getKey()));
				out.append(':');
				write(out, e.getValue());
			}
			out.append('}');
		} else if (value instanceof List) {
			out.append('[');
			boolean first = true;
			for (Object item : (List<?>) value) {
				if (!first) out.append(',');
				first = false;
				write(out, item);
			}
			out.append(']');
		} else {
			throw new IllegalArgumentException("not a JSON value: " + value.getClass().getName());
		}
	}

	private static boolean isHigh(char c) {
		return c >= 0xd800 && c <= 0xdbff;
	}

	private static boolean isLow(char c) {
		return c >= 0xdc00 && c <= 0xdfff;
	}

	/** Quotes and escapes as JSON.stringify does (well-formed: lone surrogates as \\uXXXX). */
	public static void writeString(StringBuilder out, String s) {
		out.append('"');
		for (int i = 0; i < s.length(); i++) {
			char c = s.charAt(i);
			switch (c) {
				case '"': out.append("\\\""); break;
				case '\\': out.append("\\\\"); break;
				case '\b': out.append("\\b"); break;
				case '\f': out.append("\\f"); break;
				case '\n': out.append("\\n"); break;
				case '\r': out.append("\\r"); break;
				case '\t': out.append("\\t"); break;
				default:
					if (c < 0x20) {
						out.append(String.format("\\u%04x", (int) c));
					} else if (isHigh(c) && i + 1 < s.length() && isLow(s.charAt(i + 1))) {
						out.append(c).append(s.charAt(++i));
					} else if (isHigh(c) || isLow(c)) {
						out.append(String.format("\\u%04x", (int) c));
					} else {
						out.append(c);
					}
			}
		}
		out.append('"');
	}

	/**
	 * UTF-8 bytes of {@code JSON.stringify(text)} without its quotes, as editors/shared/state.ts counts them:
	 * the unit the encoded selection cap (PROTOCOL.md, Limits) is measured in.
	 */
	public static long stringBytes(CharSequence s) {
		long bytes = 0;
		for (int i = 0; i < s.length(); i++) {
			char c = s.charAt(i);
			if (c == '"' || c == '\\') bytes += 2;
			else if (c < 0x20) bytes += (c == '\b' || c == '\t' || c == '\n' || c == '\f' || c == '\r') ? 2 : 6;
			else if (c < 0x80) bytes += 1;
			else if (c < 0x800) bytes += 2;
			else if (isHigh(c)) {
				if (i + 1 < s.length() && isLow(s.charAt(i + 1))) {
					bytes += 4;
					i++;
				} else bytes += 6;
			} else if (isLow(c)) bytes += 6;
			else bytes += 3;
		}
		return bytes;
	}

	/** Parse one JSON text (RFC 8259, no extensions); throws ParseError with the offset on anything else. */
	public static Object parse(String text) throws ParseError {
		return parse(text, Integer.MAX_VALUE);
	}

	/**
	 * {@link #parse(String)}, refusing lists and objects nested more than {@code levels} deep (the root is level 1)
	 * before it builds them: pi's files (PROTOCOL.md "Limits").
	 */
	public static Object parse(String text, int levels) throws ParseError {
		Parser p = new Parser(text, levels);
		p.skipSpace();
		Object value = p.value(0);
		p.skipSpace();
		if (p.at < text.length()) throw p.error("unexpected text after the value");
		return value;
	}

	private static final class Parser {
		private static final int MAX_DEPTH = 64;
		final String s;
		final int levels;
		int at;

		Parser(String s, int levels) {
			this.s = s;
			this.levels = levels;
		}

		ParseError error(String what) {
			return new ParseError(what + " at offset " + at);
		}

		void skipSpace() {
			while (at < s.length()) {
				char c = s.charAt(at);
				if (c == ' ' || c == '\t' || c == '\n' || c == '\r') at++;
				else break;
			}
		}

		Object value(int depth) throws ParseError {
			if (depth > MAX_DEPTH) throw error("nested too deeply");
			if (at >= s.length()) throw error("unexpected end");
			char c = s.charAt(at);
			if ((c == '{' || c == '[') && depth >= levels) throw error("nested deeper than " + levels + " levels");
			switch (c) {
				case '{': return object(depth);
				case '[': return array(depth);
				case '"': return string();
				case 't': return literal("true", Boolean.TRUE);
				case 'f': return literal("false", Boolean.FALSE);
				case 'n': return literal("null", null);
				default:
					if (c == '-' || (c >= '0' && c <= '9')) return number();
					throw error("unexpected character");
			}
		}

		Object literal(String word, Object value) throws ParseError {
			if (!s.startsWith(word, at)) throw error("unexpected character");
			at += word.length();
			return value;
		}

		Map<String, Object> object(int depth) throws ParseError {
			Map<String, Object> map = new LinkedHashMap<>();
			at++;
			skipSpace();
			if (at < s.length() && s.charAt(at) == '}') {
				at++;
				return map;
			}
			while (true) {
				skipSpace();
				if (at >= s.length() || s.charAt(at) != '"') throw error("expected a field name");
				String key = string();
				skipSpace();
				if (at >= s.length() || s.charAt(at) != ':') throw error("expected ':'");
				at++;
				skipSpace();
				map.put(key, value(depth + 1));
				skipSpace();
				if (at >= s.length()) throw error("unexpected end");
				char c = s.charAt(at++);
				if (c == '}') return map;
				if (c != ',') throw error("expected ',' or '}'");
			}
		}

		List<Object> array(int depth) throws ParseError {
			List<Object> list = new ArrayList<>();
			at++;
			skipSpace();
			if (at < s.length() && s.charAt(at) == ']') {
				at++;
				return list;
			}
			while (true) {
				skipSpace();
				list.add(value(depth + 1));
				skipSpace();
				if (at >= s.length()) throw error("unexpected end");
				char c = s.charAt(at++);
				if (c == ']') return list;
				if (c != ',') throw error("expected ',' or ']'");
			}
		}

		String string() throws ParseError {
			StringBuilder out = new StringBuilder();
			at++;
			while (true) {
				if (at >= s.length()) throw error("unterminated string");
				char c = s.charAt(at++);
				if (c == '"') return out.toString();
				if (c < 0x20) throw error("control character in a string");
				if (c != '\\') {
					out.append(c);
					continue;
				}
				if (at >= s.length()) throw error("unterminated string");
				char e = s.charAt(at++);
				switch (e) {
					case '"': out.append('"'); break;
					case '\\': out.append('\\'); break;
					case '/': out.append('/'); break;
					case 'b': out.append('\b'); break;
					case 'f': out.append('\f'); break;
					case 'n': out.append('\n'); break;
					case 'r': out.append('\r'); break;
					case 't': out.append('\t'); break;
					case 'u':
						if (at + 4 > s.length()) throw error("bad \\u escape");
						try {
							out.append((char) Integer.parseInt(s.substring(at, at + 4), 16));
						} catch (NumberFormatException ex) {
							throw error("bad \\u escape");
						}
						at += 4;
						break;
					default: throw error("bad escape");
				}
			}
		}

		Object number() throws ParseError {
			int start = at;
			if (s.charAt(at) == '-') at++;
			if (at >= s.length()) throw error("bad number");
			if (s.charAt(at) == '0') at++;
			else if (s.charAt(at) >= '1' && s.charAt(at) <= '9') digits();
			else throw error("bad number");
			boolean integral = true;
			if (at < s.length() && s.charAt(at) == '.') {
				integral = false;
				at++;
				if (digits() == 0) throw error("bad number");
			}
			if (at < s.length() && (s.charAt(at) == 'e' || s.charAt(at) == 'E')) {
				integral = false;
				at++;
				if (at < s.length() && (s.charAt(at) == '+' || s.charAt(at) == '-')) at++;
				if (digits() == 0) throw error("bad number");
			}
			String text = s.substring(start, at);
			if (integral) {
				try {
					return Long.parseLong(text);
				} catch (NumberFormatException tooBig) {
					return Double.parseDouble(text);
				}
			}
			double d = Double.parseDouble(text);
			// JavaScript has one number type: 4.0 is the integer 4 (Number.isSafeInteger(4.0) is true).
			if (d == Math.rint(d) && Math.abs(d) <= 9007199254740991.0) return (long) d;
			return d;
		}

		int digits() {
			int n = 0;
			while (at < s.length() && s.charAt(at) >= '0' && s.charAt(at) <= '9') {
				at++;
				n++;
			}
			return n;
		}
	}
}
