import type { FetchLike } from "@modelcontextprotocol/client";

/**
 * Where a remote connection's bearer token comes from, asked before each request (a
 * {@link UserConnectionPlan.bearer}). The source caches; `invalidate` tells it that the server
 * refused `token`, so that the next ask gets a fresh one instead of the cached one.
 */
export interface Bearer {
  (signal?: AbortSignal): Promise<string>;
  invalidate?(token: string): void;
}

/**
 * A `fetch` for a remote server's transport that sends `Authorization: Bearer <token>` on every
 * request, the token asked of `bearer` each time (it answers from its cache). When the server
 * answers 401, the token is dropped (`bearer.invalidate`) and the request goes once more with a
 * fresh one: an exchanged token the server stopped taking (revoked, its keys rotated) costs one
 * exchange, not a failed call. A second 401 is the server's answer and goes back as it is.
 *
 * The request's own `Authorization` header, if any, is replaced: the bearer is the only
 * credential this connection sends.
 *
 * @example
 * const { bearer } = await source.plan(user, server);
 * const transport = new StreamableHTTPClientTransport(new URL(server.url), { fetch: bearerFetch(bearer) });
 */
export function bearerFetch(bearer: Bearer, base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const send = async () => {
      const token = await bearer(init?.signal ?? undefined);
      const headers = new Headers(init?.headers);
      headers.set("authorization", `Bearer ${token}`);
      return { response: await base(url, { ...init, headers }), token };
    };
    const first = await send();
    if (first.response.status !== 401 || !replayable(init?.body)) return first.response;
    await first.response.body?.cancel().catch(() => {});
    bearer.invalidate?.(first.token);
    return (await send()).response;
  };
}

/** Whether a body can be sent a second time (a stream is spent by the first send). */
function replayable(body: RequestInit["body"] | undefined): boolean {
  return !(body instanceof ReadableStream);
}
