import type { JsonRpcRequest, JsonRpcResponse } from "../wire/index.js";
import { type CancellationCapability, readCapability, withCapability } from "./capability.js";
import type { EngineEvent } from "./engine-options.js";
import type { Side } from "./methods.js";
import { KNOWN_VERSIONS, PASS_THROUGH_RULES, V1_RULES, type VersionRules } from "./versions/index.js";

/** What `initialize` settles: the version in force (its rules) and each side's capability; ours is added both ways. */
export class Negotiation {
  /** v1 until `initialize` says otherwise. */
  rules: VersionRules = V1_RULES;
  /** The capability each side advertised at `initialize` (undefined: none seen). */
  readonly capabilities: Record<Side, CancellationCapability | undefined> = { client: undefined, agent: undefined };

  constructor(private readonly emit: (event: EngineEvent) => void) {}

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
}
