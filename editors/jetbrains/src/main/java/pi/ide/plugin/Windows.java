package pi.ide.plugin;

import com.intellij.openapi.Disposable;
import com.intellij.openapi.util.Disposer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import pi.ide.core.Snapshot;

/**
 * The open project windows and what each shows, in the order the user touched them: plain data kept on the
 * event thread (a window opens, its editor changes, it closes), turned into the list a state file describes.
 * A closed project is forgotten at once, so nothing is ever written for it.
 */
final class Windows {
	private static final class Window {
		Snapshot.Document document;
	}

	/** Insertion order is recency: the window touched last is first after {@link #touch}. */
	private final LinkedHashMap<String, Window> byProject = new LinkedHashMap<>();

	synchronized void open(String projectPath) {
		if (!byProject.containsKey(projectPath)) byProject.put(projectPath, new Window());
	}

	/**
	 * Track a project's window until the project is disposed (its window closed, or the IDE exiting), then
	 * forget it and run {@code closed}. The project is the one parent: Disposer gives a disposable one parent,
	 * and registering it under a second one would move it there.
	 */
	void openUntilDisposed(final String projectPath, Disposable project, final Runnable closed) {
		open(projectPath);
		Disposer.register(project, new Disposable() {
			@Override
			public void dispose() {
				close(projectPath);
				closed.run();
			}
		});
	}

	/** The window's active editor changed (or moved): it becomes the window touched last. */
	synchronized void touch(String projectPath, Snapshot.Document document) {
		Window w = byProject.remove(projectPath);
		if (w == null) w = new Window();
		w.document = document;
		LinkedHashMap<String, Window> reordered = new LinkedHashMap<>();
		reordered.put(projectPath, w);
		reordered.putAll(byProject);
		byProject.clear();
		byProject.putAll(reordered);
	}

	/** The editor showing a document closed: the window shows no document until the next event. */
	synchronized void forget(String projectPath, String documentKey) {
		Window w = byProject.get(projectPath);
		if (w != null && w.document != null && w.document.key.equals(documentKey)) w.document = null;
	}

	synchronized void close(String projectPath) {
		byProject.remove(projectPath);
	}

	synchronized boolean isEmpty() {
		return byProject.isEmpty();
	}

	/** Every open window, the one touched last first. */
	synchronized List<Snapshot.Window> snapshot() {
		List<Snapshot.Window> out = new ArrayList<>();
		for (Map.Entry<String, Window> e : byProject.entrySet()) {
			out.add(new Snapshot.Window(e.getKey(), e.getValue().document, null));
		}
		return out;
	}
}
