/** ACP's cancel notification, `{requestId}`. */
export const ACP_CANCEL_METHOD = "$/cancel_request";
/** LSP's, `{id}`: the only one vscode-jsonrpc's receive path knows. */
export const LSP_CANCEL_METHOD = "$/cancelRequest";
