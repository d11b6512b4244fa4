/** JSON-RPC 2.0's error codes Berth answers or reads, and the LSP code ACP uses for a cancelled request. */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INTERNAL_ERROR = -32603;
export const REQUEST_CANCELLED = -32800;
