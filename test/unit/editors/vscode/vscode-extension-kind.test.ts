/**
 * The VS Code extension runs where the workspace is (issue 23): with Remote-SSH, WSL or Dev Containers that is the
 * remote machine, WSL or the container, where pi runs in VS Code's terminal and reads the state directory. VS Code
 * would otherwise be free to run a UI-less extension on either side; "workspace" pins it.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { REPO } from "../../../helpers/pi-env.ts";

test('editors/vscode/package.json declares "extensionKind": ["workspace"]', () => {
	const manifest = JSON.parse(readFileSync(join(REPO, "editors/vscode/package.json"), "utf8")) as {
		extensionKind?: unknown;
	};
	assert.deepEqual(manifest.extensionKind, ["workspace"]);
});
