package pi.ide.core;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.nio.file.OpenOption;

/**
 * The state directory's rules (PROTOCOL.md, "Where the files live" and "Writing"), the same as pi's
 * src/protocol/state-dir.ts and the Neovim writer, checked by one shared table of cases
 * (test/fixtures/state-dir-cases.ts, run against this class by test/jetbrains/state-dir.test.ts):
 * a real directory (never followed through a symlink) owned by the user with no group/other bits, created
 * 0700 (last component only), files written through an exclusive 0600 temp file and an atomic rename,
 * removed only inside a trusted directory. Expected failures are {@link Result} values, never exceptions.
 */
public final class StateDir {
	private StateDir() {}

	public static final String NAME = "pi-ide";
	public static final String TEMP_SUFFIX = ".tmp";
	private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;

	/** null problem: success. Problem names are the shared table's. */
	public static final class Result {
		public final String problem;
		public final String message;

		private Result(String problem, String message) {
			this.problem = problem;
			this.message = message;
		}

		public boolean ok() {
			return problem == null;
		}

		static final Result OK = new Result(null, null);

		static Result fail(String problem, String message) {
			return new Result(problem, message);
		}
	}

	/** {@code $XDG_RUNTIME_DIR/pi-ide} when that is absolute, else {@code /tmp/pi-ide}. */
	public static Path resolve(Map<String, String> env) {
		String runtime = env.get("XDG_RUNTIME_DIR");
		if (runtime != null && runtime.startsWith("/")) return Paths.get(runtime, NAME);
		return Paths.get("/tmp", NAME);
	}

	/** The user this process runs as; -1 when the platform has no uids (the owner check is then skipped). */
	public static long ownUid() {
		try {
			// com.sun.security.auth.module.UnixSystem: in every JDK on Unix, but not in javac's Java 8 API view
			Class<?> unix = Class.forName("com.sun.security.auth.module.UnixSystem");
			return ((Number) unix.getMethod("getUid").invoke(unix.getConstructor().newInstance())).longValue();
		} catch (ReflectiveOperationException | RuntimeException | LinkageError notUnix) {
			return -1;
		}
	}

	/** This process's pid: /proc/self on Linux, else the JVM's "pid@host" name; -1 when neither says. */
	public static long ownPid() {
		try {
			return Long.parseLong(Files.readSymbolicLink(Paths.get("/proc/self")).toString());
		} catch (IOException | RuntimeException notLinux) {
			String name = java.lang.management.ManagementFactory.getRuntimeMXBean().getName();
			try {
				return Long.parseLong(name.substring(0, name.indexOf('@')));
			} catch (RuntimeException unknown) {
				return -1;
			}
		}
	}

	/** The uid owning path (not followed), or -1 when the platform cannot say. */
	static long uidOf(Path path) throws IOException {
		try {
			return ((Number) Files.getAttribute(path, "unix:uid", NOFOLLOW)).longValue();
		} catch (UnsupportedOperationException | IllegalArgumentException noUnixView) {
			return -1;
		}
	}

	static int modeOf(Path path) throws IOException {
		try {
			return ((Number) Files.getAttribute(path, "unix:mode", NOFOLLOW)).intValue() & 07777;
		} catch (UnsupportedOperationException | IllegalArgumentException noUnixView) {
			return 0700;
		}
	}

