import type { ListKind } from "./upstream.js";

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
