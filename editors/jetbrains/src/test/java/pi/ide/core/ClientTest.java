package pi.ide.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The client's writer: debounce, urgent writes, unchanged states, removal; pi's messages read and answered. */
class ClientTest {
	@TempDir
	Path root;

	Path dir;
	Client client;
	final List<String> warnings = Collections.synchronizedList(new ArrayList<String>());
	final List<PiMessage> messages = Collections.synchronizedList(new ArrayList<PiMessage>());
	static final Snapshot.Ide IDE = new Snapshot.Ide(StateDir.ownPid(), "PyCharm", "2025.1");

	@BeforeEach
	void start() {
		dir = root.resolve("pi-ide");
		client = new Client(IDE.pid, dir, StateDir.ownUid(), new Client.Listener() {
			public void warn(String message) {
				warnings.add(message);
			}

			public void onMessage(PiMessage message) {
				messages.add(message);
			}
		}, System::currentTimeMillis);
	}

	@AfterEach
	void stop() {
		client.dispose();
	}

	static Snapshot.State at(int line) {
		Snapshot.Document d = new Snapshot.Document("k", "/p/a.py", "a.py", Text.linesOf("x\ny\nz\n"),
				new Text.HostPosition(line, 0), null, null, false, null, null);
		return new Snapshot.State(IDE, Arrays.asList(new Snapshot.Window("/p", d, null)), null, null);
	}

	static void waitFor(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
		long deadline = System.currentTimeMillis() + 5000;
		while (!condition.getAsBoolean()) {
			if (System.currentTimeMillis() > deadline) throw new AssertionError("waiting for " + what);
			Thread.sleep(5);
		}
	}

	/** pi's way of writing a file: whole, under a temp name, renamed into place; then its mtime set. */
	static void replace(Path file, int bytes, long mtimeMillis) throws Exception {
		Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
		Files.write(tmp, new byte[bytes]);
		Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
		Files.setLastModifiedTime(file, java.nio.file.attribute.FileTime.fromMillis(mtimeMillis));
	}

	@Test
	void eachVersionOfAFileOfPisHasAStampOfItsOwn() throws Exception {
		Path file = root.resolve("pi-4242.approval.json");
		replace(file, 288, 1024);
		String first = Client.stampOf(file);
		assertEquals(first, Client.stampOf(file), "the same version, the same stamp");
		// The stamp once was mtime ^ size: these two versions gave one number, and the second went unread.
		assertEquals(1024L ^ 288, 1055L ^ 319);
		replace(file, 319, 1055);
		String second = Client.stampOf(file);
		assertFalse(first.equals(second), first + " vs " + second);
		// Same size, same mtime: still a new file (pi renames each version into place).
		replace(file, 319, 1055);
		assertFalse(second.equals(Client.stampOf(file)), "a version renamed in over one of the same size and time");
		Files.delete(file);
		assertEquals(null, Client.stampOf(file), "gone");
		// A link is not followed: its own stamp, whatever it points at.
		Files.createSymbolicLink(file, root.resolve("elsewhere"));
		assertTrue(Client.stampOf(file) != null, "a dangling link has a stamp of its own");
	}

	@Test
	void cursorMovesWaitForAPauseThenWriteOnce() throws Exception {
		for (int i = 0; i < 10; i++) {
			client.update(at(i % 3), false);
			Thread.sleep(20); // moving: each event comes well before the 200 ms pause
		}
		assertEquals(0, client.writes(), "nothing written while the caret keeps moving");
		waitFor(() -> client.writes() == 1, "one write after the pause");
		Thread.sleep(300);
		assertEquals(1, client.writes());
		assertTrue(new String(Files.readAllBytes(client.stateFile()), StandardCharsets.UTF_8).contains("\"line\":1"));
	}

	@Test
	void urgentUpdatesWriteAtOnceAndUnchangedStatesAreNotRewritten() throws Exception {
		client.update(at(0), true);
		waitFor(() -> client.writes() == 1, "the urgent write");
		client.update(at(0), true);
		Thread.sleep(100);
		assertEquals(1, client.writes(), "the same state is not written twice");
		assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(client.stateFile())));
	}

	@Test
	void noWindowLeftRemovesTheFileAndDisposeToo() throws Exception {
		client.update(at(0), true);
		waitFor(() -> Files.exists(client.stateFile()), "the file");
		client.update(new Snapshot.State(IDE, Collections.<Snapshot.Window>emptyList(), null, null), true);
		waitFor(() -> !Files.exists(client.stateFile()), "removal when the last project closed");
		client.update(at(1), true);
		waitFor(() -> Files.exists(client.stateFile()), "written again");
		client.dispose();
		assertFalse(Files.exists(client.stateFile()), "dispose removes the file before it returns");
		client.update(at(2), true);
		Thread.sleep(100);
		assertFalse(Files.exists(client.stateFile()), "nothing after dispose");
	}

	@Test
	void anOpenStateDirIsRefusedWithOneWarning() throws Exception {
		Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
		Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
		client.update(at(0), true);
		client.update(at(1), true);
		waitFor(() -> !warnings.isEmpty(), "a warning");
		Thread.sleep(100);
		assertEquals(1, warnings.size(), warnings.toString());
		assertTrue(warnings.get(0).contains("group/other"));
		assertFalse(Files.exists(client.stateFile()));
	}

	@Test
	void piMessagesAreReadCheckedAndHandedOver() throws Exception {
		client.update(at(0), true);
		waitFor(() -> Files.exists(client.stateFile()), "the file");
		client.listen();
		long pi = IDE.pid; // a live process of ours stands in for pi
		String body = "{\"protocol\":\"0.3\",\"kind\":\"pi\",\"pid\":" + pi + ",\"cwd\":\"/p\",\"timestamp\":1,\"editor_pid\":"
				+ IDE.pid + ",\"seq\":1,\"changed\":[{\"file\":\"/p/a.py\",\"seq\":1,\"tool\":\"write\"}],\"last_turn\":[]}";
		Path message = dir.resolve("pi-" + pi + ".json");
		Files.write(dir.resolve("pi-" + pi + ".json.tmp"), body.getBytes(StandardCharsets.UTF_8));
		Files.setPosixFilePermissions(dir.resolve("pi-" + pi + ".json.tmp"), PosixFilePermissions.fromString("rw-------"));
		Files.move(dir.resolve("pi-" + pi + ".json.tmp"), message);
		waitFor(() -> messages.size() == 1, "the message handed over");
		assertEquals(1L, messages.get(0).seq);
		// A message readable by others is refused, said once.
		Path open = dir.resolve("pi-1.json");
		Files.write(open, body.replace("\"pid\":" + pi, "\"pid\":1").getBytes(StandardCharsets.UTF_8));
		Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rw-r--r--"));
		waitFor(() -> !warnings.isEmpty(), "the refusal");
		assertTrue(warnings.get(0).contains("readable or writable by others"), warnings.toString());
		assertEquals(1, messages.size());
	}
}
