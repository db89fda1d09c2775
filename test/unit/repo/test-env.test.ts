/**
 * test/helpers/pi-env.ts: the clean environment a test gives pi keeps the machine's network settings (CA
 * files, proxies in both spellings, npm's network settings and user config) and nothing else of the caller's.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createPiEnv, machineNetworkEnv } from "../../helpers/pi-env.ts";

describe("machineNetworkEnv", () => {
	const cases: {
		name: string;
		source: Record<string, string | undefined>;
		npmrc?: boolean;
		kept: Record<string, string>;
	}[] = [
		{
			name: "CA files and both spellings of the proxies are kept",
			source: {
				NODE_EXTRA_CA_CERTS: "/etc/ssl/corp.pem",
				SSL_CERT_FILE: "/etc/ssl/certs/ca-certificates.crt",
				HTTPS_PROXY: "http://proxy:3128",
				https_proxy: "http://proxy:3128",
				HTTP_PROXY: "http://proxy:3128",
				http_proxy: "http://proxy:3128",
				NO_PROXY: "localhost,127.0.0.1",
				no_proxy: "localhost",
			},
			kept: {
				NODE_EXTRA_CA_CERTS: "/etc/ssl/corp.pem",
				SSL_CERT_FILE: "/etc/ssl/certs/ca-certificates.crt",
				HTTPS_PROXY: "http://proxy:3128",
				https_proxy: "http://proxy:3128",
				HTTP_PROXY: "http://proxy:3128",
				http_proxy: "http://proxy:3128",
				NO_PROXY: "localhost,127.0.0.1",
				no_proxy: "localhost",
			},
		},
		{
			name: "npm's network settings are kept, its lifecycle variables and everything else are not",
			source: {
				npm_config_registry: "https://npm.corp/",
				NPM_CONFIG_CAFILE: "/etc/ssl/corp.pem",
				npm_config_https_proxy: "http://proxy:3128",
				npm_config_strict_ssl: "true",
				"npm_config_@corp:registry": "https://npm.corp/",
				"npm_config_//npm.corp/:_authToken": "secret",
				npm_config_userconfig: "/home/u/.npmrc",
				npm_config_user_agent: "npm/11 node/v20",
				npm_config_prefix: "/usr/local",
				npm_config_node_gyp: "/usr/lib/node-gyp",
				HOME: "/home/u",
				NODE_OPTIONS: "--inspect",
				NODE_TEST_CONTEXT: "child-v8",
				EMPTY: undefined,
			},
			kept: {
				npm_config_registry: "https://npm.corp/",
				NPM_CONFIG_CAFILE: "/etc/ssl/corp.pem",
				npm_config_https_proxy: "http://proxy:3128",
				npm_config_strict_ssl: "true",
				"npm_config_@corp:registry": "https://npm.corp/",
				"npm_config_//npm.corp/:_authToken": "secret",
				npm_config_userconfig: "/home/u/.npmrc",
			},
		},
		{
			name: "the real ~/.npmrc is named when no user config is given (the test's HOME hides it)",
			source: { HOME: "/home/u" },
			npmrc: true,
			kept: { NPM_CONFIG_USERCONFIG: "/home/u/.npmrc" },
		},
		{ name: "no ~/.npmrc, nothing to name", source: {}, npmrc: false, kept: {} },
		{
			name: "a given user config wins over ~/.npmrc",
			source: { NPM_CONFIG_USERCONFIG: "/etc/npmrc-ci" },
			npmrc: true,
			kept: { NPM_CONFIG_USERCONFIG: "/etc/npmrc-ci" },
		},
	];
	for (const { name, source, npmrc, kept } of cases) {
		it(name, () => {
			const exists = (path: string) => npmrc === true && path === "/home/u/.npmrc";
			assert.deepEqual(machineNetworkEnv(source, "/home/u", exists), kept);
		});
	}
});

it("the env pi runs in carries this machine's network settings", async () => {
	const env = await createPiEnv();
	try {
		for (const [name, value] of Object.entries(machineNetworkEnv())) assert.equal(env.env[name], value, name);
		assert.equal(env.env["HOME"], env.home, "the throwaway HOME still wins");
	} finally {
		await env.cleanup();
	}
});
