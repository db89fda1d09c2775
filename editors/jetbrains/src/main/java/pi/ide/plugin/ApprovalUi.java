package pi.ide.plugin;

import com.intellij.openapi.actionSystem.AnAction;
import com.intellij.openapi.diagnostic.Logger;
import com.intellij.openapi.fileTypes.FileType;
import com.intellij.openapi.fileTypes.FileTypeRegistry;
import com.intellij.openapi.project.Project;
import com.intellij.openapi.util.text.StringUtil;
import java.lang.reflect.Method;

/**
 * What the user sees of an approval request: a non-modal notification (a balloon and the Event Log, never a
 * dialog, never focus) with actions, and "Show change" as the platform's diff window between two in-memory
 * texts (the document's text as it is and pi's proposal), so neither the document nor the file is ever written.
 *
 * <p>The notification API ({@code com.intellij.notification}) and the diff API ({@code com.intellij.diff}) are
 * in every IDE of build 183 and later, but not in the Debian 183 jars this plugin compiles against
 * (editors/jetbrains/README.md): they are bound here by name, at run time, in this one class, with the
 * signatures they have had since before 183. Where a class or method is missing, or a call fails, the words
 * go to idea.log instead, and the actions registered in plugin.xml still answer: never an exception out of here.
 */
final class ApprovalUi {
	private ApprovalUi() {}

	private static final Logger LOG = Logger.getInstance(ApprovalUi.class);
	/** The notifications' group (Settings | Appearance | Notifications lists it by this name). */
	static final String GROUP = "pi-ide-context";

	/** Names looked up by reflection, kept together so a reader can check them against the platform's API. */
	static final String NOTIFICATION = "com.intellij.notification.Notification";
	static final String NOTIFICATION_TYPE = "com.intellij.notification.NotificationType";
	static final String NOTIFICATIONS_BUS = "com.intellij.notification.Notifications$Bus";
	static final String DIFF_CONTENT_FACTORY = "com.intellij.diff.DiffContentFactory";
	static final String DIFF_CONTENT = "com.intellij.diff.contents.DiffContent";
	static final String SIMPLE_DIFF_REQUEST = "com.intellij.diff.requests.SimpleDiffRequest";
	static final String DIFF_REQUEST = "com.intellij.diff.requests.DiffRequest";
	static final String DIFF_MANAGER = "com.intellij.diff.DiffManager";

	/**
	 * Show an information notification; its handle (for {@link #expire}), or null when it could not be shown (the
	 * words went to idea.log). {@code content} is plain text (escaped here: a path is never read as markup).
	 */
	static Object notify(Project project, String title, String content, AnAction... actions) {
		try {
			Class<?> notification = Class.forName(NOTIFICATION);
			Class<?> type = Class.forName(NOTIFICATION_TYPE);
			Object information = type.getField("INFORMATION").get(null);
			Object n = notification.getConstructor(String.class, String.class, String.class, type)
					.newInstance(GROUP, StringUtil.escapeXml(title), StringUtil.escapeXml(content), information);
			Method addAction = notification.getMethod("addAction", AnAction.class);
			for (AnAction action : actions) addAction.invoke(n, action);
			Class.forName(NOTIFICATIONS_BUS).getMethod("notify", notification, Project.class).invoke(null, n, project);
			return n;
		} catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
			LOG.warn(title + ": " + content + " (no notification: " + e + ")");
			return null;
		}
	}

	/** Expire a notification {@link #notify} showed (its balloon closes, its actions go grey); null does nothing. */
	static void expire(Object notification) {
		if (notification == null) return;
		try {
			notification.getClass().getMethod("expire").invoke(notification);
		} catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
			LOG.warn("pi-ide-context: cannot expire a notification: " + e);
		}
	}

	/**
	 * The platform's diff window: {@code current} (left) against {@code proposal} (right), both in-memory texts
	 * highlighted as {@code fileName}. False when the diff API is not there or failed (the caller says so).
	 */
	static boolean showDiff(Project project, String title, String fileName, String current, String proposal) {
		return showDiff(project, title, fileName, current, proposal, "Now", "pi's proposal");
	}

	/** {@link #showDiff} with the two sides' titles. */
	static boolean showDiff(Project project, String title, String fileName, String current, String proposal,
			String currentTitle, String proposalTitle) {
		try {
			FileType fileType = FileTypeRegistry.getInstance().getFileTypeByFileName(fileName);
			Class<?> factoryClass = Class.forName(DIFF_CONTENT_FACTORY);
			Object factory = factoryClass.getMethod("getInstance").invoke(null);
			Method create = factoryClass.getMethod("create", Project.class, String.class, FileType.class);
			Object left = create.invoke(factory, project, current, fileType);
			Object right = create.invoke(factory, project, proposal, fileType);
			Class<?> content = Class.forName(DIFF_CONTENT);
			Object request = Class.forName(SIMPLE_DIFF_REQUEST)
					.getConstructor(String.class, content, content, String.class, String.class)
					.newInstance(title, left, right, currentTitle, proposalTitle);
			Class<?> managerClass = Class.forName(DIFF_MANAGER);
			Object manager = managerClass.getMethod("getInstance").invoke(null);
			managerClass.getMethod("showDiff", Project.class, Class.forName(DIFF_REQUEST)).invoke(manager, project, request);
			return true;
		} catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
			LOG.warn("pi-ide-context: no diff window: " + e);
			return false;
		}
	}
}
