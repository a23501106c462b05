import type { Invocation } from "./messages.js";
import type { RequestSigner } from "./signer.js";

interface PostInvocationOptions {
  readonly signer?: RequestSigner | undefined;
  readonly fetch?: typeof fetch | undefined;
  readonly signal?: AbortSignal | undefined;
  /** Extra headers (the W3C trace context), set before the signer runs so a signature covers them. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

/** POSTs an invocation to a toolset's `endpoint`, signed; a tool answers 200 at once (else an error naming the status). */
export async function postInvocation(
  endpoint: string | URL,
  invocation: Invocation,
  options: PostInvocationOptions = {},
): Promise<void> {
  const url = new URL(endpoint);
  const body = JSON.stringify(invocation);
  const headers = new Headers({ ...options.headers, "content-type": "application/json" });
  await options.signer?.({ url, method: "POST", headers, body });
  const signal = options.signal ?? null;
  const response = await (options.fetch ?? fetch)(url, { method: "POST", headers, body, redirect: "manual", signal });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`tool server answered the invocation with HTTP ${response.status}`);
}
