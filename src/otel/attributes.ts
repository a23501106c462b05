import type { JobInfo } from "../core/index.js";

// Span names and attributes after OpenTelemetry's semantic conventions (JSON-RPC, MCP, GenAI). The
// current and the earlier JSON-RPC names are both written (their `rpc/dup` mode): older backends still work.

export type SpanAttributes = Record<string, string | number | boolean>;

/** Our own attributes and events, under one prefix. */
export const ATTR = {
  protocol: "acp_cancel.protocol",
  cause: "acp_cancel.cancel.cause",
  origin: "acp_cancel.cancel.origin",
  state: "acp_cancel.state",
} as const;

/** The span's name: the method, then the tool for an MCP tool call (`tools/call search`). */
export function spanName(info: JobInfo): string {
  const tool = info.attributes?.["gen_ai.tool.name"];
  return tool === undefined ? info.method : `${info.method} ${String(tool)}`;
}

export function spanAttributes(info: JobInfo): SpanAttributes {
  const attributes: SpanAttributes = { [ATTR.protocol]: info.protocol };
  const id = info.id === undefined ? undefined : String(info.id);
  if (info.protocol === "mcp") {
    attributes["mcp.method.name"] = info.method;
    if (id !== undefined) attributes["jsonrpc.request.id"] = id;
  } else if (info.protocol === "acp" || info.protocol === "a2a" || info.protocol === "jsonrpc") {
    attributes["rpc.system.name"] = "jsonrpc";
    attributes["rpc.system"] = "jsonrpc";
    attributes["rpc.method"] = info.method;
    attributes["jsonrpc.protocol.version"] = "2.0";
    if (id !== undefined) {
      attributes["jsonrpc.request.id"] = id;
      attributes["rpc.jsonrpc.request_id"] = id;
    }
  } else {
    attributes["rpc.method"] = info.method;
    if (id !== undefined) attributes[`${info.protocol}.request.id`] = id;
  }
  if (info.attributes !== undefined) Object.assign(attributes, info.attributes);
  return attributes;
}
