package pi.ide.plugin;

import com.intellij.openapi.actionSystem.AnAction;
import com.intellij.openapi.actionSystem.AnActionEvent;
import com.intellij.openapi.components.ServiceManager;
import com.intellij.openapi.diagnostic.Logger;
import com.intellij.openapi.project.DumbAware;
import com.intellij.openapi.project.Project;
import pi.ide.core.ShowAsk;

/**
 * v0.5 show: the places pi's model showed. "pi: pi's places" lists them (newest last; picking one opens it),
 * "pi: Open the places pi shows (on/off)" turns the follow setting over (off by default: a show is only listed),
 * and a show's notification carries {@link OpenPlace} ("Open"). Registered in plugin.xml (Find Action, or a keymap:
 * none is set). DumbAware: they work while the IDE indexes.
 */
public final class ShowAskActions {
	private ShowAskActions() {}

	private static final Logger LOG = Logger.getInstance(ShowAskActions.class);

	private static PiIdeService service() {
		return ServiceManager.getService(PiIdeService.class);
	}

	public static final class Places extends AnAction implements DumbAware {
		public Places() {
			super("pi: pi's places");
		}

		@Override
		public void actionPerformed(AnActionEvent e) {
			try {
				service().pickPlace(e.getProject());
			} catch (RuntimeException | LinkageError error) {
				LOG.warn("pi-ide-context: " + error);
			}
		}
	}

	public static final class Follow extends AnAction implements DumbAware {
		public Follow() {
			super("pi: Open the places pi shows (on/off)");
		}

		@Override
		public void actionPerformed(AnActionEvent e) {
			try {
				boolean on = ShowAskUi.toggleFollow();
				ApprovalUi.notify(e.getProject(), "pi-ide-context", on ? "a place pi shows is opened at once"
						: "a place pi shows is only listed (pi: pi's places)");
			} catch (RuntimeException | LinkageError error) {
				LOG.warn("pi-ide-context: " + error);
			}
		}
	}

	/** A show notification's button: open that place. */
	static final class OpenPlace extends AnAction implements DumbAware {
		private final ShowAsk.Place place;
		private final Project project;

		OpenPlace(Project project, ShowAsk.Place place) {
			super("Open");
			this.project = project;
			this.place = place;
		}

		@Override
		public void actionPerformed(AnActionEvent e) {
			try {
				ShowAskUi.open(e.getProject() != null ? e.getProject() : project, place);
			} catch (RuntimeException | LinkageError error) {
				LOG.warn("pi-ide-context: " + error);
			}
		}
	}
}
