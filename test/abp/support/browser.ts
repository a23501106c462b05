/**
 * Real headless Chromium (Debian's, through playwright-core) and the demo app served by the
 * example's static server on loopback. Chromium failing to start is an error, never a skip.
 */
import { type Browser, chromium, type Frame, type Page } from "playwright-core";
import { type StaticServer, startStaticServer } from "../../../examples/abp/static-server.js";
import type { AppStats } from "../../../src/abp/app/index.js";

export const CHROMIUM = "/usr/bin/chromium";

export async function launchChromium(): Promise<Browser> {
  try {
    return await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    });
  } catch (error) {
    throw new Error(
      `could not start Chromium at ${CHROMIUM} (the ABP tests need Debian's chromium package: apt-get install chromium): ${
        error instanceof Error ? error.message.split("\n")[0] : String(error)
      }`,
      { cause: error },
    );
  }
}

/** Three loopback origins: an agent page, the app, and a stranger (for wrong-origin tests). */
export interface Origins {
  agent: StaticServer;
  app: StaticServer;
  stranger: StaticServer;
  close(): Promise<void>;
}

export async function startOrigins(): Promise<Origins> {
  const [agent, app, stranger] = await Promise.all([startStaticServer(), startStaticServer(), startStaticServer()]);
  return {
    agent,
    app,
    stranger,
    close: async () => {
      await Promise.all([agent.close(), app.close(), stranger.close()]);
    },
  };
}

/** Resolves once the demo app in `frame` has set itself up. */
export async function demoReady(frame: Frame | Page): Promise<void> {
  await frame.waitForFunction(() => (globalThis as { demo?: { ready?: boolean } }).demo?.ready === true);
}

export interface DemoCounters {
  rows: number;
  renders: number;
  renderAborts: number;
  abortListeners: number;
}

/** The page's leak counters, as the app module reports them. */
export type DemoStats = AppStats;

interface DemoWindow {
  demo: {
    counters: DemoCounters;
    rejections: { code: string; message: string }[];
    stats(): DemoStats;
    refused(): number;
    release(callId: string): void;
    sendRaw(data: unknown): void;
  };
}

export const demo = {
  counters: (frame: Frame) => frame.evaluate(() => ({ ...(globalThis as unknown as DemoWindow).demo.counters })),
  stats: (frame: Frame) => frame.evaluate(() => (globalThis as unknown as DemoWindow).demo.stats()),
  rejections: (frame: Frame) => frame.evaluate(() => [...(globalThis as unknown as DemoWindow).demo.rejections]),
  sendRaw: (frame: Frame, data: unknown) => frame.evaluate((d) => (globalThis as unknown as DemoWindow).demo.sendRaw(d), data),
  release: (frame: Frame, callId: string) =>
    frame.evaluate((id) => (globalThis as unknown as DemoWindow).demo.release(id), callId),
  /** Waits until the page's own stats satisfy `predicate` (evaluated in the page). */
  async until(frame: Frame, predicate: string): Promise<void> {
    await frame.waitForFunction(
      (p) => {
        const { demo: d } = globalThis as unknown as DemoWindow;
        return new Function("stats", "counters", `return ${p};`)(d.stats(), d.counters) as boolean;
      },
      predicate,
      { polling: 5 },
    );
  },
};

/**
 * Live instances of a class in a frame's JavaScript heap (its main world), after a full garbage
 * collection: what the page really holds, whoever created it.
 */
export async function liveInstances(page: Page, frame: Frame, className: string): Promise<number> {
  const session = await page.context().newCDPSession(page);
  try {
    const contexts: { id: number; auxData?: { frameId?: string; isDefault?: boolean } }[] = [];
    session.on("Runtime.executionContextCreated", (event) => contexts.push(event.context));
    await session.send("Runtime.enable");
    const frameId = findFrameId((await session.send("Page.getFrameTree")).frameTree, frame.url());
    const context = contexts.find((c) => c.auxData?.frameId === frameId && c.auxData?.isDefault === true);
    if (context === undefined) throw new Error(`no JavaScript context for ${frame.url()}`);
    await session.send("HeapProfiler.collectGarbage");
    const prototype = await session.send("Runtime.evaluate", { expression: `${className}.prototype`, contextId: context.id });
    const objectId = prototype.result.objectId;
    if (objectId === undefined) throw new Error(`no ${className}.prototype in the frame`);
    const found = await session.send("Runtime.queryObjects", { prototypeObjectId: objectId });
    const arrayId = found.objects.objectId;
    if (arrayId === undefined) throw new Error("queryObjects returned nothing");
    const length = await session.send("Runtime.callFunctionOn", {
      objectId: arrayId,
      functionDeclaration: "function () { return this.length; }",
      returnByValue: true,
    });
    return length.result.value as number;
  } finally {
    await session.detach();
  }
}

interface FrameTree {
  frame: { id: string; url: string; urlFragment?: string };
  childFrames?: FrameTree[];
}

function findFrameId(tree: FrameTree, url: string): string | undefined {
  if (tree.frame.url + (tree.frame.urlFragment ?? "") === url || tree.frame.url === url) return tree.frame.id;
  for (const child of tree.childFrames ?? []) {
    const found = findFrameId(child, url);
    if (found !== undefined) return found;
  }
  return undefined;
}
