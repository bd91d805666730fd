import { RawJson } from "./raw-json.js";

/**
 * A JSON-RPC message as JSON text, as `JSON.stringify` writes it but with the envelope written
 * here: `{"jsonrpc":"2.0","id":…,"method":…,"params":…}` and the answers' `result` or `error`.
 * Every message of a call is serialised twice on its way (the request to the server, the answer
 * to the client), and `JSON.stringify` looks up `toJSON` and escapes each key of the envelope
 * alike; only the members' values go through it here. A message with any other member, or one
 * that `JSON.stringify` would treat apart (`toJSON`, members set to `undefined`), is left to it.
 * The members come out in the order above, whatever order they were set in. A `result` that
 * is a {@link RawJson} is written as its text.
 *
 * @example
 * stringifyMessage({ jsonrpc: "2.0", id: 1, result: { content: [] } });
 * // '{"jsonrpc":"2.0","id":1,"result":{"content":[]}}'
 */
export function stringifyMessage(message: object): string {
  const m = message as {
    jsonrpc?: unknown;
    id?: unknown;
    method?: unknown;
    params?: unknown;
    result?: unknown;
    error?: unknown;
    toJSON?: unknown;
  };
  if (m.jsonrpc !== "2.0" || m.toJSON !== undefined) return JSON.stringify(message);
  let members = 1;
  let text = '{"jsonrpc":"2.0"';
  const { id, method, params, result, error } = m;
  if (id !== undefined) {
    // A safe integer as it is; anything else (a string to escape) through JSON.stringify.
    text +=
      typeof id === "number" && Number.isSafeInteger(id) ? `,"id":${id}` : `,"id":${JSON.stringify(id)}`;
    members++;
  }
  // JSON.stringify answers undefined for a function or a symbol, which it would leave out of
  // the object: the general way then.
  if (method !== undefined) {
    const json = JSON.stringify(method) as string | undefined;
    if (json === undefined) return JSON.stringify(message);
    text += `,"method":${json}`;
    members++;
  }
  if (params !== undefined) {
    const json = JSON.stringify(params) as string | undefined;
    if (json === undefined) return JSON.stringify(message);
    text += `,"params":${json}`;
    members++;
  }
  if (result instanceof RawJson) {
    // A result relayed as it came: its text is JSON already (see readRawAnswer).
    text += `,"result":${result.text}`;
    members++;
  } else if (result !== undefined) {
    const json = JSON.stringify(result) as string | undefined;
    if (json === undefined) return JSON.stringify(message);
    text += `,"result":${json}`;
    members++;
  }
  if (error !== undefined) {
    const json = JSON.stringify(error) as string | undefined;
    if (json === undefined) return JSON.stringify(message);
    text += `,"error":${json}`;
    members++;
  }
  // A member not written above, or one set to undefined, makes the counts differ: another shape.
  // (for-in also counts inherited enumerable keys; a message has none, and a count that differs
  // only costs the general way.)
  let keys = 0;
  for (const _ in message) keys++;
  return keys === members ? `${text}}` : JSON.stringify(message);
}
