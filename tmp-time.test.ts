import { test } from "node:test";
import { adapters } from "./test/conformance/adapters/vscode-code-server.ts";
import { startEditor } from "./test/conformance/kit.ts";
test("time windows", async () => {
	const a = adapters[0]!;
	for (let i = 0; i < 4; i++) {
		const t = Date.now();
		const { editor, dispose } = await startEditor(a, { file: { name: "a.txt", text: "x\n" } });
		await editor.until(() => true, "state");
		console.log(`window ${i}: ${Date.now() - t} ms`);
		await dispose();
	}
	await a.close?.();
});
