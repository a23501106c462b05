import { AgentApp, ClientApp } from "@agentclientprotocol/sdk";
import { AgentApp as AgentAppV2, ClientApp as ClientAppV2 } from "@agentclientprotocol/sdk/experimental/v2";
import { cancellableStream } from "./cancellable-stream.js";
import type { Cancellation, CancellationOptions } from "./cancellation.js";
import type { Side } from "./methods.js";
import { attachEngine, hasBuiltInEngine } from "./ndjson-stream.js";
import { isMessageStream, type MessageStream } from "./sdk-stream.js";

export type WithCancellationOptions = Omit<CancellationOptions, "role"> & {
  /** Needed only for apps the SDK's v1 and v2 app classes do not cover (another entry point or SDK copy). */
  role?: Side;
};

/** The app, plus the cancellation handle of each stream it connected to. */
export type CancellableApp<App> = App & { readonly cancellations: readonly Cancellation[] };

type AnyFunction = (...args: unknown[]) => unknown;
interface AppShape {
  onRequest: AnyFunction;
  connect: AnyFunction;
  connectWith: AnyFunction;
}

function roleOf(app: unknown, role: Side | undefined): Side {
  if (role !== undefined) return role;
  if (app instanceof AgentApp || app instanceof AgentAppV2) return "agent";
  if (app instanceof ClientApp || app instanceof ClientAppV2) return "client";
  throw new TypeError(
    "withCancellation: cannot tell whether this app is an agent or a client; pass { role: 'agent' } or { role: 'client' }",
  );
}

/** The SDK object that identifies a connection in each of its contexts (v1 `connectionContext`, v2 `cx`). */
function connectionOf(context: unknown): object | undefined {
  const holder = context as { connectionContext?: unknown; cx?: unknown } | undefined;
  const connection = holder?.connectionContext ?? holder?.cx;
  return typeof connection === "object" && connection !== null ? connection : undefined;
}

/**
 * Adopts acp-cancel in an existing `@agentclientprotocol/sdk` app in one line:
 *
 *     const app = withCancellation(acp.agent({ name: "my-agent" }));
 *
 * Handlers registered afterwards nest their requests under the one they handle, and their own
 * aborts answer -32800; every stream the app connects to goes through the engine.
 */
export function withCancellation<App extends object>(app: App, options: WithCancellationOptions = {}): CancellableApp<App> {
  const role = roleOf(app, options.role);
  const target = app as unknown as AppShape;
  const cancellations: Cancellation[] = [];
  const byConnection = new WeakMap<object, Cancellation>();
  const onRequest = target.onRequest.bind(app);

  const cancellationFor = (context: unknown): Cancellation | undefined => {
    const ctx = context as { client?: unknown; agent?: unknown } | undefined;
    const connection = connectionOf(ctx?.client ?? ctx?.agent);
    const known = connection === undefined ? undefined : byConnection.get(connection);
    return known ?? (cancellations.length === 1 ? cancellations[0] : undefined);
  };

  target.onRequest = (...args: unknown[]) => {
    const last = args.length - 1;
    const handler = args[last] as AnyFunction;
    const scopedByCancellation = new WeakMap<Cancellation, AnyFunction>();
    args[last] = (context: unknown) => {
      const cancellation = cancellationFor(context);
      if (cancellation === undefined) return handler(context);
      let scoped = scopedByCancellation.get(cancellation);
      if (scoped === undefined) {
        scoped = cancellation.scope(handler as (context: never) => unknown) as AnyFunction;
        scopedByCancellation.set(cancellation, scoped);
      }
      return scoped(context);
    };
    return onRequest(...args);
  };
  /** Our own ndjson stream gets its built-in engine attached; any other stream is wrapped. */
  const throughEngine = (stream: MessageStream) => {
    const routed = hasBuiltInEngine(stream)
      ? { stream: stream as MessageStream, cancellation: attachEngine(stream, { ...options, role }) }
      : cancellableStream(stream, { ...options, role });
    cancellations.push(routed.cancellation);
    return routed;
  };
  target.connect = ((original: AnyFunction) => (stream: unknown, ...rest: unknown[]) => {
    if (!isMessageStream(stream)) return original(stream, ...rest);
    const routed = throughEngine(stream);
    const connection = original(routed.stream, ...rest) as Record<string, unknown>;
    const key = connectionOf(connection.client ?? connection.agent);
    if (key !== undefined) byConnection.set(key, routed.cancellation);
    return connection;
  })(target.connect.bind(app));
  target.connectWith = ((original: AnyFunction) => (stream: unknown, op: unknown, ...rest: unknown[]) => {
    if (!isMessageStream(stream)) return original(stream, op, ...rest);
    const routed = throughEngine(stream);
    // The op receives the connection's context first: learn the connection from it.
    const learning = (context: unknown) => {
      const key = connectionOf(context);
      if (key !== undefined) byConnection.set(key, routed.cancellation);
      return (op as AnyFunction)(context);
    };
    return original(routed.stream, learning, ...rest);
  })(target.connectWith.bind(app));
  return Object.assign(app, { cancellations }) as CancellableApp<App>;
}
