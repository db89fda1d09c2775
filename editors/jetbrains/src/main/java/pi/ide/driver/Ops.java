package pi.ide.driver;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import pi.ide.core.Approval;
import pi.ide.core.ApprovalAgainst;
import pi.ide.core.Json;
import pi.ide.core.Merge;
import pi.ide.core.PiIdentity;
import pi.ide.core.PiMessage;
import pi.ide.core.PiReader;
import pi.ide.core.StateDir;
import pi.ide.core.Text;

/**
 * The client's state-dir and message-name rules one operation at a time, for the repository's shared case
 * tables (test/fixtures/state-dir-cases.ts), and its selection rules for the differential test against the
 * TypeScript clients' (test/jetbrains/selection-differential.test.ts), and its application of pi's proposed
 * hunks against pi's own (test/jetbrains/approval-differential.test.ts), and its merge of pi's change into an
 * unsaved buffer against the rule's oracle (test/jetbrains/merge-random.test.ts), and an approval's proposal against
 * an unsaved document (test/jetbrains/approval-against-random.test.ts): JSON lines in ({"op":"write","dir":...,"pid":4242,"content":...,
 * "uid":1000}), one JSON line out ({"problem":null}). Run: java -cp core.jar pi.ide.driver.Ops
 */
public final class Ops {
	private Ops() {}

	private static Text.HostPosition host(Object raw) {
		Map<?, ?> m = (Map<?, ?>) raw;
		return new Text.HostPosition(((Number) m.get("line")).intValue(), ((Number) m.get("character")).intValue());
	}

	/** The merged lines and the conflicts of {@link Merge#plan}, its edits made as the driver makes them. */
	@SuppressWarnings("unchecked")
	private static Map<String, Object> merge(List<String> base, List<String> ours, List<Object> theirs) {
		List<Merge.Hunk> hunks = new ArrayList<>();
		for (Object raw : theirs) {
			Map<String, Object> h = (Map<String, Object>) raw;
			hunks.add(new Merge.Hunk(((Number) h.get("old_start")).intValue(), (List<String>) h.get("old_text"),
					((Number) h.get("new_start")).intValue(), (List<String>) h.get("new_text")));
		}
		Merge.Plan plan = Merge.plan(base, ours, hunks);
		String text = ours.isEmpty() ? "" : String.join("\n", ours) + "\n";
		Map<String, Object> out = new LinkedHashMap<>();
		out.put("merged", Merge.splitLines(Merge.apply(text, Merge.textEdits(text, plan.edits))));
		List<Object> conflicts = new ArrayList<>();
		for (Merge.Conflict k : plan.conflicts) {
			Map<String, Object> m = new LinkedHashMap<>();
			m.put("line", k.line);
			m.put("lines", k.lines);
			m.put("text", k.text);
			conflicts.add(m);
		}
		out.put("conflicts", conflicts);
		return out;
	}

