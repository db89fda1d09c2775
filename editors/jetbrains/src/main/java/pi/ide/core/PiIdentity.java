package pi.ide.core;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * pi's identity across pid namespaces (PROTOCOL.md v0.5), pure but for {@link #ownNamespace}: a pi is the pair
 * (pid, pid namespace). Its files are {@code pi-<pid>.json} in the initial namespace (or when it cannot read its
 * own) and {@code pi-<pid>-<ns digits>.json} in any other ({@code .review.json}, {@code .approval.json} and
 * {@code .ask.json} likewise), whose {@code pid_ns} must agree with the name. Everything this client keys per pi is keyed by
 * {@link #key}; it judges pi's pid by its process only in its own namespace; and what it writes back names the pi
 * by {@code pi_pid} and {@code pi_ns}, the latter exactly as pi's file said.
 */
public final class PiIdentity {
	private PiIdentity() {}

	/** The initial (host) pid namespace, as readlink of /proc/self/ns/pid names it. */
	public static final String INITIAL_NS = "pid:[4026531836]";
	private static final String INITIAL_DIGITS = "4026531836";
	private static final long MAX_PID = 2147483647L;
	private static final Pattern NAME =
			Pattern.compile("pi-([1-9][0-9]{0,9})(?:-([1-9][0-9]{0,19}))?(\\.review|\\.approval|\\.ask)?\\.json");
	private static final Pattern NS = Pattern.compile("pid:\\[([0-9]+)\\]");

	/** One of pi's file names, parsed. */
	public static final class Name {
		/** "message", "review", "approval" or (v0.5 show and ask) "ask". */
		public final String kind;
		public final long pid;
		/** The namespace's digits, null for a name without (the initial namespace). */
		public final String ns;

		Name(String kind, long pid, String ns) {
			this.kind = kind;
			this.pid = pid;
			this.ns = ns;
		}

		/** The identity {@link #key} of the pi this name is of. */
		public String key() {
			return ns == null ? Long.toString(pid) : pid + "-" + ns;
		}
	}

	/**
	 * A name of pi's files, or null for any other: both numbers canonical decimal (the pid at most 2^31-1, the
	 * namespace at most 20 digits), and never a suffix naming the initial namespace (that pi's name has none).
	 */
	public static Name parse(String name) {
		Matcher m = NAME.matcher(name);
		if (!m.matches()) return null;
		long pid = Long.parseLong(m.group(1));
		if (pid > MAX_PID || INITIAL_DIGITS.equals(m.group(2))) return null;
		String kind = m.group(3) == null ? "message" : m.group(3).substring(1);
		return new Name(kind, pid, m.group(2));
	}

	/** The identity of pi {@code pid} whose files said {@code pidNs} (null: none, the initial namespace). */
	public static String key(long pid, String pidNs) {
		Matcher m = pidNs == null ? null : NS.matcher(pidNs);
		if (m == null || !m.matches() || INITIAL_DIGITS.equals(m.group(1))) return Long.toString(pid);
		return pid + "-" + m.group(1);
	}

	/** The identity a record written back ({@code files[]}, {@code decisions[]}, {@code reverted[]}) names. */
	public static String keyOf(Map<String, Object> record) {
		Object pid = record.get("pi_pid");
		Object ns = record.get("pi_ns");
		return pid instanceof Long ? key((Long) pid, ns instanceof String ? (String) ns : null) : String.valueOf(pid);
	}

	/**
	 * Why a file under {@code name} whose {@code pid_ns} is {@code pidNs} (null: left out) names another namespace
	 * than its name, or null: a name with a namespace needs exactly {@code pid:[<its digits>]}; one without allows
	 * none or the initial namespace.
	 */
	public static String disagrees(Name name, String pidNs) {
		String want = name.ns == null ? INITIAL_NS : "pid:[" + name.ns + "]";
		if (pidNs == null ? name.ns == null : pidNs.equals(want)) return null;
		return "pid_ns " + (pidNs == null ? "(none)" : "\"" + pidNs + "\"") + " does not match the file name";
	}

	/**
	 * May an editor in namespace {@code own} (null: unknown, counted as the initial one) judge the pid of a pi whose
	 * file is {@code name} by its process? Only in its own namespace: elsewhere the pid names another process or none.
	 */
	public static boolean judges(Name name, String own) {
		String piNs = name.ns == null ? INITIAL_NS : "pid:[" + name.ns + "]";
		return piNs.equals(own == null ? INITIAL_NS : own);
	}

	private static volatile String own;
	private static volatile boolean ownRead;

	/** This process's pid namespace (readlink /proc/self/ns/pid), read once; null where /proc does not say. */
	public static String ownNamespace() {
		if (!ownRead) {
			String found = null;
			try {
				Path link = Files.readSymbolicLink(Paths.get("/proc/self/ns/pid"));
				if (NS.matcher(link.toString()).matches()) found = link.toString();
			} catch (Exception e) {
				found = null;
			}
			own = found;
			ownRead = true;
		}
		return own;
	}
}
