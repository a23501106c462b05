import assert from "node:assert/strict";
import { createServer, type Server, type Socket } from "node:net";
import { RedisTransport } from "../../src/replicas/redis-transport.js";

describe("the Redis transport's connect", function () {
  let server: Server;
  const sockets = new Set<Socket>();

  beforeEach(async () => {
    // Accepts TCP and never answers the TLS handshake: only the client's connect timeout ends the wait.
    server = createServer((socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  });

  afterEach(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it("waits the given operationMs for a connection, not the 1000 ms default", async () => {
    const { port } = server.address() as { port: number };
    const transport = new RedisTransport(`rediss://127.0.0.1:${port}`, { operationMs: 10_000 });
    const connecting = transport.connect(() => undefined, () => undefined).then(() => "connected", (error: Error) => error.name);
    try {
      // With the default, the handshake times out after 1000 ms, well before this.
      const first = await Promise.race([connecting, new Promise((resolve) => setTimeout(resolve, 2000, "still waiting"))]);
      assert.equal(first, "still waiting");
      assert.ok(sockets.size > 0, "it did reach the server");
    } finally {
      transport.destroy();
      await transport.close();
    }
  });
});
