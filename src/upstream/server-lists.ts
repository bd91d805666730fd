import type {
  Prompt,
  Resource,
  ResourceTemplateType as ResourceTemplate,
  Tool,
} from "@modelcontextprotocol/client";
import type { ListKind } from "../protocol/list-changes.js";
import type { ParamHeader } from "../protocol/param-headers.js";
import type { Connected } from "./connect.js";
import { fetchLists } from "./list-all.js";
import type { UpstreamEvent } from "./upstream-types.js";

/** Every list a server may have, in the order they are fetched. */
export const LIST_KINDS: readonly ListKind[] = ["tools", "resources", "resourceTemplates", "prompts"];

/** What {@link ServerLists} needs of its connection's owner. */
export interface ServerListsOptions {
  /** Timeout of each list request (the server's `timeout`). */
  timeout: number;
  /** Where `list-changed` and `list-not-implemented` go. */
  onEvent: (event: UpstreamEvent) => void;
}

/**
 * The mirror of one server's lists (tools, resources, resource templates, prompts): fetched
 * whole, every page, over the connection of the moment; kept when the connection ends (an idle
 * stop goes on offering the tools); changes reported, and only real ones; freshness by the
 * server's `ttlMs` or its list-change announcements. The connection ({@link Upstream}) says
 * when to fetch.
 */
export class ServerLists {
  tools: Tool[] = [];
  resources: Resource[] = [];
  resourceTemplates: ResourceTemplate[] = [];
  prompts: Prompt[] = [];
  /** When the lists were last fetched, and how long the server said they stay fresh (2026 `ttlMs`). */
  listedAt = 0;
  ttlMs: number | undefined;

  readonly #options: ServerListsOptions;
  /** `x-mcp-header` annotations of the listed tools, by tool name (2026 Streamable HTTP only). */
  #paramHeaders = new Map<string, ParamHeader[]>();
  #refreshing = false;

  constructor(options: ServerListsOptions) {
    this.#options = options;
  }

  /** The `x-mcp-header` annotations of a listed tool, if it has any. */
  paramHeaders(tool: string): ParamHeader[] | undefined {
    return this.#paramHeaders.get(tool);
  }

  /** Re-fetches the given lists (all pages) over `connected` and reports the change. */
  async fetch(
    connected: Connected,
    kinds: readonly ListKind[] = LIST_KINDS,
    signal?: AbortSignal,
  ): Promise<void> {
    // Over 2026 Streamable HTTP, tools with invalid `x-mcp-header` annotations are not offered.
    const headersApply = connected.negotiated.stateless && connected.transport === "streamable-http";
    const lists = await fetchLists(connected.connection, connected.negotiated.capabilities, [...kinds], {
      timeout: this.#options.timeout,
      signal,
      paramHeaders: headersApply,
      onNotImplemented: (_kind, method) => this.#options.onEvent({ type: "list-not-implemented", method }),
    });
    // Only lists that really changed are reported: a re-list for freshness that finds the
    // same tools must not send every client a list_changed.
    const changed = kinds.filter((kind) => {
      const next = lists[kind];
      if (next === undefined || JSON.stringify(next) === JSON.stringify(this[kind])) return false;
      (this as { [K in ListKind]: unknown[] })[kind] = next;
      return true;
    });
    if (lists.paramHeaders !== undefined) this.#paramHeaders = lists.paramHeaders;
    this.listedAt = Date.now();
    this.ttlMs = lists.ttlMs;
    if (changed.length > 0) this.#options.onEvent({ type: "list-changed", kinds: changed });
  }

  /**
   * Runs `refresh` in the background if the lists are past their freshness: the server's
   * `ttlMs` when it gave one above 0; for a server that announces no tool list changes
   * (`capabilities`), 5 s; otherwise its announcements keep the lists fresh. One at a time.
   */
  refreshIfStale(
    now: number,
    capabilities: Record<string, unknown> | undefined,
    refresh: () => Promise<void>,
  ): void {
    if (this.#refreshing) return;
    const caps = capabilities as { tools?: { listChanged?: boolean } } | undefined;
    const fresh =
      this.ttlMs !== undefined && this.ttlMs > 0
        ? this.ttlMs
        : caps?.tools?.listChanged === true
          ? Infinity
          : 5000;
    if (now < this.listedAt + fresh) return;
    this.#refreshing = true;
    void refresh().finally(() => {
      this.#refreshing = false;
    });
  }
}
