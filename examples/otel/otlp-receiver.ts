/**
 * An OTLP/HTTP trace receiver on loopback, as a collector's `otlp` receiver would be (no
 * collector binary installs offline): it accepts JSON exports at /v1/traces (what the official
 * `@opentelemetry/exporter-trace-otlp-http` sends) and keeps their spans. Shared by the
 * cross-protocol demo and the tracing tests. With `forwardTo`, each export is also passed on
 * as it came, so a real backend (Jaeger, Tempo) shows the same trace.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** One span as an OTLP/HTTP JSON export carries it, with its process's service name. */
export interface ReceivedSpan {
  service: string;
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  /** Start and end, in ms since the epoch. */
  start: number;
  end: number;
  attributes: Record<string, unknown>;
  events: { name: string; at: number; attributes: Record<string, unknown> }[];
  status: { code?: number; message?: string };
}

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  url: string;
  spans: ReceivedSpan[];
  /** Each export's body as it came (OTLP JSON), one per line in a file. */
  exports: string[];
  close(): Promise<void>;
}

export interface OtlpReceiverOptions {
  /** A backend's traces URL (`http://127.0.0.1:4318/v1/traces`) each export is passed on to. */
  forwardTo?: string;
  /** Headers for the backend (its API key, say). */
  forwardHeaders?: Record<string, string>;
  /** Told when passing an export on failed (once per failure); the receiver carries on. */
  onForwardError?: (error: Error) => void;
}

/** OTLP's SPAN_KIND_* numbering. */
export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;
export const STATUS_ERROR = 2;

const MAX_BODY = 8 * 1024 * 1024;

interface KeyValue {
  key: string;
  value: Record<string, unknown>;
}

const valueOf = (value: Record<string, unknown>) =>
  value.stringValue ?? value.boolValue ?? (value.intValue === undefined ? value.doubleValue : Number(value.intValue));
const record = (list: KeyValue[] | undefined) => Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]));
/** OTLP JSON ids are hex; an exporter that writes base64 is read too. */
const hexId = (id: unknown) => {
  if (typeof id !== "string" || id === "") return undefined;
  return /^[0-9a-f]+$/i.test(id) && (id.length === 32 || id.length === 16) ? id.toLowerCase() : Buffer.from(id, "base64").toString("hex");
};
/** Unix nanoseconds (a string or a number in OTLP JSON) as ms. */
const ms = (nanos: unknown) => (typeof nanos === "number" ? nanos / 1e6 : Number(BigInt(String(nanos ?? 0)) / 1000n) / 1000);

type ExportedSpan = Record<string, unknown> & { events?: { name: string; timeUnixNano?: unknown; attributes?: KeyValue[] }[] };

/** The spans of one OTLP JSON export. Throws on a body that is not one. */
export function spansOf(body: string): ReceivedSpan[] {
  const exported = JSON.parse(body) as {
    resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: ExportedSpan[] }[] }[];
  };
  if (typeof exported !== "object" || exported === null) throw new TypeError("an OTLP export is a JSON object");
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of exported.resourceSpans ?? []) {
    const service = String(record(resourceSpans.resource?.attributes)["service.name"]);
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        spans.push({
          service,
          name: String(span.name),
          kind: Number(span.kind),
          traceId: hexId(span.traceId) ?? "",
          spanId: hexId(span.spanId) ?? "",
          parentSpanId: hexId(span.parentSpanId),
          start: ms(span.startTimeUnixNano),
          end: ms(span.endTimeUnixNano),
          attributes: record(span.attributes as KeyValue[]),
          events: (span.events ?? []).map((e) => ({ name: e.name, at: ms(e.timeUnixNano), attributes: record(e.attributes) })),
          status: (span.status ?? {}) as ReceivedSpan["status"],
        });
      }
    }
  }
  return spans;
}

export async function otlpReceiver(options: OtlpReceiverOptions = {}): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const exports: string[] = [];
  const forwarding = new Set<Promise<void>>();
  const forward = (body: string, type: string) => {
    if (options.forwardTo === undefined) return;
    const headers = { ...options.forwardHeaders, "content-type": type };
    const sent = fetch(options.forwardTo, { method: "POST", headers, body })
      .then((response) => {
        if (!response.ok) throw new Error(`${options.forwardTo} answered ${response.status}`);
      })
      .catch((error: unknown) => options.onForwardError?.(error instanceof Error ? error : new Error(String(error))))
      .finally(() => forwarding.delete(sent));
    forwarding.add(sent);
  };
  const server = createServer((request, response) => {
    const type = request.headers["content-type"] ?? "";
    if (request.method !== "POST" || request.url !== "/v1/traces" || !/json/.test(type)) {
      request.resume();
      response.writeHead(415, { "content-type": "text/plain" }).end("only OTLP JSON exports, POSTed to /v1/traces\n");
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    request.on("end", () => {
      if (size > MAX_BODY) return void response.writeHead(413).end(`an export is at most ${MAX_BODY} bytes\n`);
      const body = Buffer.concat(chunks).toString("utf8");
      try {
        spans.push(...spansOf(body));
      } catch (error) {
        return void response.writeHead(400, { "content-type": "text/plain" }).end(`not an OTLP JSON export: ${String(error)}\n`);
      }
      exports.push(body);
      forward(body, type);
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    exports,
    close: async () => {
      await Promise.all(forwarding);
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}
