/**
 * The bundled ABP demo app. Its long-running capability renders a large image (a Mandelbrot set)
 * in chunks of rows, yielding to the event loop between chunks and checking its AbortSignal, so a
 * cancel stops it within one chunk. `window.demo` exposes the page's own counters for tests.
 *
 * The query string picks how agents reach it (window.abp is always there, for Playwright):
 *   ?transport=postMessage&agentOrigin=http://127.0.0.1:8080
 *   ?transport=websocket&ws=ws://127.0.0.1:8081/abp
 *   &maxConcurrent=2   calls beyond this wait (a cancel while waiting skips them)
 */
import {
  AbpApp,
  type CapabilityContext,
  type CapabilityHandler,
  exposeAbp,
  type Rejection,
  serveWebSocket,
  servePostMessage,
  type ServedApp,
} from "../../src/abp/app/index.js";

const query = new URLSearchParams(location.search);
const canvas = document.querySelector("canvas");
const rowsOutput = document.querySelector("#rows");

/** The page's own view of its work and its leaks. */
const counters = { rows: 0, renders: 0, renderAborts: 0, abortListeners: 0 };
const rejections: Rejection[] = [];
const released = new Map<string, () => void>();

/**
 * Gives the event loop a turn between chunks, behind whatever is queued (messages, cancels).
 * Not scheduler.yield(): its continuation runs ahead of queued tasks, so a cancel would wait.
 */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

function mandelbrotRow(y: number, width: number, height: number, out: Uint8ClampedArray): void {
  const ci = (y / height) * 2.4 - 1.2;
  for (let x = 0; x < width; x++) {
    const cr = (x / width) * 3.2 - 2.2;
    let zr = 0;
    let zi = 0;
    let n = 0;
    while (n < 64 && zr * zr + zi * zi < 4) {
      const t = zr * zr - zi * zi + cr;
      zi = 2 * zr * zi + ci;
      zr = t;
      n++;
    }
    const i = x * 4;
    out[i] = n * 4;
    out[i + 1] = n * 2;
    out[i + 2] = 255 - n * 4;
    out[i + 3] = 255;
  }
}

async function render(params: Record<string, unknown>, { signal, progress }: CapabilityContext) {
  const width = Number(params.width ?? 2048);
  const height = Number(params.height ?? 2048);
  const rowsPerChunk = Number(params.rowsPerChunk ?? 4);
  if (!(width > 0 && width <= 16384 && height > 0 && height <= 16384)) throw new RangeError("width and height must be 1..16384");
  counters.renders++;
  const context = canvas?.getContext("2d");
  const row = new Uint8ClampedArray(width * 4);
  let checksum = 0;
  for (let y = 0; y < height; y++) {
    if (y % rowsPerChunk === 0) {
      await yieldToEventLoop();
      if (signal.aborted) {
        counters.renderAborts++;
        throw signal.reason;
      }
      progress(y, height);
    }
    mandelbrotRow(y, width, height, row);
    for (let i = 0; i < row.length; i += 97) checksum = (checksum + (row[i] ?? 0)) % 1_000_003;
    if (context !== null && context !== undefined && y % Math.ceil(height / 512) === 0) {
      const scaled = new ImageData(512, 1);
      for (let x = 0; x < 512; x++) {
        const from = Math.floor((x * width) / 512) * 4;
        scaled.data.set(row.subarray(from, from + 4), x * 4);
      }
      context.putImageData(scaled, 0, Math.floor((y * 512) / height));
    }
    counters.rows++;
    if (rowsOutput !== null) rowsOutput.textContent = String(counters.rows);
  }
  return { width, height, checksum };
}

/**
 * Each render the page handled: its times (ms since the epoch), how it ended, and the W3C trace
 * context the agent sent with it. The page has no OpenTelemetry SDK of its own; the
 * cross-protocol demo exports these as the app's spans (examples/cross-protocol/page-spans.ts).
 */
export interface HandledCall {
  capability: string;
  callId: string;
  trace: Record<string, string>;
  start: number;
  end?: number;
  abortedAt?: number;
  reason?: string;
  error?: string;
}
const handled: HandledCall[] = [];
const epochMs = () => performance.timeOrigin + performance.now();

function recorded(capability: string, handler: CapabilityHandler): CapabilityHandler {
  return async (params, context) => {
    const call: HandledCall = { capability, callId: context.callId, trace: { ...context.trace }, start: epochMs() };
    if (handled.push(call) > 100) handled.shift();
    context.signal.addEventListener("abort", () => {
      call.abortedAt = epochMs();
      call.reason = context.signal.reason instanceof Error ? context.signal.reason.message : String(context.signal.reason);
    }, { once: true });
    try {
      return await handler(params, context);
    } catch (error) {
      call.error = error instanceof Error ? error.message : String(error);
      throw error;
    } finally {
      call.end = epochMs();
    }
  };
}

/** Waits until cancelled (or released by the page): a call that holds a slot. */
function wait(_params: Record<string, unknown>, { signal, callId }: CapabilityContext) {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      counters.abortListeners--;
      released.delete(callId);
      reject(signal.reason);
    };
    counters.abortListeners++;
    signal.addEventListener("abort", onAbort, { once: true });
    released.set(callId, () => {
      signal.removeEventListener("abort", onAbort);
      counters.abortListeners--;
      released.delete(callId);
      resolve({ released: true });
    });
  });
}

const maxConcurrent = query.get("maxConcurrent");
const app = new AbpApp({
  app: { id: "abp-demo", name: "ABP demo app", version: "1.0.0" },
  capabilities: {
    render: recorded("render", render),
    wait,
    echo: (params) => params,
  },
  ...(maxConcurrent === null ? {} : { maxConcurrent: Number(maxConcurrent) }),
});
exposeAbp(app);

const onReject = (rejection: Rejection) => {
  rejections.push(rejection);
  console.warn(`abp: refused a message: ${rejection.code}: ${rejection.message}`);
};

let served: ServedApp | undefined;
let sendRaw: (data: unknown) => void = () => {
  throw new Error("no channel to an agent");
};
const transport = query.get("transport");
if (transport === "postMessage") {
  const agentOrigin = query.get("agentOrigin") ?? "";
  served = servePostMessage(app, { allowedOrigins: [agentOrigin], onReject });
  sendRaw = (data) => parent.postMessage(data, agentOrigin);
} else if (transport === "websocket") {
  const connected = await serveWebSocket(app, query.get("ws") ?? "", { onReject });
  served = connected;
  sendRaw = (data) => connected.socket.send(typeof data === "string" ? data : JSON.stringify(data));
}

Object.assign(globalThis, {
  demo: {
    counters,
    rejections,
    handled,
    stats: () => app.stats(),
    refused: () => served?.host.rejected ?? 0,
    release: (callId: string) => released.get(callId)?.(),
    /** Sends anything to the agent on this page's channel (to test the agent's input checks). */
    sendRaw,
    ready: true,
  },
});
