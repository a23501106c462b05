/**
 * The PostgreSQL transport against a server that answers half: it accepts the login, then never answers
 * a query (a proxy whose backend hung, a server stopped after the handshake). Nothing may stay open after close().
 */
import assert from "node:assert/strict";
import { createServer, type Server, type Socket } from "node:net";
import { guardTerminalTaskStates, postgresCancelBus } from "../../src/replicas/index.js";
import { eventually } from "../support/wire-assertions.js";

/** AuthenticationOk, then ReadyForQuery (idle): what a trust login answers, minus the optional messages. */
const LOGIN_OK = Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 0, 0x5a, 0, 0, 0, 5, 0x49]);

describe("the PostgreSQL transport against a server that stops answering after the login", function () {
  this.timeout(20_000); // a hang fails here
  let server: Server;
  const sockets = new Set<Socket>();
  let queries = 0;
  let answersLogin = true;

  beforeEach(async () => {
    queries = 0;
    answersLogin = true;
    server = createServer((socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      let loggedIn = false;
      socket.on("data", () => {
        if (loggedIn) queries++;
        else if (answersLogin) socket.write(LOGIN_OK); // the startup message: log in; what follows is never answered
        loggedIn = true;
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  });

  afterEach(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it("close() with the listening client stuck setting up: its connection is closed too, not left open", async () => {
    const { port } = server.address() as { port: number };
    const bus = await postgresCancelBus(`postgres://postgres@127.0.0.1:${port}/postgres`, { operationMs: 200 });
    await eventually(() => (queries > 0 ? true : undefined), "the listening client's first query, never answered");
    assert.equal(bus.connected, false);
    await bus.close();
    await eventually(() => (sockets.size === 0 ? true : undefined), "every connection to the server closed", 15_000);
  });

  it("guardTerminalTaskStates against a server that never answers the login: rejects (bounded), nothing left open", async () => {
    answersLogin = false;
    const { port } = server.address() as { port: number };
    await assert.rejects(guardTerminalTaskStates(`postgres://postgres@127.0.0.1:${port}/postgres`), /timeout/i);
    await eventually(() => (sockets.size === 0 ? true : undefined), "its connection closed", 15_000);
  });
});
