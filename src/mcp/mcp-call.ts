/** What the MCP binding keeps per request in flight. A class, so a visitor can tell it apart. */
export class McpCall {
  constructor(
    /** The MCP method (`tools/call`, `resources/read`, ...). */
    readonly method: string,
    /** The side that sent it: this process as `client` of a server, or as `server` asking its client. */
    readonly label: string | undefined,
  ) {}
}

/** A request a handler of this process is answering. */
export class McpHandling {
  constructor(readonly method: string) {}
}

/** MCP forbids cancelling `initialize`: the client waits for it, or gives up and closes. */
export const NEVER_CANCELLED = new Set(["initialize"]);
