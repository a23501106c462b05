/**
 * The cancel endpoint mounted the way docs/rap.md shows, in each server framework: the
 * tests drive each over real HTTP to prove the docs true.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { getConnInfo } from "@hono/node-server/conninfo";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { type CancelEndpointOptions, createCancelHandler, createNodeCancelHandler } from "../../src/rap/index.js";
import type { Listening } from "./http-support.js";

export type Mount = (options: CancelEndpointOptions) => Promise<Listening>;

function listening(server: import("node:http").Server): Listening {
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const mountNodeHttp: Mount = async (options) => {
  const cancel = createNodeCancelHandler(options);
  const server = createServer((req, res) => {
    if (req.url === "/cancel_tool_call") return cancel(req, res);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return listening(server);
};

export const mountExpress: Mount = async (options) => {
  const app = express();
  // Before any body parser: the handler reads (and limits) the body itself.
  app.all("/cancel_tool_call", createNodeCancelHandler(options));
  app.use(express.json());
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return listening(server);
};

export const mountFastify: Mount = async (options) => {
  const fastify = Fastify();
  const cancel = createNodeCancelHandler(options);
  await fastify.register(async (scope) => {
    // In this scope no parser touches the body, so the handler sees the raw stream.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", (_request, _payload, done) => done(null));
    scope.all("/cancel_tool_call", (request, reply) => {
      reply.hijack();
      cancel(request.raw, reply.raw);
    });
  });
  await fastify.listen({ port: 0, host: "127.0.0.1" });
  return listening(fastify.server);
};

export const mountHono: Mount = async (options) => {
  const cancel = createCancelHandler(options);
  const app = new Hono();
  app.all("/cancel_tool_call", (c) => cancel(c.req.raw, { remoteAddress: getConnInfo(c).remote.address }));
  const server = await new Promise<import("node:http").Server>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(s as import("node:http").Server));
  });
  return listening(server);
};

export const MOUNTS: readonly [string, Mount][] = [
  ["node:http (node adapter)", mountNodeHttp],
  ["Express 5 (node adapter)", mountExpress],
  ["Fastify 5 (node adapter, hijacked reply)", mountFastify],
  ["Hono on @hono/node-server (Web handler)", mountHono],
];
