/** Ports on 127.0.0.1 for the servers tests start (a registry, code-server) or leave closed on purpose. */
import { createServer } from "node:net";

/** A port nothing listens on right now (bound, then released): free for a server, or closed for a refusal. */
export async function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const server = createServer();
		server.once("error", reject);
		server.listen(0, "127.0.0.1", () => {
			const address = server.address();
			server.close(() =>
				typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
			);
		});
	});
}
