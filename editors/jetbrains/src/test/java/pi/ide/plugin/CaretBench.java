package pi.ide.plugin;

import com.intellij.openapi.Disposable;
import com.intellij.openapi.application.ApplicationManager;
import com.intellij.openapi.editor.Document;
import com.intellij.openapi.editor.impl.DocumentImpl;
import com.intellij.openapi.util.Disposer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import pi.ide.core.Client;
import pi.ide.core.Snapshot;
import pi.ide.core.StateDir;

/**
 * bench/jetbrains.ts's measurements, in the JVM after warm-up (not a test: JUnit finds no tests here). What the
 * plugin does per caret event on the event thread (capture the document and offsets, update the window list,
 * hand the state to the client, which re-arms its debounce) over a real DocumentImpl, and the writes per second
 * the client makes while the caret keeps moving at 30 events a second. Prints one JSON line.
 */
public final class CaretBench {
	private CaretBench() {}

	static final DocumentCapture.Files FILES = new DocumentCapture.Files() {
		public String pathOf(Document document) {
			return "/bench/project/src/Main.kt";
		}

		public boolean isUnsaved(Document document) {
			return false;
		}
	};

	public static void main(String[] args) throws Exception {
		Disposable environment = Disposer.newDisposable("bench");
		if (ApplicationManager.getApplication() == null) new com.intellij.core.CoreApplicationEnvironment(environment);
		StringBuilder text = new StringBuilder();
		for (int i = 0; i < 5000; i++) text.append("    val line").append(i).append(" = \"some text é\" // ").append(i).append('\n');
		DocumentImpl document = new DocumentImpl(text.toString());
		Path root = Files.createTempDirectory("pi-ide-jb-bench");
		Path dir = root.resolve("pi-ide");
		Snapshot.Ide ide = new Snapshot.Ide(StateDir.ownPid(), "IntelliJ IDEA", "2025.2");
		Client client = new Client(ide.pid, dir, StateDir.ownUid(), new Client.Listener() {
			public void warn(String message) {
				System.err.println(message);
			}

			public void onMessage(pi.ide.core.PiMessage message) {}
		}, System::currentTimeMillis);
		Windows windows = new Windows();
		windows.open("/bench/project");
		windows.open("/bench/other");
		int length = document.getTextLength();

		// Per caret event: batches of 1000 events, warm-up first.
		List<Double> perEventMicros = new ArrayList<>();
		int offset = 0;
		for (int batch = 0; batch < 400; batch++) {
			long start = System.nanoTime();
			for (int i = 0; i < 1000; i++) {
				offset = (offset + 37) % length;
				Snapshot.Document captured = DocumentCapture.capture(FILES, "bench", "[No Name]", document, offset, offset, offset);
				windows.touch("/bench/project", captured);
				client.update(new Snapshot.State(ide, windows.snapshot(), null, null), false);
			}
			double micros = (System.nanoTime() - start) / 1000.0 / 1000;
			if (batch >= 100) perEventMicros.add(micros); // the first 100 batches warm the JIT up
		}
		Collections.sort(perEventMicros);

		// Continuous movement: 30 caret events a second for 4 s, counting the files written meanwhile.
		client.flush();
		Thread.sleep(400);
		long writesBefore = client.writes();
		long until = System.currentTimeMillis() + 4000;
		while (System.currentTimeMillis() < until) {
			offset = (offset + 37) % length;
			Snapshot.Document captured = DocumentCapture.capture(FILES, "bench", "[No Name]", document, offset, offset, offset);
			windows.touch("/bench/project", captured);
			client.update(new Snapshot.State(ide, windows.snapshot(), null, null), false);
			Thread.sleep(33);
		}
		double writesPerSecond = (client.writes() - writesBefore) / 4.0;

		// The write itself (build, encode, atomic write), on the client's thread: measured separately.
		List<Double> writeMillis = new ArrayList<>();
		for (int i = 0; i < 200; i++) {
			offset = (offset + 37) % length;
			windows.touch("/bench/project", DocumentCapture.capture(FILES, "bench", "[No Name]", document, offset, offset, offset));
			client.update(new Snapshot.State(ide, windows.snapshot(), null, null), false);
			long start = System.nanoTime();
			client.flush();
			if (i >= 50) writeMillis.add((System.nanoTime() - start) / 1e6);
		}
		Collections.sort(writeMillis);
		client.dispose();
		Files.deleteIfExists(dir);
		Files.deleteIfExists(root);
		Disposer.dispose(environment);
		System.out.println("{\"caret_us_p50\":" + perEventMicros.get(perEventMicros.size() / 2) + ",\"caret_us_p95\":"
				+ perEventMicros.get(perEventMicros.size() * 95 / 100) + ",\"writes_per_second\":" + writesPerSecond
				+ ",\"write_ms_p50\":" + writeMillis.get(writeMillis.size() / 2) + ",\"lines\":5000}");
		System.exit(0);
	}
}
