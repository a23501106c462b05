/**
 * The small static server for the ABP demo: serves the pages as they are and their compiled
 * modules (no bundler), on loopback only. HTML comes from the source tree, JavaScript from
 * build/ (where tsc puts it), zod from node_modules for pages that run the agent side.
 *
 *   node build/examples/abp/static-server.js     # prints the demo's address
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join, normalize, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository (this file runs from build/examples/abp/). */
const REPO = resolve(fileURLToPath(new URL("../../../", import.meta.url)));
const BUILD = join(REPO, "build");

/** Only these trees are served; everything else is 404. */
const SERVED = ["/examples/abp/", "/test/abp/pages/", "/src/abp/", "/src/core/", "/src/wire/", "/node_modules/zod/"];

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".map": "application/json; charset=utf-8",
};

export interface StaticServer {
  /** e.g. http://127.0.0.1:40123 */
  origin: string;
  server: Server;
  close(): Promise<void>;
}

export async function startStaticServer(port = 0): Promise<StaticServer> {
  const server = createServer((request, response) => {
    void serve(request.method ?? "GET", request.url ?? "/").then(({ status, file, type }) => {
      if (file === undefined) {
        response.writeHead(status, { "content-type": "text/plain; charset=utf-8" }).end(`${status}\n`);
        return;
      }
      response.writeHead(200, { "content-type": type, "cache-control": "no-store", "x-content-type-options": "nosniff" });
      if (request.method === "HEAD") response.end();
      else createReadStream(file).pipe(response);
    });
  });
  await new Promise<void>((done) => server.listen(port, "127.0.0.1", done));
  const { port: bound } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${bound}`,
    server,
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

async function serve(method: string, url: string): Promise<{ status: number; file?: string; type: string }> {
  const type = "text/plain";
  if (method !== "GET" && method !== "HEAD") return { status: 405, type };
  let path: string;
  try {
    path = decodeURIComponent(new URL(url, "http://x").pathname);
  } catch {
    return { status: 400, type };
  }
  const clean = normalize(path);
  const contentType = TYPES[extname(clean)];
  if (contentType === undefined || clean.includes("\0") || !SERVED.some((prefix) => clean.startsWith(prefix))) {
    return { status: 404, type };
  }
  // Compiled modules live in build/; pages and zod in the tree itself.
  const roots = extname(clean) === ".html" || clean.startsWith("/node_modules/") ? [REPO] : [BUILD];
  for (const root of roots) {
    const file = join(root, clean);
    if (!file.startsWith(root + sep)) continue;
    const found = await stat(file).catch(() => undefined);
    if (found?.isFile()) return { status: 200, file, type: contentType };
  }
  return { status: 404, type };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { origin } = await startStaticServer(Number(process.env.PORT ?? 0));
  process.stdout.write(`ABP demo app: ${origin}/examples/abp/index.html\n`);
}
