package pi.ide.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * pi's message files as an editor must read them (PROTOCOL.md, "What an editor may and may not do with it"):
 * only a regular file of ours, no group/other bits, at most 64 KiB, not through a symlink, never blocking on a
 * FIFO, its pid matching its name and alive. Everything else is one problem, never an exception.
 */
class PiReaderTest {
	@TempDir
	Path dir;

	static final long PI = 4242;
	static final String BODY = "{\"protocol\":\"0.3\",\"kind\":\"pi\",\"pid\":4242,\"cwd\":\"/p\",\"timestamp\":1,"
			+ "\"editor_pid\":7,\"seq\":1,\"changed\":[],\"last_turn\":[]}";

	static Stream<Arguments> cases() {
		// name, how the file is laid out, liveness of pi, expected kind, expected problem fragment
		return Stream.of(
				Arguments.of("a good message", "file", "alive", "message", null),
				Arguments.of("missing", "none", "alive", "gone", null),
				Arguments.of("its pi exited", "file", "dead", "dead", null),
				Arguments.of("another user's pid", "file", "foreign", "problem", "another user"),
				Arguments.of("group-readable", "file-0640", "alive", "problem", "readable or writable by others"),
				Arguments.of("a symlink to a good file", "symlink", "alive", "problem", "symbolic link"),
				Arguments.of("a FIFO is refused without blocking", "fifo", "alive", "problem", "not a regular file"),
				Arguments.of("a directory", "directory", "alive", "problem", "not a regular file"),
				Arguments.of("over 64 KiB", "big", "alive", "problem", "over the 65536-byte limit"),
				Arguments.of("pid field differs from the name", "other-pid", "alive", "problem", "does not match"),
				Arguments.of("not JSON", "garbage", "alive", "problem", "invalid message"));
	}

	void lay(String how, Path path) throws Exception {
		switch (how) {
			case "none": return;
			case "directory": Files.createDirectory(path); return;
			case "fifo": new ProcessBuilder("mkfifo", "-m", "600", path.toString()).start().waitFor(); return;
			case "symlink": {
				Path real = dir.resolve("real.json");
				write(real, BODY, "rw-------");
				Files.createSymbolicLink(path, real);
				return;
			}
			case "file-0640": write(path, BODY, "rw-r-----"); return;
			case "big": write(path, BODY.replace("\"/p\"", "\"/" + new String(new char[70000]).replace('\0', 'p') + "\""), "rw-------"); return;
			case "other-pid": write(path, BODY.replace("\"pid\":4242", "\"pid\":4243"), "rw-------"); return;
			case "garbage": write(path, "{not json", "rw-------"); return;
			default: write(path, BODY, "rw-------");
		}
	}

	static void write(Path path, String text, String mode) throws Exception {
		Files.write(path, text.getBytes(StandardCharsets.UTF_8));
		Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(mode));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("cases")
	void reads(String name, String how, String liveness, String kind, String problem) throws Exception {
		lay(how, dir.resolve("pi-" + PI + ".json"));
		PiReader.Verdict v = assertTimeoutPreemptively(Duration.ofSeconds(5),
				() -> PiReader.read(dir, "pi-" + PI + ".json", StateDir.ownUid(), pid -> liveness));
		assertEquals(kind, v.kind, String.valueOf(v.problem));
		if (problem != null) assertTrue(v.problem.contains(problem), v.problem);
		if ("message".equals(kind)) assertEquals(7L, (long) v.message.editorPid);
	}
}
