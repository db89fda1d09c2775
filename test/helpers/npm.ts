/** npm as the tests run it: in a throwaway HOME, but with the machine's cache and no retries. */
import { homedir } from "node:os";
import { join } from "node:path";

/**
 * npm inside the throwaway HOME would start from an empty cache and go to the registry for every dependency;
 * point it at the machine's cache and prefer what is there (the registry stays reachable for a cold cache:
 * the env keeps the machine's CA, proxy and ~/.npmrc, see machineNetworkEnv). A network failure ends npm at
 * once with its own error (no retries; a stalled request gives up after 30 s), instead of npm retrying until
 * the test's deadline kills it and its reason is lost.
 */
export const npmEnv = (): Record<string, string> => ({
	npm_config_cache: process.env["npm_config_cache"] || join(homedir(), ".npm"),
	npm_config_prefer_offline: "true",
	npm_config_audit: "false",
	npm_config_fund: "false",
	npm_config_update_notifier: "false",
	npm_config_fetch_retries: "0",
	npm_config_fetch_timeout: "30000",
});
