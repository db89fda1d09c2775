package pi.ide.core;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Issue 26, the inbox's side of the merge (I/O): for a change pi made to a file whose document has unsaved changes,
 * the path judged by the reload rule, the file read once through a verified open, {@link Merge#chain} asked, and the
 * host told to make the edits as one undo step of its own. Anything that cannot be merged leaves the document as it
 * is and the report says {@code modified}, as before.
 */
final class Merging {
	private Merging() {}

	/** The merge's outcome (its edits made in the document), or null: not merged, report {@code modified}. */
	static Merge.Outcome attempt(PiMessage message, PiMessage.Change change, Long handledBefore, Reload.Facts facts,
			Inbox.Host host) {
		try {
			return merge(message, change, handledBefore, facts, host);
		} catch (RuntimeException e) {
			// Never a crash on pi's message: whatever failed leaves the document as it was (a host refuses a stale text).
			return null;
		}
	}

	private static Merge.Outcome merge(PiMessage message, PiMessage.Change change, Long handledBefore, Reload.Facts facts,
			Inbox.Host host) {
		String text = host.documentText(change.file);
		if (text == null || !passesReloadRule(facts)) return null;
		long newest = -1;
		for (PiMessage.Change c : message.changed) newest = Math.max(newest, c.seq);
		long since = handledBefore != null ? handledBefore : newest - 1;
		List<Merge.Link> chain = Merge.chainOf(message.changed, change.file, since);
		if (chain.isEmpty() || chain.get(chain.size() - 1).merge == null) return null;
		byte[] disk = read(facts.now == Reload.PathKind.REGULAR ? change.file : facts.realPathNow);
		Merge.Outcome outcome = Merge.chain(chain, since, disk, text);
		if (outcome.why != null) return null;
		List<Merge.TextEdit> edits = Merge.textEdits(text, outcome.plan.edits);
		if (!edits.isEmpty() && !host.applyMerge(change.file, text, edits)) return null;
		return outcome;
	}

	/**
	 * Issue 26 item 6: the file on disk as text, for an approval request's proposal against the unsaved document:
	 * read as the merge reads it (the reload rule on the path, one verified open), strict UTF-8; null when the rule
	 * would not read it, it cannot be read, or it is not UTF-8.
	 */
	static String diskText(String file, Inbox.Host host) {
		try {
			Reload.Facts facts = host.facts(file);
			if (facts == null || !passesReloadRule(facts)) return null;
			byte[] disk = read(facts.now == Reload.PathKind.REGULAR ? file : facts.realPathNow);
			return disk == null ? null : Merge.utf8(disk);
		} catch (RuntimeException e) {
			return null;
		}
	}

	/** The path is what it was when the document was read (the reload rule, {@link Reload#decide}, unmodified). */
	private static boolean passesReloadRule(Reload.Facts f) {
		String asIfSaved = Reload.decide(new Reload.Facts(f.open, false, f.recorded, f.recordedRealPath, f.now,
				f.realPathNow, false));
		return "reloaded".equals(asIfSaved);
	}

	/**
	 * The file's bytes, as a reload reads it: lstat (a regular file, at most {@link Merge#MAX_FILE_BYTES}), one open
	 * that never follows a link (a path swapped for one fails: ELOOP), then lstat again: the same file (key, size,
	 * modification time) as judged, else null. Java cannot fstat an open channel, hence the second lstat.
	 */
	static byte[] read(String file) {
		if (file == null) return null;
		Path path = Paths.get(file);
		try {
			BasicFileAttributes before = Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
			if (!before.isRegularFile() || before.size() > Merge.MAX_FILE_BYTES) return null;
			Set<OpenOption> options = new HashSet<OpenOption>(Arrays.asList(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS));
			ByteBuffer buffer = ByteBuffer.allocate(Merge.MAX_FILE_BYTES + 1);
			try (SeekableByteChannel in = Files.newByteChannel(path, options)) {
				while (buffer.hasRemaining() && in.read(buffer) > 0) {
					// one read may return less than the file holds
				}
			}
			BasicFileAttributes after = Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
			boolean same = after.isRegularFile() && after.fileKey() != null && after.fileKey().equals(before.fileKey())
					&& after.size() == before.size() && after.lastModifiedTime().equals(before.lastModifiedTime())
					&& buffer.position() == before.size();
			if (!same) return null;
			byte[] data = new byte[buffer.position()];
			buffer.flip();
			buffer.get(data);
			return data;
		} catch (IOException | RuntimeException e) {
			return null;
		}
	}
}