	@SuppressWarnings("unchecked")
	public static void main(String[] args) throws Exception {
		PrintStream out = new PrintStream(System.out, true, "UTF-8");
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
		String line;
		while ((line = in.readLine()) != null) {
			Map<String, Object> c = (Map<String, Object>) Json.parse(line);
			Map<String, Object> reply = new LinkedHashMap<>();
			String op = (String) c.get("op");
			if ("pi-name".equals(op)) {
				long pid = PiMessage.pidOfName((String) c.get("name"));
				reply.put("pid", pid < 0 ? null : (Object) pid);
			} else if ("pi-file-name".equals(op)) {
				// pi's file names with its identity (v0.5), for the shared table test/fixtures/state-dir-cases.ts
				PiIdentity.Name n = PiIdentity.parse((String) c.get("name"));
				if (n == null) {
					reply.put("name", null);
				} else {
					Map<String, Object> parsed = new LinkedHashMap<>();
					parsed.put("kind", n.kind);
					parsed.put("pid", n.pid);
					parsed.put("ns", n.ns);
					reply.put("name", parsed);
				}
			} else if ("describe".equals(op)) {
				// the selection and cursor rules, for the differential test against editors/shared/state.ts
				Text.Lines lines = Text.linesOf((String) c.get("text"));
				Text.Range r = Text.describeSelection(lines, host(c.get("anchor")), host(c.get("head")));
				Text.Position cursor = Text.toWire(lines, host(c.get("head")));
				reply.put("cursor", cursor.signature());
				if (r == null) {
					reply.put("selection", null);
				} else {
					Map<String, Object> sel = new LinkedHashMap<>();
					sel.put("start", r.start.signature());
					sel.put("end", r.end.signature());
					sel.put("text", r.text);
					sel.put("truncated", r.truncated);
					reply.put("selection", sel);
				}
				reply.put("lines_total", Text.countLines(lines));
			} else if ("proposal".equals(op)) {
				// an approval request's text (as pi encodes it) applied to a text, as "Show change" does
				Approval.Parsed parsed = Approval.parse((String) c.get("message"), ((Number) c.get("pid")).longValue());
				reply.put("problem", parsed.problem);
				reply.put("proposal", parsed.request == null ? null : Approval.proposal((String) c.get("text"), parsed.request));
			} else if ("against".equals(op)) {
				// issue 26 item 6: an approval request's proposal against an unsaved document, for the seeded oracle
				// (test/jetbrains/approval-against-random.test.ts): each hunk's place, the document with the hunks placed,
				// and the notice's words naming the touched lines (short form, "" when none)
				Approval.Parsed parsed = Approval.parse((String) c.get("message"), ((Number) c.get("pid")).longValue());
				ApprovalAgainst.View view = parsed.request == null ? null
						: ApprovalAgainst.against(parsed.request, (String) c.get("disk"), (String) c.get("document"));
				reply.put("problem", parsed.problem);
				if (view == null) {
					reply.put("view", null);
				} else {
					List<Object> places = new ArrayList<>();
					for (Merge.Place p : view.places) {
						Map<String, Object> m = new LinkedHashMap<>();
						m.put("row", p.from);
						m.put("rows", p.to - p.from);
						m.put("touches", p.touches);
						places.add(m);
					}
					Map<String, Object> v = new LinkedHashMap<>();
					v.put("places", places);
					v.put("proposed", Merge.splitLines(view.text));
					String phrase = ApprovalAgainst.touchPhrase(view.places, true);
					v.put("phrase", phrase == null ? "" : phrase);
					reply.put("view", v);
				}
			} else if ("merge".equals(op)) {
				// issue 26: pi's hunks merged into a buffer's lines, for the seeded oracle (test/jetbrains/merge-random.test.ts)
				reply.putAll(merge((List<String>) c.get("base"), (List<String>) c.get("ours"), (List<Object>) c.get("theirs")));
			} else if ("merge-chain".equals(op)) {
				// issue 26: pi's changes (their `merge` as pi's message has them) merged into a document's text, whole
				List<Merge.Link> chain = new ArrayList<>();
				for (Object raw : (List<Object>) c.get("chain")) {
					Map<String, Object> link = (Map<String, Object>) raw;
					chain.add(new Merge.Link(((Number) link.get("seq")).longValue(), link.get("merge")));
				}
				String document = (String) c.get("document");
				Merge.Outcome o = Merge.chain(chain, ((Number) c.get("handled")).longValue(),
						((String) c.get("disk")).getBytes(StandardCharsets.UTF_8), document);
				reply.put("why", o.why);
				reply.put("status", o.status);
				reply.put("merge", o.plan == null ? null : o.report());
				reply.put("document", o.plan == null ? null : Merge.apply(document, Merge.textEdits(document, o.plan.edits)));
			} else if ("pi-parse".equals(op)) {
				// the reader rules of pi's files (test/fixtures/reader-limits.ts): a message or a request's text
				String text = (String) c.get("text");
				if ("message".equals(c.get("kind"))) {
					reply.put("problem", PiMessage.parse(text).problem);
					reply.put("kept", 0);
				} else {
					Approval.Parsed parsed = Approval.parse(text, ((Number) c.get("pid")).longValue());
					reply.put("problem", parsed.problem);
					reply.put("kept", parsed.request == null ? 0 : parsed.request.hunks.size());
				}
			} else if ("pi-read".equals(op)) {
				PiReader.Verdict v = PiReader.read(Paths.get((String) c.get("dir")), (String) c.get("name"),
						((Number) c.get("uid")).longValue(), PiReader.systemProbe(((Number) c.get("uid")).longValue()));
				reply.put("kind", v.kind);
				reply.put("problem", v.problem);
			} else {
				Path dir = Paths.get((String) c.get("dir"));
				long uid = ((Number) c.get("uid")).longValue();
				String name = StateDir.stateFileName(((Number) c.get("pid")).longValue());
				StateDir.Result r;
				switch (op) {
					case "check": r = StateDir.check(dir, uid); break;
					case "create": r = StateDir.create(dir, uid); break;
					case "write": r = StateDir.write(dir, name, ((String) c.get("content")).getBytes(StandardCharsets.UTF_8), uid); break;
					case "remove": r = StateDir.remove(dir, name, uid); break;
					default: throw new IllegalArgumentException("unknown op " + op);
				}
				reply.put("problem", r.problem);
				reply.put("message", r.message);
			}
			out.println(Json.write(reply));
		}
	}
}
