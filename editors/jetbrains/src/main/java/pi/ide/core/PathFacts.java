package pi.ide.core;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
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
