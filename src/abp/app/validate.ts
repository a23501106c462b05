/** Hand-written checks for what the page receives from an agent (every field untrusted): the page has no dependencies. */
import {
  type CallRequest,
  type CancelRequest,
  type Envelope,
  ERROR_CODES,
  type InitializeParams,
  LIMITS,
  MESSAGE_TYPES,
  messageSize,
  messageValue,
  NOT_JSON,
  RESULT_TYPE,
  type ShutdownPayload,
  TRACE_KEYS,
} from "./protocol.js";

/** What an app accepts from an agent. */
export type AgentMessage =
  | (Envelope<InitializeParams> & { type: "initialize"; id: string })
  | (Envelope<CallRequest> & { type: "capabilities/call"; id: string })
  | (Envelope<CancelRequest> & { type: "capabilities/cancel"; id: string })
  | (Envelope<ShutdownPayload> & { type: "shutdown" });

type Refusal = { ok: false; code: string; message: string; id?: string };
type Checked = { ok: true; message: AgentMessage } | Refusal;
type Fields = Record<string, unknown>;

export const isObject = (value: unknown): value is Fields =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const isId = (value: unknown): value is string =>
  typeof value === "string" && value.length > 0 && value.length <= LIMITS.maxIdLength;

const isText = (value: unknown): value is string =>
  typeof value === "string" && value.length <= LIMITS.maxTextLength;

/** Parses (when a string), measures and checks one envelope from an agent. */
export function checkAgentMessage(data: unknown, maxBytes: number = LIMITS.maxMessageBytes): Checked {
  if (messageSize(data, maxBytes) > maxBytes) {
    // Answered with the envelope's id when it can be read, so the agent's call settles on it.
    return fail(ERROR_CODES.messageTooLarge, `message is over the size limit of ${maxBytes} bytes`, envelopeIdOf(data));
  }
  const value = messageValue(data);
  if (value === NOT_JSON) return fail(ERROR_CODES.invalidMessage, "message is not valid JSON");
  const checked = checkEnvelope(value);
  if (!checked.ok) return checked;
  const { envelope } = checked;
  const problem = checkPayload(envelope.type, envelope.payload, envelope.id);
  if (problem !== undefined) return fail(ERROR_CODES.invalidMessage, problem, envelope.id);
  return { ok: true, message: envelope as unknown as AgentMessage };
}

/** An envelope's own fields (what its payload holds is checked per type), alike on both sides. */
export function checkEnvelope(value: unknown): { ok: true; envelope: Envelope<Fields> } | Refusal {
  if (!isObject(value)) return fail(ERROR_CODES.invalidMessage, "envelope must be an object");
  const id = isId(value.id) ? value.id : undefined;
  if (value.id !== undefined && id === undefined) {
    return fail(ERROR_CODES.invalidMessage, `envelope id must be a string of 1 to ${LIMITS.maxIdLength} characters`);
  }
  if (typeof value.type !== "string") return fail(ERROR_CODES.invalidMessage, "envelope type must be a string", id);
  if (!(MESSAGE_TYPES as readonly string[]).includes(value.type)) {
    return fail(ERROR_CODES.unknownType, `unknown message type "${value.type.slice(0, 100)}"`, id);
  }
  if (typeof value.timestamp !== "number" || !Number.isFinite(value.timestamp)) {
    return fail(ERROR_CODES.invalidMessage, "envelope timestamp must be a number", id);
  }
  if (!isObject(value.payload)) return fail(ERROR_CODES.invalidMessage, "envelope payload must be an object", id);
  return { ok: true, envelope: value as unknown as Envelope<Fields> };
}

