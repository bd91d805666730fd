import type {
  Prompt,
  Resource,
  ResourceTemplateType as ResourceTemplate,
  Tool,
} from "@modelcontextprotocol/client";
import { RpcError } from "../errors.js";
import { ErrorCode } from "../protocol/error-codes.js";
import type { ListKind } from "../protocol/list-changes.js";
import { type ParamHeader, scanParamHeaders } from "../protocol/param-headers.js";
import type { RpcConnection } from "../protocol/rpc-connection.js";

const METHOD: Record<ListKind, { method: string; key: string }> = {
  tools: { method: "tools/list", key: "tools" },
  resources: { method: "resources/list", key: "resources" },
  resourceTemplates: { method: "resources/templates/list", key: "resourceTemplates" },
  prompts: { method: "prompts/list", key: "prompts" },
};

/** Guards against a server that hands out cursors forever. */
const MAX_PAGES = 1000;

/**
 * Fetches every page of one list. Returns the items and the smallest `ttlMs`
 * any page carried (2026 lists say how long they stay fresh).
 */
export async function listAll<T>(
  request: (method: string, params: Record<string, unknown> | undefined) => Promise<Record<string, unknown>>,
  kind: ListKind,
): Promise<{ items: T[]; ttlMs?: number }> {
  const { method, key } = METHOD[kind];
  const items: T[] = [];
  let ttlMs: number | undefined;
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await request(method, cursor === undefined ? undefined : { cursor });
    const pageItems = result[key];
    if (Array.isArray(pageItems)) items.push(...(pageItems as T[]));
    if (typeof result.ttlMs === "number")
      ttlMs = ttlMs === undefined ? result.ttlMs : Math.min(ttlMs, result.ttlMs);
    const next = result.nextCursor;
    if (typeof next !== "string" || next === "" || next === cursor) break;
    cursor = next;
  }
  return ttlMs === undefined ? { items } : { items, ttlMs };
}

/** The lists {@link fetchLists} fetched (a kind the server does not offer stays undefined). */
export interface FetchedLists {
  tools?: Tool[];
  resources?: Resource[];
  resourceTemplates?: ResourceTemplate[];
  prompts?: Prompt[];
  /** The smallest `ttlMs` of all pages (2026). */
  ttlMs?: number;
  /** With `paramHeaders`: the `x-mcp-header` annotations of each tool that has some. */
  paramHeaders?: Map<string, ParamHeader[]>;
}

/**
 * Fetches the given lists of one server, each only if its capabilities offer it. With
 * `paramHeaders`, tools whose `x-mcp-header` annotations are invalid are left out (the
 * 2026 spec says a client must not offer them) and the valid annotations are returned.
 *
 * A list the server declares but answers with "method not found" (older and hand-written
 * servers declare `resources` without `resources/templates/list`) is read as empty, as the
 * SDK client does, and reported to `onNotImplemented`; any other error fails the fetch.
 */
export async function fetchLists(
  connection: RpcConnection,
  capabilities: Record<string, unknown>,
  kinds: readonly ListKind[],
  options: {
    timeout: number;
    signal?: AbortSignal | undefined;
    paramHeaders: boolean;
    onNotImplemented?: (kind: ListKind, method: string) => void;
  },
): Promise<FetchedLists> {
  const request = (method: string, params: Record<string, unknown> | undefined) =>
    connection.request<Record<string, unknown>>(method, params, {
      timeout: options.timeout,
      signal: options.signal,
    });
  const lists: FetchedLists = {};
  await Promise.all(
    kinds.map(async (kind) => {
      if (capabilities[kind === "resourceTemplates" ? "resources" : kind] === undefined) return;
      const listed = await listAll<never>(request, kind).catch((error: unknown) => {
        if (!(error instanceof RpcError) || error.code !== ErrorCode.MethodNotFound) throw error;
        options.onNotImplemented?.(kind, METHOD[kind].method);
        return { items: [] as never[], ttlMs: undefined };
      });
      if (listed.ttlMs !== undefined) lists.ttlMs = Math.min(lists.ttlMs ?? listed.ttlMs, listed.ttlMs);
      lists[kind] = listed.items;
    }),
  );
  if (options.paramHeaders && lists.tools !== undefined) {
    const annotated = new Map<string, ParamHeader[]>();
    lists.tools = lists.tools.filter((tool) => {
      const scan = scanParamHeaders(tool.inputSchema);
      if (scan.valid && scan.headers.length > 0) annotated.set(tool.name, scan.headers);
      return scan.valid;
    });
    lists.paramHeaders = annotated;
  }
  return lists;
}
