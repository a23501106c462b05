/**
 * An ABP app in a dedicated worker (test page): a `count` capability that counts in chunks until
 * cancelled. Its messages come from its owner, whose origin a worker sees as "".
 */
import { AbpApp, type AppStats, servePostMessage } from "../../../src/abp/app/index.js";

let counted = 0;
const app: AbpApp = new AbpApp({
  app: { id: "worker-app", name: "ABP app in a worker", version: "1.0.0" },
  capabilities: {
    async count(_params, { signal }) {
      while (!signal.aborted) {
        counted++;
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
      throw signal.reason;
    },
    counted: (): { counted: number; stats: AppStats } => ({ counted, stats: app.stats() }),
  },
});
servePostMessage(app, { allowedOrigins: [""] });
