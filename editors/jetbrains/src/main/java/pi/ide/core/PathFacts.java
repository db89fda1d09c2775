package pi.ide.core;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * What a path is on disk, for the reload rule ({@link Reload}): recorded when a document is read and asked
 * again when pi says the file changed. lstat first, never following the path itself; a link is resolved to its
 * real path only to compare it with the one recorded.
 */
public final class PathFacts {
	public final Reload.PathKind kind;
	/** The real path (for a link: its target's), or null when missing or not a file. */
	public final String realPath;

	private PathFacts(Reload.PathKind kind, String realPath) {
		this.kind = kind;
		this.realPath = realPath;
	}

	/**
	 * The text of {@code file} as an editor may show it when it has no document for it: a regular file's (not
	 * through a link), "" when it does not exist (a file pi would create), null for anything else.
	 */
	public static String readRegular(String file) {
		PathFacts facts = of(Paths.get(file));
		if (facts.kind == Reload.PathKind.MISSING) return "";
		if (facts.kind != Reload.PathKind.REGULAR) return null;
		try {
			return new String(Files.readAllBytes(Paths.get(file)), StandardCharsets.UTF_8);
		} catch (IOException | RuntimeException e) {
			return null;
		}
	}

	public static PathFacts of(Path path) {
		try {
			BasicFileAttributes a = Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
			if (a.isRegularFile()) return new PathFacts(Reload.PathKind.REGULAR, path.toRealPath().toString());
			if (!a.isSymbolicLink()) return new PathFacts(Reload.PathKind.OTHER, null);
			Path real = path.toRealPath();
			boolean regular = Files.readAttributes(real, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).isRegularFile();
			return regular ? new PathFacts(Reload.PathKind.LINK_TO_REGULAR, real.toString()) : new PathFacts(Reload.PathKind.OTHER, null);
		} catch (NoSuchFileException e) {
			return new PathFacts(Reload.PathKind.MISSING, null);
		} catch (IOException | RuntimeException e) {
			// a dangling or looping link, a path we may not inspect: nothing to read
			return new PathFacts(Reload.PathKind.OTHER, null);
		}
	}
}
