package pi.ide.core;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Language ids by file name, the same ids the other clients report for the same files. The table is pi's own
 * (src/context/languages.ts), exported as data by editors/jetbrains/build.sh into {@code languages.json} beside
 * this class, so there is one table and no copy to drift. The IDE's own file type names ("JAVA", "TypeScript
 * JSX") are not protocol ids and are never sent.
 */
public final class Languages {
	private final Map<String, String> byExtension;
	private final Map<String, String> byName;

	public Languages(Map<String, String> byExtension, Map<String, String> byName) {
		this.byExtension = byExtension;
		this.byName = byName;
	}

	private static Languages bundled;

	/** The table built into the plugin; an empty table (every language null) if the resource is unreadable. */
	public static synchronized Languages bundled() {
		if (bundled == null) bundled = load();
		return bundled;
	}

	@SuppressWarnings("unchecked")
	private static Languages load() {
		try (InputStream in = Languages.class.getResourceAsStream("languages.json")) {
			if (in == null) return new Languages(Collections.emptyMap(), Collections.emptyMap());
			Object parsed = Json.parse(new String(Bytes.readAll(in, 1 << 20), StandardCharsets.UTF_8));
			Map<String, Object> root = (Map<String, Object>) parsed;
			return new Languages(strings(root.get("extensions")), strings(root.get("filenames")));
		} catch (IOException | Json.ParseError | ClassCastException e) {
			return new Languages(Collections.emptyMap(), Collections.emptyMap());
		}
	}

	private static Map<String, String> strings(Object raw) {
		Map<String, String> out = new HashMap<>();
		if (raw instanceof Map) {
			for (Map.Entry<?, ?> e : ((Map<?, ?>) raw).entrySet()) {
				if (e.getValue() instanceof String) out.put(String.valueOf(e.getKey()), (String) e.getValue());
			}
		}
		return out;
	}

	/** Number of ids known (a build check: zero means the table did not make it into the jar). */
	public int size() {
		return byExtension.size() + byName.size();
	}

	/** The language of a file name or path ({@code Dockerfile}, {@code src/x.ts}), or null: languageOfFile's rule. */
	public String of(String file) {
		if (file == null) return null;
		int slash = Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\'));
		String name = file.substring(slash + 1).toLowerCase(Locale.ROOT);
		String whole = byName.get(name);
		if (whole != null) return whole;
		int dot = name.lastIndexOf('.');
		// A leading dot alone (".env") is part of the name, not an extension.
		if (dot <= 0) return null;
		return byExtension.get(name.substring(dot));
	}
}
