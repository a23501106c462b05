/** What a signer sees of a request: one signer serves invocations and notices (RAP: "exactly like invocations"). */
export interface OutgoingRequest {
  readonly url: URL;
  readonly method: "POST";
  /** Add or change headers here. */
  readonly headers: Headers;
  /** The exact body that will be sent (SigV4 signs its hash). */
  readonly body: string;
}

/** Adds credentials to a request before it is sent. May be async (a token refresh, SigV4). */
export type RequestSigner = (request: OutgoingRequest) => void | Promise<void>;

/** `Authorization: Bearer <token>`; `token` may be a function, called for every request. */
export function bearerSigner(token: string | (() => string | Promise<string>)): RequestSigner {
  return async (request) => {
    const value = typeof token === "function" ? await token() : token;
    request.headers.set("authorization", `Bearer ${value}`);
  };
}

/** Fixed extra headers (an API key header, a tenant header). */
export function headerSigner(headers: Readonly<Record<string, string>>): RequestSigner {
  return (request) => {
    for (const [name, value] of Object.entries(headers)) request.headers.set(name, value);
  };
}

/** Several signers, applied in order. */
export function combineSigners(...signers: RequestSigner[]): RequestSigner {
  return async (request) => {
    for (const sign of signers) await sign(request);
  };
}
