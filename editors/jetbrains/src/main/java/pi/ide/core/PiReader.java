package pi.ide.core;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * Reading pi's files (its messages, {@code pi-<pid>.json}, and its approval requests,
 * {@code pi-<pid>.approval.json}) with the distrust pi applies to editor files: the name rule,
 * {@link StateDir#readPrivate} (regular file, ours, no group/other bits, under a size cap, not through a link),
 * the parser, the pid field against the name, and the writer alive and ours. Every failure is a value.
 */
public final class PiReader {
	private PiReader() {}

	/** alive (and ours), dead, foreign (another user's), or unknown. */
	public interface PidProbe {
		String probe(long pid);
	}

	/** What a file of pi's gave. */
	public static final class Verdict {
		/**
		 * "message" (pi-<pid>.json), "request" (pi-<pid>.approval.json naming this editor), "gone", "dead",
		 * "elsewhere" (a request for another editor: not ours to read further) or "problem".
		 */
		public final String kind;
		public final PiMessage message;
		public final Approval.Request request;
		public final String problem;

		Verdict(String kind, PiMessage message, String problem) {
			this(kind, message, null, problem);
		}

		Verdict(String kind, PiMessage message, Approval.Request request, String problem) {
			this.kind = kind;
			this.message = message;
			this.request = request;
			this.problem = problem;
		}
	}

	/**
	 * kill(pid, 0) as Java can ask it: Linux answers from /proc (the directory of a live process, owned by its
	 * user); elsewhere ProcessHandle (Java 9+) says alive or dead and the owner cannot be checked.
	 */
	public static PidProbe systemProbe(final long uid) {
		return new PidProbe() {
			public String probe(long pid) {
				Path proc = Paths.get("/proc");
				if (Files.isDirectory(proc)) {
					Path dir = proc.resolve(Long.toString(pid));
					try {
						long owner = StateDir.uidOf(dir);
						return uid < 0 || owner < 0 || owner == uid ? "alive" : "foreign";
					} catch (NoSuchFileException e) {
						return "dead";
					} catch (IOException e) {
						return "unknown";
					}
				}
				try {
					Class<?> handle = Class.forName("java.lang.ProcessHandle");
					Method of = handle.getMethod("of", long.class);
					Object optional = of.invoke(null, pid);
					boolean present = (Boolean) optional.getClass().getMethod("isPresent").invoke(optional);
					return present ? "alive" : "dead";
				} catch (ReflectiveOperationException | RuntimeException e) {
					return "unknown";
				}
			}
		};
	}

	public static Verdict read(Path dir, String name, long uid, PidProbe probe) {
		return read(dir, name, uid, probe, PiIdentity.ownNamespace());
	}

	/**
	 * Read a message ({@code pi-<pid>.json}, or {@code pi-<pid>-<ns digits>.json} from a pi of another pid namespace,
	 * v0.5) as an editor in pid namespace {@code ownNs} (null: unknown, counted as the initial one): its
	 * {@code pid_ns} must agree with the name, and its pi's liveness is checked only in the editor's own namespace.
	 */
	public static Verdict read(Path dir, String name, long uid, PidProbe probe, String ownNs) {
		PiIdentity.Name fromName = PiIdentity.parse(name);
		if (fromName == null || !"message".equals(fromName.kind)) {
			return new Verdict("problem", null, "is not named pi-<pid>.json");
		}
		StateDir.Read read = StateDir.readPrivate(dir.resolve(name), uid, PiMessage.MAX_BYTES);
		if (read.gone) return new Verdict("gone", null, null);
		if (read.problem != null) return new Verdict("problem", null, read.problem);
		PiMessage.Parsed parsed = PiMessage.parse(read.text);
		if (parsed.problem != null) return new Verdict("problem", null, "invalid message: " + parsed.problem);
		if (parsed.message.pid != fromName.pid) {
			return new Verdict("problem", null, "pid field " + parsed.message.pid + " does not match the file name");
		}
		String ns = PiIdentity.disagrees(fromName, parsed.message.pidNs);
		if (ns != null) return new Verdict("problem", null, "invalid message: " + ns);
		Verdict notAlive = unlessAlive(fromName, probe, ownNs);
		return notAlive != null ? notAlive : new Verdict("message", parsed.message, null);
	}

	public static Verdict readApproval(Path dir, String name, long uid, PidProbe probe, long ownPid, double now) {
		return readApproval(dir, name, uid, probe, ownPid, now, PiIdentity.ownNamespace());
	}

	/**
	 * Read an approval request ({@code pi-<pid>.approval.json}, at most {@link Approval#MAX_BYTES}) under the same
	 * checks as a message: only one naming this editor ({@code ownPid}), of a live pi of ours (judged only in the
	 * editor's own pid namespace {@code ownNs}), not run out at {@code now} (epoch seconds), is a "request".
	 */
	public static Verdict readApproval(Path dir, String name, long uid, PidProbe probe, long ownPid, double now,
			String ownNs) {
		PiIdentity.Name fromName = PiIdentity.parse(name);
		if (fromName == null || !"approval".equals(fromName.kind)) {
			return new Verdict("problem", null, "is not named pi-<pid>.approval.json");
		}
		StateDir.Read read = StateDir.readPrivate(dir.resolve(name), uid, Approval.MAX_BYTES);
		if (read.gone) return new Verdict("gone", null, null);
		if (read.problem != null) return new Verdict("problem", null, read.problem);
		Approval.Parsed parsed = Approval.parse(read.text, fromName.pid);
		if (parsed.problem != null) return new Verdict("problem", null, "invalid approval request: " + parsed.problem);
		String ns = PiIdentity.disagrees(fromName, parsed.request.piNs);
		if (ns != null) return new Verdict("problem", null, "invalid approval request: " + ns);
		if (parsed.request.editorPid != ownPid) return new Verdict("elsewhere", null, null);
		Verdict notAlive = unlessAlive(fromName, probe, ownNs);
		if (notAlive != null) return notAlive;
		if (Approval.expired(parsed.request, now)) {
			return new Verdict("problem", null, "ran out at " + (long) parsed.request.expires + ": ignored");
		}
		return new Verdict("request", null, parsed.request, null);
	}

	/**
	 * Is the pi whose file is {@code name} alive, for an editor in namespace {@code ownNs}? A pi of another pid
	 * namespace (a sandbox, a container) is not judged at all: its pid names another process here, or none.
	 */
	public static String liveness(PiIdentity.Name name, PidProbe probe, String ownNs) {
		return PiIdentity.judges(name, ownNs) ? probe.probe(name.pid) : "alive";
	}

	private static Verdict unlessAlive(PiIdentity.Name name, PidProbe probe, String ownNs) {
		switch (liveness(name, probe, ownNs)) {
			case "alive": return null;
			case "dead": return new Verdict("dead", null, null);
			case "foreign": return new Verdict("problem", null, "its pid belongs to another user's process: refused");
			default: return new Verdict("problem", null, "cannot tell whether its pi is running: ignored");
		}
	}

}
