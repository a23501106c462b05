import { AgentApp, ClientApp } from "@agentclientprotocol/sdk";
import { type CancellableStreamOptions, type Cancellation, cancellableStream } from "./cancellable-stream.js";
import { handlerScope, runHandlerInScope } from "./handler-scope.js";
import type { Side } from "./methods.js";
import { isMessageStream } from "./sdk-stream.js";

export type WithCancellationOptions = Omit<CancellableStreamOptions, "role"> & {
  /** Needed only for apps built from another SDK entry point (unstable, v2). */
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
  if (app instanceof AgentApp) return "agent";
  if (app instanceof ClientApp) return "client";
  throw new TypeError(
    "withCancellation: cannot tell whether this app is an agent or a client; pass { role: 'agent' } or { role: 'client' }",
  );
}

/** A handler that runs in the frame of whichever connection dispatched it. */
function scopedHandler(handler: AnyFunction): AnyFunction {
  return (context: unknown) => {
    const frame = handlerScope.getStore();
    if (frame === undefined) return handler(context);
    return runHandlerInScope(frame.engine, frame.remote, handler as (context: unknown) => unknown, context);
  };
}

/**
 * Adopts acp-cancel in an existing `@agentclientprotocol/sdk` app in one line:
 *
 *     const app = withCancellation(acp.agent({ name: "my-agent" }));
 *
 * Request handlers registered afterwards run in a handler scope (so the requests they
 * make nest under the request they handle, and their own aborts answer -32800), and
 * every stream the app connects to is routed through the cancellation engine. The SDK's
 * API is otherwise unchanged.
 */
export function withCancellation<App extends object>(
  app: App,
  options: WithCancellationOptions = {},
): CancellableApp<App> {
  const role = roleOf(app, options.role);
  const target = app as unknown as AppShape;
  const cancellations: Cancellation[] = [];
  const onRequest = target.onRequest.bind(app);

  target.onRequest = (...args: unknown[]) => {
    const last = args.length - 1;
    args[last] = scopedHandler(args[last] as AnyFunction);
    return onRequest(...args);
  };
  // The SDK starts a connection's receive loop inside `connect`, so running `connect` in
  // the connection's frame makes that frame ambient for every handler it dispatches.
  for (const name of ["connect", "connectWith"] as const) {
    const original = target[name].bind(app);
    target[name] = (stream: unknown, ...rest: unknown[]) => {
      if (!isMessageStream(stream)) return original(stream, ...rest);
      const wrapped = cancellableStream(stream, { ...options, role });
      cancellations.push(wrapped.cancellation);
      return wrapped.cancellation.run(() => original(wrapped.stream, ...rest));
    };
  }
  return Object.assign(app, { cancellations }) as CancellableApp<App>;
}
