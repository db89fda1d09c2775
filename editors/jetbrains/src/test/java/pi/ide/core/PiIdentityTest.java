package pi.ide.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * pi's identity across pid namespaces (PROTOCOL.md v0.5) in the JetBrains core: which file names and {@code pid_ns}
 * are read, that a pi's pid is judged by its process only in the editor's own namespace (the probe is never asked
 * about a pi of another one), that two pis with one pid are two pis, and that reports and decisions echo
 * {@code pi_ns} exactly as pi's file said. The names themselves: test/jetbrains/pi-identity.test.ts runs the shared
 * table test/fixtures/state-dir-cases.ts against {@link PiIdentity#parse}.
 */
class PiIdentityTest {
	@TempDir
	Path dir;

	static final String HOST = PiIdentity.INITIAL_NS;
	static final String SANDBOX = "pid:[4026532455]";
	static final String OTHER = "pid:[4026532456]";

	static String message(long pid, String pidNs, long seq) {
		return "{\"protocol\":\"0.3\",\"kind\":\"pi\",\"pid\":" + pid
				+ (pidNs == null ? "" : ",\"pid_ns\":\"" + pidNs + "\"")
				+ ",\"cwd\":\"/p\",\"timestamp\":1,\"editor_pid\":7,\"seq\":" + seq
				+ ",\"changed\":[{\"file\":\"/p/a.txt\",\"seq\":" + seq + ",\"tool\":\"write\"}],\"last_turn\":[]}";
	}

	void write(String name, String text) throws Exception {
		Path path = dir.resolve(name);
		Files.write(path, text.getBytes(StandardCharsets.UTF_8));
		Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rw-------"));
	}

	static Stream<Arguments> cases() {
		// name, file name, pid_ns in the file (null: none), the editor's own namespace (null: unknown), what the
		// probe says about the pid, the verdict, whether the probe may be asked
		return Stream.of(
				Arguments.of("a sandboxed pi, its pid dead here: not judged", "pi-1-4026532455.json", SANDBOX, HOST, "dead",
						"message", false),
				Arguments.of("a sandboxed pi, the editor not knowing its own namespace", "pi-1-4026532455.json", SANDBOX,
						null, "dead", "message", false),
				Arguments.of("a host pi without pid_ns, alive", "pi-42.json", null, HOST, "alive", "message", true),
				Arguments.of("a host pi with the initial pid_ns, dead", "pi-42.json", HOST, HOST, "dead", "dead", true),
				Arguments.of("a host pi, dead, the editor not knowing its own", "pi-42.json", null, null, "dead", "dead",
						true),
				Arguments.of("a pi of the editor's own sandbox, dead: judged", "pi-1-4026532455.json", SANDBOX, SANDBOX,
						"dead", "dead", true),
				Arguments.of("a host pi seen from a sandbox: not judged", "pi-42.json", null, SANDBOX, "dead", "message",
						false),
				Arguments.of("a pi of a third namespace seen from a sandbox", "pi-1-4026532456.json", OTHER, SANDBOX, "dead",
						"message", false),
				Arguments.of("pid_ns another namespace than the name's", "pi-1-4026532455.json", OTHER, HOST, "alive",
						"problem", false),
				Arguments.of("a namespace in the name, none in the file", "pi-1-4026532455.json", null, HOST, "alive",
						"problem", false),
				Arguments.of("pi-<pid>.json naming another namespace", "pi-42.json", SANDBOX, HOST, "alive", "problem",
						false),
				Arguments.of("a pid_ns that is not pid:[digits]", "pi-1-4026532455.json", "pid:[4026532455] ", HOST,
						"alive", "problem", false));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("cases")
	void reads(String what, String name, String pidNs, String own, String life, String kind, boolean asks)
			throws Exception {
		PiIdentity.Name parsed = PiIdentity.parse(name);
		write(name, message(parsed.pid, pidNs, 1));
		AtomicInteger asked = new AtomicInteger();
		PiReader.Verdict v = PiReader.read(dir, name, StateDir.ownUid(), pid -> {
			asked.incrementAndGet();
			return life;
		}, own);
		assertEquals(kind, v.kind, what + ": " + v.problem);
		if (!asks) assertEquals(0, asked.get(), what + ": the probe is not asked about a pi it cannot judge");
		if ("problem".equals(kind)) assertTrue(v.problem.contains("pid_ns"), v.problem);
	}

	@Test
	void approvalOfASandboxedPiIsReadWithoutALivenessCheckAndItsDecisionNamesTheNamespace() throws Exception {
		String name = "pi-1-4026532455.approval.json";
		write(name, "{\"protocol\":\"0.4\",\"kind\":\"pi-approval\",\"pid\":1,\"pid_ns\":\"" + SANDBOX
				+ "\",\"editor_pid\":7,\"timestamp\":1,\"request\":{\"id\":\"r1\",\"tool\":\"edit\",\"file\":\"/p/a.txt\","
				+ "\"timeout_s\":60,\"expires\":100,\"hunks\":[]}}");
		PiReader.Verdict v = PiReader.readApproval(dir, name, StateDir.ownUid(), pid -> "dead", 7, 50, HOST);
		assertEquals("request", v.kind, String.valueOf(v.problem));
		assertEquals("1-4026532455", v.request.key());
		Map<String, Object> d = Approval.addDecision(Collections.emptyList(), v.request, "accept").get(0);
		assertEquals(1L, d.get("pi_pid"));
		assertEquals(SANDBOX, d.get("pi_ns"));
		// The same request text under a host name: its pid_ns disagrees.
		write("pi-1.approval.json", new String(Files.readAllBytes(dir.resolve(name)), StandardCharsets.UTF_8));
		assertEquals("problem", PiReader.readApproval(dir, "pi-1.approval.json", StateDir.ownUid(), pid -> "alive", 7, 50,
				HOST).kind);
	}

	@Test
	void twoPisWithOnePidInTwoNamespacesAreTwoPisWithTheirOwnSeqAndReports() {
		Inbox inbox = new Inbox(7);
		List<String> reloaded = new ArrayList<>();
		Inbox.Host host = new Inbox.Host() {
			public Reload.Facts facts(String file) {
				return new Reload.Facts(true, false, Reload.PathKind.REGULAR, file, Reload.PathKind.REGULAR, file, false);
			}

			public void reload(String file) {
				reloaded.add(file);
			}

			public Long version(String file) {
				return 1L;
			}

			public boolean diagnosticsExpected(String file) {
				return false;
			}

			public Map<String, Object> diagnostics(String file) {
				return null;
			}

			public void notifyModified(String file, String notice) {}
		};
		for (String ns : new String[] {SANDBOX, OTHER, HOST}) {
			assertTrue(inbox.handle(PiMessage.parse(message(1, ns, 1)).message, host), "pi 1 in " + ns);
		}
		// The host pi with and without the initial pid_ns is one pi: its second message (seq 1 again) is not new.
		assertFalse(inbox.handle(PiMessage.parse(message(1, null, 1)).message, host));
		List<Map<String, Object>> files = inbox.files();
		assertEquals(3, files.size(), String.valueOf(files));
		assertEquals(SANDBOX, files.get(0).get("pi_ns"));
		assertEquals(OTHER, files.get(1).get("pi_ns"));
		assertEquals(HOST, files.get(2).get("pi_ns"));
		for (Map<String, Object> f : files) assertEquals(1L, f.get("pi_pid"));
		assertEquals(3, reloaded.size());
		assertNotEquals(PiIdentity.keyOf(files.get(0)), PiIdentity.keyOf(files.get(1)));
		assertEquals("1", PiIdentity.keyOf(files.get(2)));
	}
}
