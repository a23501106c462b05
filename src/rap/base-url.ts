/**
 * `{base}/cancel_tool_call` under the tool server's base URL (never the toolset's `endpoint`): `https://h/tools`
 * and `https://h/tools/` both give `https://h/tools/cancel_tool_call`; query and fragment are dropped.
 */
export function cancelUrl(base: string | URL): URL {
  const url = new URL(base);
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TypeError(`tool server base URL must be http or https: ${url.href}`);
  }
  url.search = "";
  url.hash = "";
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/cancel_tool_call`;
  return url;
}
