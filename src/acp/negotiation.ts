import type { CancelReason } from "../core/index.js";
import { type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse, notification } from "../wire/index.js";
import { type CancellationCapability, readCapability, withCapability } from "./capability.js";
import type { RequestJob } from "./engine-jobs.js";
import type { EngineEvent, PortOptions } from "./engine-options.js";
import { Method, type Side } from "./methods.js";
import { KNOWN_VERSIONS, PASS_THROUGH_RULES, V1_RULES, type VersionRules } from "./versions/index.js";

/** What `initialize` settles: the version in force and each side's capability (ours added), so how to tell a handler to stop. */
export class Negotiation {
  /** v1 until `initialize` says otherwise. */
  rules: VersionRules = V1_RULES;
  /** The capability each side advertised at `initialize` (undefined: none seen). */
  readonly capabilities: Record<Side, CancellationCapability | undefined> = { client: undefined, agent: undefined };

  constructor(
    private readonly emit: (event: EngineEvent) => void,
    private readonly ports: Readonly<Record<Side, PortOptions>>,
  ) {}

  /** The client's request, in the version it asks for (none: the rules in force); an unknown one passes untouched. */
  clientInitialize(request: JsonRpcRequest): JsonRpcRequest {
    const params = request.params as Record<string, unknown> | undefined;
    const asked = params?.protocolVersion;
    const field = (asked === undefined ? this.rules : KNOWN_VERSIONS.get(asked))?.capabilityField?.client;
    if (field === undefined) return request;
    this.capabilities.client = readCapability(params?.[field]);
    return { ...request, params: withCapability(params ?? {}, field) };
  }

  /** The agent's answer decides the version in force, and with it the rules of this connection. */
  agentInitialize(response: JsonRpcResponse): JsonRpcResponse {
    if (!("result" in response)) return response;
    const result = response.result as Record<string, unknown> | undefined;
    const version = result?.protocolVersion;
    // An answer naming no version (invalid in every version) leaves the rules in force.
    if (version !== undefined) {
      const known = KNOWN_VERSIONS.get(version);
      this.rules = known ?? PASS_THROUGH_RULES;
      this.emit({ type: "protocol-version", version, rules: known === undefined ? "pass-through" : `v${String(version)}` });
    }
    const field = this.rules.capabilityField?.agent;
    if (field === undefined) return response;
    this.capabilities.agent = readCapability(result?.[field]);
    return { ...response, result: withCapability(result ?? {}, field) };
  }

  /** `side` was replaced by a fresh peer: what it advertised no longer holds. */
  forget(side: Side): void {
    this.capabilities[side] = undefined;
  }

  /**
   * The words the `handler` side of a cancelled `job` understands, to tell it to stop; a `session/cancel` among them stands
   * in for a `$/cancel_request` (docs/decisions.md, "Capability": a second cancel of the same turn hurts some agents).
   */
  stopMessages(job: RequestJob, handler: Side, reason: CancelReason): JsonRpcNotification[] {
    const { ports } = this;
    const { id, method, sessionId } = job.payload;
    // An unknown side is sent one too: stable ACP v1, ignored where unsupported.
    const speaksCancel = ports[handler].cancelSupport !== "no";
    const cancelRequest = () => notification(Method.cancelRequest, { requestId: id });
    if (method !== Method.prompt) return speaksCancel ? [cancelRequest()] : [];
    const agentInProcess = ports.agent.inProcess === true;
    const agentEndsTurns = !agentInProcess && this.capabilities.agent?.sessionCancel === true;
    // Any other remote v1 agent is stopped by `session/cancel` alone, which v1 requires it to honour.
    const onlySessionCancel = !agentInProcess && !agentEndsTurns && this.rules.promptIsTurn;
    const sendsCancelRequest = speaksCancel && !onlySessionCancel && !(reason === "session" && agentEndsTurns);
    const messages = sendsCancelRequest ? [cancelRequest()] : [];
    // `session/cancel` can stand for a cancelled prompt where the prompt is the turn (v1).
    const emulate = this.rules.promptIsTurn && reason !== "session";
    const agentHeard = agentEndsTurns && sendsCancelRequest;
    if (!emulate || sessionId === undefined || agentInProcess || agentHeard) return messages;
    return [...messages, notification(Method.sessionCancel, { sessionId })];
  }
}
