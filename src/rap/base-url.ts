/**
 * `{base}/cancel_tool_call`, relative to the tool server's base URL (the one discovery
 * uses), never to the toolset's `endpoint`. A base with a path prefix keeps it, and a
 * trailing slash or none gives the same URL: `https://h/tools` and `https://h/tools/`
 * both give `https://h/tools/cancel_tool_call`. Query and fragment are dropped.
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
