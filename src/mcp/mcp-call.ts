/** What the MCP binding keeps per request in flight (a class, so a visitor can tell it apart); `label` names the peer. */
export class McpCall {
  constructor(readonly method: string, readonly label: string | undefined) {}
}

/** A request a handler of this process is answering. */
export class McpHandling {
  constructor(readonly method: string) {}
}
