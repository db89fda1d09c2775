package pi.ide.core;

/**
 * {@link Text.Lines} over an immutable snapshot of a document's text (the IDE's
 * {@code Document.getImmutableCharSequence()}, taken on the event thread in O(1)): line starts are found lazily,
 * on the writer's thread, so an event costs nothing per line and a write scans the text once. Lines end at
 * \n, \r\n or \r, as a Document's do after it normalised them.
 */
public final class FrozenLines implements Text.Lines {
	private final CharSequence text;
	private int[] starts;
	private int count;

	public FrozenLines(CharSequence text) {
		this.text = text;
	}

	private void index() {
		if (starts != null) return;
		int[] found = new int[16];
		int n = 0;
		found[n++] = 0;
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			if (c == '\n' || c == '\r') {
				if (c == '\r' && i + 1 < text.length() && text.charAt(i + 1) == '\n') i++;
				if (n == found.length) found = java.util.Arrays.copyOf(found, n * 2);
				found[n++] = i + 1;
			}
		}
		starts = found;
		count = n;
	}

	public int count() {
		index();
		return count;
	}

	public String text(int line) {
		index();
		if (line < 0 || line >= count) return "";
		int from = starts[line];
		int to = line + 1 < count ? starts[line + 1] : text.length();
		while (to > from && (text.charAt(to - 1) == '\n' || text.charAt(to - 1) == '\r')) to--;
		return text.subSequence(from, to).toString();
	}
}
