package pi.ide.core;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/** Small byte helpers the core needs on Java 8 (the oldest runtime of the IDEs in the plugin's build range). */
public final class Bytes {
	private Bytes() {}

	/** Reads at most {@code max} + 1 bytes, so a caller can tell "over the limit" from "exactly the limit". */
	public static byte[] readAll(InputStream in, int max) throws IOException {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		byte[] chunk = new byte[8192];
		int n;
		while (out.size() <= max && (n = in.read(chunk, 0, Math.min(chunk.length, max + 1 - out.size()))) > 0) {
			out.write(chunk, 0, n);
		}
		return out.toByteArray();
	}

	/** UTF-8 bytes of a string without encoding it (a lone surrogate counts 3, as in editors/shared/utf16.ts). */
	public static int utf8Length(CharSequence s) {
		int bytes = 0;
		for (int i = 0; i < s.length(); i++) {
			char c = s.charAt(i);
			if (c < 0x80) bytes += 1;
			else if (c < 0x800) bytes += 2;
			else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
				bytes += 4;
				i++;
			} else bytes += 3;
		}
		return bytes;
	}

	public static byte[] utf8(String s) {
		return s.getBytes(StandardCharsets.UTF_8);
	}
}
