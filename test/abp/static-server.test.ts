/** The demo's static server serves the pages and their modules, and nothing else. */
import assert from "node:assert/strict";
import { type StaticServer, startStaticServer } from "../../examples/abp/static-server.js";

describe("ABP demo static server (loopback)", () => {
  let server: StaticServer;
  before(async () => {
    server = await startStaticServer();
  });
  after(async () => {
    await server.close();
  });

  const get = (path: string, method = "GET") => fetch(`${server.origin}${path}`, { method });

  it("serves the demo page, its compiled modules and zod, with their content types", async () => {
    for (const [path, type] of [
      ["/examples/abp/index.html", "text/html; charset=utf-8"],
      ["/examples/abp/demo-app.js", "text/javascript; charset=utf-8"],
      ["/src/abp/app/index.js", "text/javascript; charset=utf-8"],
      ["/node_modules/zod/index.js", "text/javascript; charset=utf-8"],
    ]) {
      const response = await get(path ?? "");
      assert.equal(response.status, 200, path);
      assert.equal(response.headers.get("content-type"), type, path);
      assert.ok((await response.text()).length > 0);
    }
  });

  it("refuses everything outside its trees, other file types, traversal and other methods", async () => {
    for (const path of ["/package.json", "/src/acp/index.js", "/examples/abp/../../package.json", "/examples/abp/%2e%2e/%2e%2e/package.json", "/examples/abp/demo-app.ts", "/node_modules/ws/index.js"]) {
      assert.equal((await get(path)).status, 404, path);
    }
    assert.equal((await get("/examples/abp/index.html", "POST")).status, 405);
    assert.equal((await get("/examples/abp/%E0%A4%A.html")).status, 400);
  });
});
