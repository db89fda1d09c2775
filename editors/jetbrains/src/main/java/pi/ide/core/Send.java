package pi.ide.core;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Protocol v0.5, send to pi (PROTOCOL.md, "v0.5: send to pi"): the user hands the pi connected to this IDE the
 * selection (or the line of the caret), the diagnostic there or the whole file, with typed words. What is sent
 * ({@link #item}, pure), which pi ({@link Desk#pick}: the only one naming this IDE, the one picked before, or
 * the user's pick, asked once), the request written as {@code <state dir>/<pid>.send.json} by the state file's
 * rules ({@link StateDir#write}: 0600, an exclusive temp file then one rename, in a checked directory), and pi's
 * answer ({@code sent}) as one line. The TypeScript clients' rules (editors/shared/send.ts). Never throws for
 * bad input.
 */
public final class Send {
	/** The typed prompt's cap in bytes of UTF-8 (MAX_SEND_PROMPT_BYTES). */
	public static final int MAX_PROMPT_BYTES = 16 * 1024;

	public static final String NOT_FILE = "not a file buffer: nothing sent";
	public static final String NO_DIAGNOSTIC = "no diagnostic under the cursor: nothing sent";
	public static final String NO_HUNK = "no hunk of pi's under the cursor: nothing sent";
	public static final String NO_PI = "no pi is connected to this editor: nothing sent";
	public static final String NOT_PICKED = "no pi picked: nothing sent";

	private Send() {}

	/** The file name of the request: {@code <pid>.send.json}. */
	public static String fileName(long pid) {
		return pid + ".send.json";
	}

	/** An item to send, or the one line saying why there is none. */
	public static final class Item {
		public final Map<String, Object> item;
		public final String notice;

		Item(Map<String, Object> item, String notice) {
			this.item = item;
			this.notice = notice;
		}
	}

	/**
	 * What the command points at: {@code form} "default" (the selection from {@code anchor} to {@code head} when
	 * not empty, else the caret's line), "diagnostic" (the first of the report's items covering the caret's line:
	 * they are listed errors first), "hunk" ({@code hunk}: 0-based first and last line, null when none) or
	 * "file". Lines are 0-based here, 1-based on the wire.
	 */
	@SuppressWarnings("unchecked")
	public static Item item(String form, String file, Text.Lines lines, Text.HostPosition caret, Text.HostPosition anchor,
			Text.HostPosition head, Map<String, Object> diagnostics, int[] hunk) {
		if (file == null || !file.startsWith("/")) return new Item(null, NOT_FILE);
		int last = Math.max(Text.countLines(lines) - 1, 0);
		int first = clamp(caret == null ? 0 : caret.line, last);
		int end = first;
		String kind = "line";
		String message = null;
		switch (form == null ? "default" : form) {
			case "file":
				kind = "file";
				first = 0;
				end = last;
				break;
			case "diagnostic": {
				Map<String, Object> found = null;
				Object items = diagnostics == null ? null : diagnostics.get("items");
				if (items instanceof List) {
					for (Object raw : (List<Object>) items) {
						if (!(raw instanceof Map)) continue;
						Map<String, Object> d = (Map<String, Object>) raw;
						if (!(d.get("line") instanceof Number) || !(d.get("message") instanceof String)) continue;
						int from = ((Number) d.get("line")).intValue() - 1;
						int to = d.get("end_line") instanceof Number ? ((Number) d.get("end_line")).intValue() - 1 : from;
						if (from <= first && first <= Math.max(from, to) && !((String) d.get("message")).trim().isEmpty()) {
							found = d;
							break;
						}
					}
				}
				if (found == null) return new Item(null, NO_DIAGNOSTIC);
				kind = "diagnostic";
				int from = ((Number) found.get("line")).intValue() - 1;
				int to = found.get("end_line") instanceof Number ? ((Number) found.get("end_line")).intValue() - 1 : from;
				first = clamp(from, last);
				end = Math.max(first, clamp(to, last));
				message = (String) found.get("message");
				break;
			}
			case "hunk":
				if (hunk == null) return new Item(null, NO_HUNK);
				kind = "hunk";
				first = clamp(hunk[0], last);
				end = Math.max(first, clamp(hunk[1], last));
				break;
			default:
				int[] selected = selectedLines(anchor, head);
				if (selected != null) {
					kind = "selection";
					first = clamp(selected[0], last);
					end = Math.max(first, clamp(selected[1], last));
				}
		}
		final int from = first;
		final int to = end;
		Iterator<String> parts = new Iterator<String>() {
			int at = from;

			public boolean hasNext() {
				return at <= to;
			}

			public String next() {
				return lines.text(at++);
			}
		};
		Text.Range clipped = Text.clip(new Text.Position(from + 1, 1), new Text.Position(to + 1, 1), parts,
				Text.MAX_SELECTION_TEXT_BYTES);
		Map<String, Object> item = new LinkedHashMap<>();
		item.put("kind", kind);
		item.put("file", file);
		item.put("start_line", from + 1);
		item.put("end_line", to + 1);
		item.put("text", clipped.text);
		item.put("truncated", clipped.truncated);
		item.put("message", message);
		return new Item(item, null);
	}

	private static int clamp(int line, int last) {
		return Math.max(0, Math.min(line, last));
	}

	/**
	 * The lines (0-based, inclusive) a selection covers, or null when empty; one ending at the start of a line
	 * (whole lines selected) does not take that line.
	 */
	public static int[] selectedLines(Text.HostPosition anchor, Text.HostPosition head) {
		if (anchor == null || head == null) return null;
		boolean before = anchor.line < head.line || (anchor.line == head.line && anchor.character <= head.character);
		Text.HostPosition start = before ? anchor : head;
		Text.HostPosition end = before ? head : anchor;
		if (start.line == end.line && start.character == end.character) return null;
		return new int[] {start.line, end.character == 0 && end.line > start.line ? end.line - 1 : end.line};
	}

	/** {@code text} cut on a character boundary to at most {@code max} bytes of UTF-8. */
	public static String cutUtf8(String text, int max) {
		if (text.getBytes(StandardCharsets.UTF_8).length <= max) return text;
		int bytes = 0;
		int at = 0;
		while (at < text.length()) {
			int cp = text.codePointAt(at);
			int n = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8).length;
			if (bytes + n > max) break;
			bytes += n;
			at += Character.charCount(cp);
		}
		return text.substring(0, at);
	}

	/** The live pis whose message names {@code ownPid}, in a stable order (pid, then namespace). */
	public static List<PiMessage> naming(List<PiMessage> messages, long ownPid) {
		List<PiMessage> out = new ArrayList<>();
		for (PiMessage m : messages) if (m.editorPid != null && m.editorPid == ownPid) out.add(m);
		out.sort((a, b) -> a.pid != b.pid ? Long.compare(a.pid, b.pid)
				: String.valueOf(a.pidNs).compareTo(String.valueOf(b.pidNs)));
		return out;
	}

	/** A pi as the user picks it. */
	public static String describe(PiMessage pi) {
		return "pi " + pi.pid + (pi.pidNs != null ? " (" + pi.pidNs + ")" : "") + " in " + pi.cwd;
	}

	/** The user's pick among several pis (a list shown once); null: none picked. */
	public interface Ask {
		PiMessage pick(List<PiMessage> choices);
	}

	/** One IDE's sends: the pi picked (remembered while it names the IDE), ids not answered yet, the last send. */
	public static final class Desk {
		private final long pid;
		private final Path dir;
		private final long uid;
		private String chosen;
		private final Set<String> pending = new LinkedHashSet<>();
		private long count;
		private String lastId;
		private String lastKind;
		private String lastFile;
		private long lastPi;
		private String lastFate;
		private boolean written;

		public Desk(long pid, Path dir, long uid) {
			this.pid = pid;
			this.dir = dir;
			this.uid = uid;
		}

		/** The pi to send to among {@code candidates} ({@link #naming}), or null with {@code why[0]} set. */
		public synchronized PiMessage pick(List<PiMessage> candidates, Ask ask, String[] why) {
			if (candidates.isEmpty()) {
				why[0] = NO_PI;
				return null;
			}
			if (candidates.size() == 1) return candidates.get(0);
			for (PiMessage m : candidates) if (m.key().equals(chosen)) return m;
			PiMessage picked = ask.pick(candidates);
			if (picked == null || !candidates.contains(picked)) {
				why[0] = NOT_PICKED;
				return null;
			}
			chosen = picked.key();
			return picked;
		}

		/** Write the request for {@code pi}; returns null when written, else the one line saying why not. */
		public synchronized String write(PiMessage pi, Map<String, Object> item, String mode, String prompt, double now) {
			StateDir.Result health = StateDir.create(dir, uid);
			if (!health.ok()) return "not sending: " + health.message;
			count++;
			String id = "s" + pid + "-" + (long) (now * 1000) + "-" + count;
			Map<String, Object> request = new LinkedHashMap<>();
			request.put("protocol", "0.5");
			request.put("kind", "send");
			request.put("pid", pid);
			request.put("pi_pid", pi.pid);
			if (pi.pidNs != null) request.put("pi_ns", pi.pidNs);
			request.put("id", id);
			request.put("timestamp", now);
			request.put("mode", "now".equals(mode) ? "now" : "draft");
			request.put("prompt", cutUtf8(prompt == null ? "" : prompt, MAX_PROMPT_BYTES));
			request.put("item", item);
			StateDir.Result result = StateDir.write(dir, fileName(pid), Json.write(request).getBytes(StandardCharsets.UTF_8), uid);
			if (!result.ok()) return "not sending: " + result.message;
			written = true;
			pending.add(id);
			lastId = id;
			lastKind = (String) item.get("kind");
			lastFile = (String) item.get("file");
			lastPi = pi.pid;
			lastFate = null;
			return null;
		}

		/** The id of the last request written, or null. */
		public synchronized String lastId() {
			return lastId;
		}

		/** If pi's {@code message} answers one of our sends, the one line saying what became of it; else null. */
		public synchronized String answered(PiMessage message) {
			PiMessage.Sent sent = message.sent;
			if (sent == null || sent.editorPid != pid || !pending.remove(sent.id)) return null;
			if (sent.id.equals(lastId)) lastFate = sent.fate;
			String what = lastKind == null ? "send" : lastKind;
			switch (sent.fate) {
				case "draft":
					return what + " in pi's input as a draft";
				case "prompt":
					return what + " sent to pi as a prompt";
				case "follow-up":
					return what + " queued for pi as a follow-up";
				case "excluded":
					return "not sent: the file is excluded by pi's ignore rules";
				default:
					return oneLine("pi refused the send: " + (sent.reason != null ? sent.reason : sent.fate));
			}
		}

		/** The status line about the last send, or null before any. */
		public synchronized String summary() {
			if (lastId == null) return null;
			return "last send: " + lastKind + " of " + lastFile + " to pi " + lastPi + ": "
					+ (lastFate != null ? lastFate : "no answer yet");
		}

		/** Remove the request file this IDE wrote (on exit, with the state file). */
		public synchronized void dispose() {
			if (!written) return;
			written = false;
			StateDir.remove(dir, fileName(pid), uid);
		}
	}

	/** Control characters escaped and the line cut at 500 characters: pi's reason is untrusted text. */
	static String oneLine(String text) {
		StringBuilder out = new StringBuilder();
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == 0x2028 || c == 0x2029) {
				out.append(String.format("\\u%04x", (int) c));
			} else {
				out.append(c);
			}
		}
		return out.length() > 500 ? out.substring(0, 499) + "…" : out.toString();
	}
}
