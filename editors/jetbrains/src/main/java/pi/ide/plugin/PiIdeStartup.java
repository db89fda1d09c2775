package pi.ide.plugin;

import com.intellij.openapi.components.ServiceManager;
import com.intellij.openapi.project.Project;
import com.intellij.openapi.startup.StartupActivity;

/** A project window opened: hand it to the application service, which tracks it until the project is disposed. */
public final class PiIdeStartup implements StartupActivity {
	@Override
	public void runActivity(Project project) {
		try {
			ServiceManager.getService(PiIdeService.class).projectOpened(project);
		} catch (RuntimeException e) {
			com.intellij.openapi.diagnostic.Logger.getInstance(PiIdeStartup.class).warn("pi-ide-context: " + e);
		}
	}
}
