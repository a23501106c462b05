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
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  status: { code?: number; message?: string };
}

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

/**
 * An OTLP/HTTP trace receiver on loopback, as a collector's `otlp` receiver would be (no
 * collector binary installs offline): it accepts JSON exports at /v1/traces and keeps their spans.
 */
export async function otlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      if (request.method !== "POST" || request.url !== "/v1/traces" || !/json/.test(request.headers["content-type"] ?? "")) {
        response.writeHead(415).end();
        return;
      }
      const exported = JSON.parse(body) as {
        resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: Record<string, unknown>[] }[] }[];
      };
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
              attributes: record(span.attributes as KeyValue[]),
              events: ((span.events ?? []) as { name: string; attributes?: KeyValue[] }[]).map((e) => ({
                name: e.name,
                attributes: record(e.attributes),
              })),
              status: (span.status ?? {}) as ReceivedSpan["status"],
            });
          }
        }
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