	/** May this directory be used? Read-only. */
	public static Result check(Path dir, long uid) {
		BasicFileAttributes a;
		try {
			a = Files.readAttributes(dir, BasicFileAttributes.class, NOFOLLOW);
		} catch (NoSuchFileException e) {
			return Result.fail("missing", dir + " does not exist yet");
		} catch (IOException e) {
			return Result.fail("io", dir + " cannot be inspected: " + e);
		}
		if (a.isSymbolicLink()) return Result.fail("symlink", dir + " is a symbolic link (fix: remove it: rm " + dir + ")");
		if (!a.isDirectory()) return Result.fail("not-directory", dir + " is not a directory (fix: rm " + dir + ")");
		try {
			long owner = uidOf(dir);
			if (uid >= 0 && owner >= 0 && owner != uid) {
				return Result.fail("foreign-owner", dir + " is owned by uid " + owner + ", not by you (uid " + uid
						+ "); set XDG_RUNTIME_DIR to a private directory");
			}
			int mode = modeOf(dir);
			if ((mode & 077) != 0) {
				return Result.fail("open-permissions", dir + " has group/other permissions (0"
						+ Integer.toOctalString(mode & 0777) + ") (fix: chmod 700 " + dir + ")");
			}
		} catch (IOException e) {
			return Result.fail("io", dir + " cannot be inspected: " + e);
		}
		return Result.OK;
	}

	/** Create the directory 0700 when missing (last component only), then check it. */
	public static Result create(Path dir, long uid) {
		try {
			Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
			Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
		} catch (FileAlreadyExistsException exists) {
			// judged below, never "fixed"
		} catch (IOException | UnsupportedOperationException e) {
			return Result.fail("uncreatable", dir + " cannot be created: " + e);
		}
		return check(dir, uid);
	}

	/** Atomically replace {@code dir/name} with content, 0600, after {@link #create}. */
	public static Result write(Path dir, String name, byte[] content, long uid) {
		Result health = create(dir, uid);
		if (!health.ok()) return Result.fail(health.problem, "not writing: " + health.message);
		Path target = dir.resolve(name);
		Path temp = dir.resolve(name + TEMP_SUFFIX);
		Set<OpenOption> options = new HashSet<OpenOption>(
				Arrays.asList(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, NOFOLLOW));
		SeekableByteChannel out = null;
		for (int attempt = 0; out == null; attempt++) {
			try {
				// CREATE_NEW is O_CREAT|O_EXCL: it never opens through whatever already sits at the temp path.
				out = Files.newByteChannel(temp, options,
						PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
			} catch (FileAlreadyExistsException e) {
				if (attempt > 0 || !isOwnRegularFile(temp, uid)) {
					return Result.fail("temp-in-the-way", temp + " is in the way (not a file of ours): not writing");
				}
				try {
					Files.deleteIfExists(temp); // an interrupted write of ours
				} catch (IOException gone) {
					return Result.fail("io", "cannot remove the leftover " + temp + ": " + gone);
				}
			} catch (IOException e) {
				return Result.fail("io", "cannot open " + temp + ": " + e);
			}
		}
		try {
			try {
				ByteBuffer data = ByteBuffer.wrap(content);
				while (data.hasRemaining()) out.write(data);
			} finally {
				out.close();
			}
			// the create mode is filtered by the umask; it can only remove bits, but say exactly what we mean
			Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString("rw-------"));
			try {
				Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
			} catch (AtomicMoveNotSupportedException e) {
				throw new IOException("the file system cannot rename atomically", e);
			}
			return Result.OK;
		} catch (IOException e) {
			try {
				Files.deleteIfExists(temp);
			} catch (IOException ignored) {
				// nothing more to do: the next write removes a leftover of ours
			}
			return Result.fail("io", "cannot write " + target + ": " + e);
		}
	}

	private static boolean isOwnRegularFile(Path path, long uid) {
		try {
			BasicFileAttributes a = Files.readAttributes(path, BasicFileAttributes.class, NOFOLLOW);
			return a.isRegularFile() && (uid < 0 || uidOf(path) == uid);
		} catch (IOException e) {
			return false;
		}
	}

	/** Delete {@code dir/name} and its temp file, only inside a trusted directory; already gone is fine. */
	public static Result remove(Path dir, String name, long uid) {
		Result health = check(dir, uid);
		if (!health.ok()) {
			return "missing".equals(health.problem) ? Result.OK : Result.fail(health.problem, "left alone: " + health.message);
		}
		try {
			// Files.delete unlinks: a symlink is removed, never followed
			Files.deleteIfExists(dir.resolve(name + TEMP_SUFFIX));
			Files.deleteIfExists(dir.resolve(name));
			return Result.OK;
		} catch (IOException e) {
			return Result.fail("io", "cannot delete " + dir.resolve(name) + ": " + e);
		}
	}

