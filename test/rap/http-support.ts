import { existsSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { readProcess } from "../../src/os/index.js";

export interface Listening {
  server: Server;
  /** http://127.0.0.1:PORT (no trailing slash). */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** A real node:http server on loopback, port 0. */
export async function listen(handler: RequestListener): Promise<Listening> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A request as a tool server saw it. */
export interface Arrival {
  at: number;
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

/** Reads a request's whole body. */
export function bodyOf(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => resolve(body));
    request.on("error", reject);
  });
}

/** A tool server that records every request, then answers as `respond` decides. */
export async function recordingServer(
  respond: (arrival: Arrival, response: ServerResponse) => void,
): Promise<Listening & { arrivals: Arrival[] }> {
  const arrivals: Arrival[] = [];
  const listening = await listen(async (request, response) => {
    const arrival: Arrival = { at: performance.now(), method: request.method ?? "", url: request.url ?? "", headers: request.headers, body: "" };
    arrivals.push(arrival);
    arrival.body = await bodyOf(request);
    respond(arrival, response);
  });
  return { ...listening, arrivals };
}

/**
 * Whether a pid still runs: `process.kill(pid, 0)`, and not a zombie. The container this
 * runs in has a PID 1 that does not reap orphans, so a killed orphan stays a zombie (it
 * runs nothing); on a normal init, kill(pid, 0) alone already fails.
 */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  return readProcess(pid) !== undefined;
}

/** The pids a fixture script wrote, one a line. */
export function pidsIn(file: string): number[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map(Number);
}

/** Polls until `check` returns a value (the mocha timeout bounds it). */
export async function until<T>(check: () => T | undefined | false, what: string, limitMs = 15_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() - started > limitMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
