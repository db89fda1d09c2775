package pi.ide.plugin;

import com.intellij.openapi.actionSystem.AnAction;
import com.intellij.openapi.actionSystem.AnActionEvent;
import com.intellij.openapi.components.ServiceManager;
import com.intellij.openapi.diagnostic.Logger;
import com.intellij.openapi.project.DumbAware;
import com.intellij.openapi.project.Project;

/**
 * The user's answers to pi's approval request. Registered in plugin.xml ("pi: Accept pi's proposed change",
 * "pi: Reject ...", "pi: Show pi's proposed change"; Find Action or a keymap) they answer the request the user
 * was shown (Approvals: a request that took the place of one shown and unanswered is named, not answered); on a
 * notification they carry its request's id, so a late click answers nothing but says so. DumbAware:
 * they work while the IDE indexes.
 */
public final class ApprovalActions {
	private ApprovalActions() {}

	private static final Logger LOG = Logger.getInstance(ApprovalActions.class);

	/** The one answer behind all three: decide (accept/reject) or show. */
	abstract static class Answer extends AnAction implements DumbAware {
		/** null: the request pi waits on now. */
		private final String requestId;

		Answer(String text, String requestId) {
			super(text);
			this.requestId = requestId;
		}

		abstract void answer(PiIdeService service, String requestId, Project project);

		@Override
		public void actionPerformed(AnActionEvent e) {
			try {
				answer(ServiceManager.getService(PiIdeService.class), requestId, e.getProject());
			} catch (RuntimeException | LinkageError error) {
				LOG.warn("pi-ide-context: " + error);
			}
		}
	}

	public static final class Accept extends Answer {
		public Accept() {
			this(null);
		}

		Accept(String requestId) {
			super(requestId == null ? "pi: Accept pi's proposed change" : "Accept", requestId);
		}

		void answer(PiIdeService service, String requestId, Project project) {
			service.answerApproval(requestId, "accept", project);
		}
	}

	public static final class Reject extends Answer {
		public Reject() {
			this(null);
		}

		Reject(String requestId) {
			super(requestId == null ? "pi: Reject pi's proposed change" : "Reject", requestId);
		}

		void answer(PiIdeService service, String requestId, Project project) {
			service.answerApproval(requestId, "reject", project);
		}
	}

	public static final class ShowChange extends Answer {
		public ShowChange() {
			this(null);
		}

		ShowChange(String requestId) {
			super(requestId == null ? "pi: Show pi's proposed change" : "Show change", requestId);
		}

		void answer(PiIdeService service, String requestId, Project project) {
			service.showProposal(requestId, project);
		}
	}
}