	/** {@code <pid>.json}. */
	public static String stateFileName(long pid) {
		return pid + ".json";
	}

	/** What reading an untrusted file gave: its text, "gone" (vanished or replaced), or a problem. */
	public static final class Read {
		public final String text;
		public final boolean gone;
		public final String problem;

		Read(String text, boolean gone, String problem) {
			this.text = text;
			this.gone = gone;
			this.problem = problem;
		}
	}

	/**
	 * Read a file someone could have swapped (pi's messages): lstat first (a regular file of ours, no group/other
	 * bits, within maxBytes; a FIFO or device is refused before any open, so a read never blocks on one), open
	 * without following a symlink, read at most maxBytes + 1, then lstat again: the file must still be the one
	 * (same file key, size, mtime) that was judged, else it was replaced while being read and counts as gone.
	 * Java cannot fstat an open channel nor open with O_NONBLOCK, hence the second lstat; the directory is
	 * trusted (ours, 0700) before this is called, so only the user's own processes can swap entries in it.
	 */
	public static Read readPrivate(Path path, long uid, int maxBytes) {
		BasicFileAttributes before;
		try {
			before = Files.readAttributes(path, BasicFileAttributes.class, NOFOLLOW);
		} catch (NoSuchFileException e) {
			return new Read(null, true, null);
		} catch (IOException e) {
			return new Read(null, false, "cannot inspect: " + e);
		}
		String refused = refuse(path, before, uid, maxBytes);
		if (refused != null) return new Read(null, false, refused);
		byte[] data;
		Set<OpenOption> read = new HashSet<OpenOption>(Arrays.asList(StandardOpenOption.READ, NOFOLLOW));
		try (SeekableByteChannel in = Files.newByteChannel(path, read)) {
			ByteBuffer buffer = ByteBuffer.allocate(maxBytes + 1);
			while (buffer.hasRemaining() && in.read(buffer) > 0) {
				// keep reading: one read may return less than the file holds
			}
			data = new byte[buffer.position()];
			buffer.flip();
			buffer.get(data);
		} catch (NoSuchFileException e) {
			return new Read(null, true, null);
		} catch (IOException e) {
			// ELOOP from O_NOFOLLOW: the path became a symlink after lstat
			return new Read(null, false, "cannot open: " + e);
		}
		try {
			BasicFileAttributes after = Files.readAttributes(path, BasicFileAttributes.class, NOFOLLOW);
			boolean same = after.isRegularFile() && after.fileKey() != null && after.fileKey().equals(before.fileKey())
					&& after.size() == before.size() && after.lastModifiedTime().equals(before.lastModifiedTime())
					&& data.length == before.size();
			if (!same) return new Read(null, true, null);
		} catch (IOException e) {
			return new Read(null, true, null);
		}
		return new Read(new String(data, StandardCharsets.UTF_8), false, null);
	}

	private static String refuse(Path path, BasicFileAttributes a, long uid, int maxBytes) {
		if (a.isSymbolicLink()) return "is a symbolic link: refused";
		if (!a.isRegularFile()) return "is not a regular file: refused";
		try {
			long owner = uidOf(path);
			if (uid >= 0 && owner >= 0 && owner != uid) return "is owned by uid " + owner + ", not by you: refused";
			int mode = modeOf(path);
			if ((mode & 077) != 0) {
				return "has mode 0" + Integer.toOctalString(mode & 0777) + ", readable or writable by others: refused";
			}
		} catch (IOException e) {
			return "cannot inspect: " + e;
		}
		if (a.size() > maxBytes) return "is " + a.size() + " bytes, over the " + maxBytes + "-byte limit: refused";
		return null;
	}
}
