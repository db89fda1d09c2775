/**
 * scripts/apt-install.sh, which the test setup and CI install Debian packages through: another apt or dpkg
 * holding a lock (an unattended upgrade, a second `npm test`) makes it wait, not fail at once. Real apt-get,
 * in a private sandbox (APT_CONFIG, as scripts/fetch-nvim-0.10.sh does), so the machine's own apt locks are
 * never touched; the lock is held the way apt holds it (an fcntl write lock), by perl (Essential in Debian).
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { pollFor } from "../../helpers/poll.ts";

const root = resolve(import.meta.dirname, "../../..");
const SCRIPT = join(root, "scripts/apt-install.sh");

const sandboxes: string[] = [];
const holders: ChildProcess[] = [];
after(() => {
	for (const holder of holders) holder.kill();
	for (const dir of sandboxes) rmSync(dir, { recursive: true, force: true });
});

/** An apt configuration of its own: package lists and cache in a temp dir, no sources (update reads nothing). */
function aptSandbox(): { dir: string; env: NodeJS.ProcessEnv; listsLock: string } {
	const dir = mkdtempSync(join(tmpdir(), "pi-ide-apt-"));
	sandboxes.push(dir);
	for (const sub of ["lists/partial", "cache/archives/partial", "sources.list.d"])
		mkdirSync(join(dir, sub), { recursive: true });
	writeFileSync(
		join(dir, "apt.conf"),
		[
			`Dir::State::Lists "${dir}/lists";`,
			`Dir::Cache "${dir}/cache";`,
			'Dir::Etc::SourceList "/dev/null";',
			`Dir::Etc::SourceParts "${dir}/sources.list.d";`,
		].join("\n"),
	);
	return { dir, env: { ...process.env, APT_CONFIG: join(dir, "apt.conf") }, listsLock: join(dir, "lists/lock") };
}

/** Hold `path`'s fcntl write lock (struct flock of 64-bit Linux) for `seconds`; resolves once it is held. */
async function holdLock(path: string, seconds: number): Promise<void> {
	const perl = `use Fcntl qw(F_SETLK F_WRLCK SEEK_SET O_RDWR O_CREAT);
sysopen(my $fh, $ARGV[0], O_RDWR|O_CREAT, 0640) or die "open: $!";
my $lock = pack("s!s!x![q]qqix![q]", F_WRLCK, SEEK_SET, 0, 0, 0);
fcntl($fh, F_SETLK, $lock) or die "lock: $!";
open(my $held, ">", "$ARGV[0].held") or die; close $held;
sleep $ARGV[1];`;
	const holder = spawn("perl", ["-e", perl, path, String(seconds)], { stdio: ["ignore", "ignore", "inherit"] });
	holders.push(holder);
	await pollFor(() => existsSync(`${path}.held`), "the lock to be held", 10_000);
}

const run = (env: NodeJS.ProcessEnv, wait: number) =>
	spawnSync("bash", [SCRIPT], { env: { ...env, APT_LOCK_WAIT: String(wait) }, encoding: "utf8", timeout: 120_000 });

describe("scripts/apt-install.sh waits for apt's locks", () => {
	it("a held package-lists lock: it waits, says so once, and succeeds when the lock is released", async () => {
		const sandbox = aptSandbox();
		await holdLock(sandbox.listsLock, 3);
		const result = run(sandbox.env, 60);
		assert.equal(result.status, 0, result.stderr);
		const waits = result.stderr.match(/another apt holds the package lists' lock; waiting up to 60 s/g) ?? [];
		assert.equal(waits.length, 1, result.stderr);
	});

	it("control: with no time to wait it fails at once with apt's own error (as plain apt-get update did)", async () => {
		const sandbox = aptSandbox();
		await holdLock(sandbox.listsLock, 30);
		const result = run(sandbox.env, 0);
		assert.equal(result.status, 1);
		assert.match(result.stderr, /Could not get lock .*lists\/lock/);
	});

	it("a failure that is no lock fails at once", () => {
		const sandbox = aptSandbox();
		writeFileSync(join(sandbox.dir, "apt.conf"), "this is not apt configuration");
		const result = run(sandbox.env, 60);
		assert.equal(result.status, 1);
		assert.doesNotMatch(result.stderr, /waiting/);
	});

	it("installs wait for dpkg's lock too: every apt-get call of the script carries DPkg::Lock::Timeout", () => {
		const calls = readFileSync(SCRIPT, "utf8")
			.split("\n")
			.filter((line) => /^\s*[^#]*\bapt-get\s/.test(line));
		assert.ok(
			calls.some((line) => / install /.test(line)) && calls.some((line) => / update /.test(line)),
			calls.join("\n"),
		);
		for (const line of calls) assert.match(line, /apt-get -o DPkg::Lock::Timeout="\$wait_s" /);
	});

	it("the test setup, CI and the VS Code setup install through it (no bare apt-get on the machine's lists)", () => {
		for (const file of ["scripts/setup-test-env.sh", "scripts/setup-vscode-test.sh", ".ci/run"]) {
			const text = readFileSync(join(root, file), "utf8");
			const bare = text.split("\n").filter((line) => /^\s*[^#"]*\bapt-get\s+(-\S+\s+)*(update|install)\b/.test(line));
			assert.deepEqual(bare, [], `${file} runs apt-get itself`);
			assert.match(text, /scripts\/apt-install\.sh/, file);
		}
	});
});