function checkPayload(type: Envelope["type"], p: Fields, id: string | undefined): string | undefined {
  if (type in RESULT_TYPE && id === undefined) return `${type} needs an envelope id`;
  switch (type) {
    case "initialize": {
      if (!isObject(p.agent) || !isText(p.agent.name) || !isText(p.agent.version)) {
        return "initialize payload.agent must be {name, version} strings";
      }
      if (!isText(p.protocolVersion)) return "initialize payload.protocolVersion must be a string";
      const requested = p.requestedCapabilities;
      if (requested !== undefined && !(Array.isArray(requested) && requested.every(isId))) {
        return "initialize payload.requestedCapabilities must be an array of names";
      }
      if (p.features !== undefined && !isObject(p.features)) return "initialize payload.features must be an object";
      return undefined;
    }
    case "capabilities/call":
      if (!isId(p.capability)) return "capabilities/call payload.capability must be a non-empty string";
      if (!isId(p.callId)) return `capabilities/call payload.callId must be a string of 1 to ${LIMITS.maxIdLength} characters`;
      if (p.params !== undefined && !isObject(p.params)) return "capabilities/call payload.params must be an object";
      return p.options === undefined ? undefined : checkCallOptions(p.options);
    case "capabilities/cancel":
      if (!isId(p.callId)) return `capabilities/cancel payload.callId must be a string of 1 to ${LIMITS.maxIdLength} characters`;
      if (p.reason !== undefined && !isText(p.reason)) return "capabilities/cancel payload.reason must be a short string";
      return undefined;
    case "shutdown":
      if (p.reason !== undefined && !isText(p.reason)) return "shutdown payload.reason must be a short string";
      return undefined;
    default:
      return `message type "${type}" is not sent to an app`;
  }
}

/**
 * A call's options. Of its `_meta` only the W3C keys are checked, as bounded strings: other keys are left
 * alone as in ACP's and MCP's `_meta`, and a malformed `traceparent` is the propagator's to ignore.
 */
function checkCallOptions(options: unknown): string | undefined {
  if (!isObject(options)) return "capabilities/call payload.options must be an object";
  const { timeout, progressToken, _meta: meta } = options;
  if (timeout !== undefined && !(typeof timeout === "number" && timeout > 0 && timeout <= 2 ** 31 - 1)) {
    return "capabilities/call options.timeout must be a positive number of milliseconds";
  }
  if (progressToken !== undefined && !isId(progressToken) && !Number.isFinite(progressToken)) {
    return "capabilities/call options.progressToken must be a string or a number";
  }
  if (meta === undefined) return undefined;
  if (!isObject(meta)) return "capabilities/call options._meta must be an object";
  const max = LIMITS.maxTraceValueLength;
  const tooLong = TRACE_KEYS.find((key) => meta[key] !== undefined && !(typeof meta[key] === "string" && meta[key].length <= max));
  return tooLong === undefined ? undefined : `capabilities/call options._meta.${tooLong} must be a string of at most ${max} characters`;
}

/** An envelope's id leading its text (`{"type":"...","id":"..."`, scalars only before it), read from its first 4 KiB. */
const JSON_TEXT = String.raw`"(?:[^"\\]|\\.){0,256}"`;
const JSON_SCALAR = String.raw`(?:${JSON_TEXT}|-?[0-9.eE+-]{1,32}|true|false|null)`;
const LEADING_ID = new RegExp(
  String.raw`^\s*\{\s*(?:${JSON_TEXT}\s*:\s*${JSON_SCALAR}\s*,\s*){0,4}"id"\s*:\s*("(?:[^"\\]|\\.){1,400}")`,
);

/** The id of an envelope that cannot be checked (too large, or malformed), when it can be read cheaply. */
export function envelopeIdOf(data: unknown): string | undefined {
  // Text without a leading id is parsed as "": not JSON, so no id.
  const leading = (text: string) => messageValue(LEADING_ID.exec(text.slice(0, 4096))?.[1] ?? "");
  const id = typeof data === "string" ? leading(data) : isObject(data) ? data.id : undefined;
  return isId(id) ? id : undefined;
}

function fail(code: string, message: string, id?: string): Refusal {
  return id === undefined ? { ok: false, code, message } : { ok: false, code, message, id };
}
