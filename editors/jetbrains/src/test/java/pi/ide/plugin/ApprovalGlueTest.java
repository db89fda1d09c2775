package pi.ide.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.intellij.openapi.actionSystem.AnAction;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Scanner;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The approval glue as far as it runs without an IDE, inside intellij-core's headless application: the actions
 * plugin.xml registers load as the platform loads them (class by name, public no-argument constructor) and are
 * AnActions with the registered words; where the notification and diff API are missing (as in Debian's 183
 * jars) the user's words go to the log and nothing throws. The notification and the diff window themselves
 * need an IDE: editors/jetbrains/README.md says they were not run.
 */
class ApprovalGlueTest {
	@BeforeAll
	static void start() {
		PlatformGlueTest.startTheCoreEnvironment();
	}

	/** plugin.xml's actions: id to {class, text}. */
	static Map<String, String[]> registeredActions() throws Exception {
		try (InputStream in = ApprovalGlueTest.class.getResourceAsStream("/META-INF/plugin.xml");
				Scanner all = new Scanner(in, "UTF-8").useDelimiter("\\A")) {
			String xml = all.next();
			Map<String, String[]> out = new LinkedHashMap<>();
			Matcher m = Pattern.compile("<action id=\"([^\"]+)\" class=\"([^\"]+)\"\\s+text=\"([^\"]+)\"").matcher(xml);
			while (m.find()) out.put(m.group(1), new String[] {m.group(2), m.group(3)});
			return out;
		}
	}

	@Test
	void theRegisteredActionsLoadAsThePlatformLoadsThem() throws Exception {
		Map<String, String[]> actions = registeredActions();
		List<String> texts = new ArrayList<>();
		for (String[] a : actions.values()) {
			Object action = Class.forName(a[0]).getConstructor().newInstance();
			assertTrue(action instanceof AnAction, a[0]);
			assertTrue(action instanceof com.intellij.openapi.project.DumbAware, a[0] + " works while indexing");
			assertEquals(a[1], ((AnAction) action).getTemplatePresentation().getText(), "the class's words are plugin.xml's");
			texts.add(a[1]);
		}
		assertEquals(9, actions.size(), actions.keySet().toString());
		// v0.5 show (ShowAskActions): pi's places and the follow setting.
		assertTrue(texts.contains("pi: pi's places"), texts.toString());
		assertTrue(texts.contains("pi: Open the places pi shows (on/off)"), texts.toString());
		// v0.5 send to pi (SendActions): loaded and worded the same way.
		for (String send : new String[] {"pi: Send to pi", "pi: Send to pi now", "pi: Send this file to pi",
				"pi: Send this file to pi now"}) {
			assertTrue(texts.contains(send), texts.toString());
		}
		assertTrue(texts.contains("pi: Accept pi's proposed change"), texts.toString());
		assertTrue(texts.contains("pi: Reject pi's proposed change"), texts.toString());
		assertTrue(texts.contains("pi: Show pi's proposed change"), texts.toString());
	}

	@Test
	void aNotificationsActionsAreWordedForTheBalloon() {
		assertEquals("Accept", new ApprovalActions.Accept("r1").getTemplatePresentation().getText());
		assertEquals("Reject", new ApprovalActions.Reject("r1").getTemplatePresentation().getText());
		assertEquals("Show change", new ApprovalActions.ShowChange("r1").getTemplatePresentation().getText());
	}

	@Test
	void withoutTheNotificationAndDiffApiTheWordsGoToTheLogAndNothingThrows() {
		assertThrows(ClassNotFoundException.class, () -> Class.forName(ApprovalUi.NOTIFICATION), "Debian's 183 jars lack it");
		assertNull(ApprovalUi.notify(null, "pi waits for your approval", "pi wants to edit <a&b>.txt: 1 hunk",
				new ApprovalActions.Accept("r1")));
		ApprovalUi.expire(null);
		assertFalse(ApprovalUi.showDiff(null, "t", "a.txt", "a\n", "b\n"));
	}
}
