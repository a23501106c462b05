import { AgentApp, ClientApp } from "@agentclientprotocol/sdk";
import { AgentApp as AgentAppV2, ClientApp as ClientAppV2 } from "@agentclientprotocol/sdk/experimental/v2";
import { cancellableStream, isMessageStream, type MessageStream } from "./cancellable-stream.js";
import { type Cancellation, type CancellationOptions, runHandlerInScope } from "./cancellation.js";
import { otherSide, type Side } from "./methods.js";

export type WithCancellationOptions = Omit<CancellationOptions, "role"> & {
  /** Needed only for apps the SDK's v1 and v2 app classes do not cover (another entry point or SDK copy). */
  role?: Side;
};

/** The app, plus the cancellation handle of each stream it connected to. */
export type CancellableApp<App> = App & { readonly cancellations: readonly Cancellation[] };

type AnyFunction = (...args: unknown[]) => unknown;

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
  const target = app as unknown as Record<"onRequest" | "connect" | "connectWith", AnyFunction>;
  const cancellations: Cancellation[] = [];
  const byConnection = new WeakMap<object, Cancellation>();
  const onRequest = target.onRequest.bind(app);

  const cancellationFor = (context: unknown): Cancellation | undefined => {
    const ctx = context as { client?: unknown; agent?: unknown } | undefined;
    const connection = connectionOf(ctx?.client ?? ctx?.agent);
    const known = connection === undefined ? undefined : byConnection.get(connection);
    return known ?? (cancellations.length === 1 ? cancellations[0] : undefined);
  };
  const remember = (context: unknown, cancellation: Cancellation) => {
    const connection = connectionOf(context);
    if (connection !== undefined) byConnection.set(connection, cancellation);
  };

  target.onRequest = (...args: unknown[]) => {
    const last = args.length - 1;
    const handler = args[last] as AnyFunction;
    args[last] = (context: unknown) => {
      const cancellation = cancellationFor(context);
      if (cancellation === undefined) return handler(context);
      return runHandlerInScope(cancellation.engine, otherSide(cancellation.role), handler, context);
    };
    return onRequest(...args);
  };
  const throughEngine = (stream: MessageStream) => {
    const routed = cancellableStream(stream, { ...options, role });
    cancellations.push(routed.cancellation);
    return routed;
  };
  const connect = target.connect.bind(app);
  target.connect = (stream: unknown, ...rest: unknown[]) => {
    if (!isMessageStream(stream)) return connect(stream, ...rest);
    const routed = throughEngine(stream);
    const connection = connect(routed.stream, ...rest) as Record<string, unknown>;
    remember(connection.client ?? connection.agent, routed.cancellation);
    return connection;
  };
  const connectWith = target.connectWith.bind(app);
  target.connectWith = (stream: unknown, op: unknown, ...rest: unknown[]) => {
    if (!isMessageStream(stream)) return connectWith(stream, op, ...rest);
    const routed = throughEngine(stream);
    // The op receives the connection's context first: learn the connection from it.
    const learning = (context: unknown) => {
      remember(context, routed.cancellation);
      return (op as AnyFunction)(context);
    };
    return connectWith(routed.stream, learning, ...rest);
  };
  return Object.assign(app, { cancellations }) as CancellableApp<App>;
}
