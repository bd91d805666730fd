/** A request from the server to the client (2025 sampling, elicitation, roots; 2026 input requests). */
export interface ServerRequest {
  server: string;
  method: string;
  params: Record<string, unknown>;
  signal: AbortSignal;
}

/**
 * Answers server-to-client requests; throw (or reject) to decline with an error.
 * `waiting`, when present, says the call is waiting on its client and will ask
 * nothing new until answered (helps route a 2025 server's requests to the right call).
 */
export type ServerRequestHandler = ((request: ServerRequest) => Promise<Record<string, unknown>>) & {
  waiting?: () => boolean;
};

/**
 * The requests a 2025 server may send its client (sampling, elicitation, roots), each with
 * the client capability it needs: the upstream accepts only these, and the gateway asks a
 * client only when it declared the capability.
 */
export const SERVER_REQUEST_CAPABILITIES: ReadonlyMap<string, string> = new Map([
  ["sampling/createMessage", "sampling"],
  ["elicitation/create", "elicitation"],
  ["roots/list", "roots"],
]);

/** What a client that answers every kind of server request declares. */
export const ANSWERING_CAPABILITIES: Record<string, unknown> = {
  sampling: {},
  elicitation: { form: {}, url: {} },
  roots: { listChanged: true },
};
