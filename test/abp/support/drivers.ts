/**
 * One driver per transport, so each test body runs unchanged over postMessage, WebSocket and
 * Playwright. The agent side is a real AbpClient: in Node for WebSocket and Playwright, in an agent
 * page for postMessage (an AbortSignal cannot cross into another realm, so the test drives it
 * through `window.agent`).
 */
import type { AddressInfo } from "node:net";
import type { Browser, Frame, Page } from "playwright-core";
import { type WebSocket, WebSocketServer } from "ws";
import { AbpClient, playwrightTransport, webSocketTransport } from "../../../src/abp/index.js";
import { LIMITS } from "../../../src/abp/app/protocol.js";
import { CallHarness } from "../pages/call-harness.js";
import { demoReady, type Origins } from "./browser.js";

export const TRANSPORTS = ["postMessage", "websocket", "playwright"] as const;
export type TransportName = (typeof TRANSPORTS)[number];

type Methods =
  | "initialize" | "start" | "abort" | "outcome" | "acks" | "progress" | "cancel" | "shutdown" | "inFlight" | "forget"
  | "startMany" | "abortMany" | "timeCancel" | "timeCalls";
type Fn<M extends Methods> = CallHarness[M] extends (...args: infer A) => infer R ? { args: A; result: Awaited<R> } : never;

export interface Driver {
  name: TransportName;
  page: Page;
  /** The frame the demo app runs in. */
  app: Frame;
  /** Calls a CallHarness method where the agent lives. */
  agent<M extends Methods>(method: M, ...args: Fn<M>["args"]): Promise<Fn<M>["result"]>;
  /** Problems the agent side reported (refused input from the app). */
  agentErrors(): Promise<string[]>;
  /** The WebSocket endpoint the page dialled (WebSocket only). */
  endpoint?: string;
  /** A frame of a third origin, beside the app (postMessage only). */
  stranger?: Frame;
  /** Sends raw data from the agent's end of the channel (not for Playwright). */
  sendRaw(data: unknown): Promise<void>;
  close(): Promise<void>;
}

export interface DriverOptions {
  maxConcurrent?: number;
}

export async function openDriver(
  name: TransportName,
  browser: Browser,
  origins: Origins,
  options: DriverOptions = {},
): Promise<Driver> {
  const page = await browser.newPage();
  const limit = `maxConcurrent=${options.maxConcurrent ?? 2}`;
  const appPage = `${origins.app.origin}/examples/abp/index.html`;
  switch (name) {
    case "playwright": {
      await page.goto(`${appPage}?${limit}`);
      await demoReady(page);
      return nodeDriver(name, page, page.mainFrame(), new AbpClient(playwrightTransport(page)), async () => {
        throw new Error("Playwright has no raw channel");
      });
    }
    case "websocket": {
      const server = new WebSocketServer({
        host: "127.0.0.1",
        port: 0,
        // Above our own limit, so an oversize message is refused by ABP (and the session lives on).
        maxPayload: LIMITS.maxMessageBytes * 4,
        verifyClient: ({ origin }: { origin: string }) => origin === origins.app.origin,
      });
      await new Promise<void>((resolve) => server.once("listening", resolve));
      const { port } = server.address() as AddressInfo;
      const connected = new Promise<WebSocket>((resolve) => server.once("connection", resolve));
      await page.goto(`${appPage}?transport=websocket&ws=${encodeURIComponent(`ws://127.0.0.1:${port}/abp`)}&${limit}`);
      const socket = await connected;
      await demoReady(page);
      const errors: string[] = [];
      const client = new AbpClient(webSocketTransport(socket, { onError: (e) => errors.push(`${e.name}: ${e.message}`) }));
      const driver = nodeDriver(name, page, page.mainFrame(), client, async (data) => {
        socket.send(typeof data === "string" ? data : JSON.stringify(data));
      }, errors);
      return {
        ...driver,
        endpoint: `ws://127.0.0.1:${port}/abp`,
        close: async () => {
          await driver.close();
          for (const peer of server.clients) peer.terminate();
          await new Promise((resolve) => server.close(resolve));
        },
      };
    }
    case "postMessage": {
      const app = `${appPage}?transport=postMessage&agentOrigin=${encodeURIComponent(origins.agent.origin)}&${limit}`;
      const stranger = `${origins.stranger.origin}/examples/abp/index.html`;
      await page.goto(`${origins.agent.origin}/test/abp/pages/agent.html?app=${encodeURIComponent(app)}&stranger=${encodeURIComponent(stranger)}`);
      await page.waitForFunction(() => (globalThis as { agentReady?: boolean }).agentReady === true);
      const frame = page.frames().find((f) => f.url().startsWith(origins.app.origin));
      const strangerFrame = page.frames().find((f) => f.url().startsWith(origins.stranger.origin));
      if (frame === undefined || strangerFrame === undefined) throw new Error("the app's or the stranger's frame did not load");
      await demoReady(frame);
      await demoReady(strangerFrame);
      return {
        name,
        page,
        app: frame,
        stranger: strangerFrame,
        agent: (method, ...args) =>
          page.evaluate(
            ({ method: m, args: a }) => {
              const harness = (globalThis as unknown as { agent: Record<string, (...x: unknown[]) => unknown> }).agent;
              return harness[m]?.(...a);
            },
            { method, args: args as unknown[] },
          ) as never,
        agentErrors: () => page.evaluate(() => [...(globalThis as unknown as { agentErrors: string[] }).agentErrors]),
        sendRaw: async (data) => {
          await page.evaluate(
            ({ d, origin }) => (document.querySelector<HTMLIFrameElement>("#app")?.contentWindow)?.postMessage(d, origin),
            { d: data, origin: origins.app.origin },
          );
        },
        close: () => page.close(),
      };
    }
  }
}

function nodeDriver(
  name: TransportName,
  page: Page,
  app: Frame,
  client: AbpClient,
  sendRaw: (data: unknown) => Promise<void>,
  errors: string[] = [],
): Driver {
  const harness = new CallHarness(client);
  return {
    name,
    page,
    app,
    agent: async (method, ...args) => (harness[method] as (...a: unknown[]) => unknown).apply(harness, args) as never,
    agentErrors: async () => [...errors],
    sendRaw,
    close: async () => {
      await client.close().catch(() => {});
      if (!page.isClosed()) await page.close();
    },
  };
}
