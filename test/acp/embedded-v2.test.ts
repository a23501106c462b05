import { type CancelEngine, withCancellation } from "../../src/index.js";
import { spawnFixture } from "../support/spawn-peer.js";
import {
  agentInFlightV2,
  cancelDuringPermission,
  closeWithTurnAndHeldPrompt,
  heldPromptCancelled,
  type V2Placement,
} from "../support/v2-scenarios.js";

/** acp-cancel embedded in a real SDK 2.4.0 v2 agent (role told by its class), over real stdio. */
const inAgent = (graceMs?: number): V2Placement => ({
  spawn: (args) => spawnFixture("v2-agent", [...args, ...(graceMs === undefined ? [] : ["--grace-ms", String(graceMs)])]),
  client: (app) => app,
  inFlight: agentInFlightV2,
});

/** acp-cancel embedded in a real SDK 2.4.0 v2 client (role told by its class), against a bare v2 agent. */
function inClientPlacement(): V2Placement {
  let engine: CancelEngine | undefined;
  return {
    spawn: (args) => spawnFixture("v2-agent", ["--bare", ...args]),
    client: (app) => {
      const cancellable = withCancellation(app);
      // The engine exists once the app connects; read it then.
      return Object.assign(cancellable, {
        connectWith: ((connect) => (stream: never, op: never) => {
          const result = connect(stream, op);
          engine = cancellable.cancellations[0]?.engine;
          return result;
        })(cancellable.connectWith.bind(cancellable)),
      });
    },
    inFlight: () => Promise.resolve(engine?.inFlight ?? { client: -1, agent: -1 }),
  };
}

describe("embedded in real SDK 2.4.0 v2 apps (experimental/v2), over real stdio", () => {
  describe("in the agent", () => {
    it("session/cancel during an inserted turn with an open permission dialog: dialog cancelled both ways, prompt answered once with its messageId, idle reaches the client", () =>
      cancelDuringPermission(inAgent(), true));
    it("a held prompt withdrawn by $/cancel_request and one cancelled by session/cancel: -32800 from the agent", () =>
      heldPromptCancelled(inAgent(), []));
    it("the same with an agent that ignores both: -32800 after the grace period", () =>
      heldPromptCancelled(inAgent(150), ["--ignore-cancel"]));
    it("session/close with a turn running and a prompt held", () => closeWithTurnAndHeldPrompt(inAgent()));
  });

  describe("in the client", () => {
    it("session/cancel: the client's own pending permission dialog is answered cancelled to the agent and told to stop", () =>
      cancelDuringPermission(inClientPlacement(), false));
    it("a held prompt withdrawn and cancelled: -32800", () => heldPromptCancelled(inClientPlacement(), []));
    it("session/close with a turn running and a prompt held", () => closeWithTurnAndHeldPrompt(inClientPlacement()));
  });
});
