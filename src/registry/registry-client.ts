import { RegistryError } from "../errors.js";
import { deadlineSignal } from "../protocol/deadline-signal.js";
import type { RegistryServerItem, RegistryServerPage, ServerJson } from "./server-json.js";

/** The official MCP Registry (its OpenAPI document's server). */
export const DEFAULT_REGISTRY_URL = "https://registry.modelcontextprotocol.io";

/** How long one page may take before the registry counts as unreachable. */
const PAGE_TIMEOUT_MS = 15_000;
/** Pages followed at most: a registry whose cursor never ends must not keep a command running. */
const MAX_PAGES = 20;

/** Options of {@link RegistryClient}. */
export interface RegistryClientOptions {
  /** Base URL of the registry (without `/v0.1`). Default {@link DEFAULT_REGISTRY_URL}. */
  url?: string;
  /** For tests and embedders; default the global `fetch`. */
  fetch?: typeof fetch;
}

/** Options of {@link RegistryClient.search}. */
export interface RegistrySearchOptions {
  /** Stop after this many servers. Default 30. */
  limit?: number;
  signal?: AbortSignal;
}

/**
 * A reader of an MCP Registry's API (`GET /v0.1/servers` with `search`, `version=latest` and
 * cursor paging), for the official registry or a private one with the same API.
 *
 * @example
 * const registry = new RegistryClient();
 * const server = await registry.resolve("io.github.example/weather");
 */
export class RegistryClient {
  /** The registry's base URL, as given. */
  readonly url: string;
  private readonly fetch: typeof fetch;

  constructor(options: RegistryClientOptions = {}) {
    this.url = (options.url ?? DEFAULT_REGISTRY_URL).replace(/\/+$/, "");
    this.fetch = options.fetch ?? fetch;
    let parsed: URL;
    try {
      parsed = new URL(this.url);
    } catch (error) {
      throw new RegistryError(
        "INVALID_ARGUMENT",
        `the registry URL "${this.url}" is not a URL`,
        {
          hint: "pass --registry https://host[/path] (the part before /v0.1/servers)",
        },
        { cause: error },
      );
    }
    if (parsed.protocol !== "https:" && parsed.protocol !== "http:")
      throw new RegistryError("INVALID_ARGUMENT", `the registry URL "${this.url}" is not http(s)`, {
        hint: "pass --registry https://host[/path]",
      });
  }

  /** The latest version of each server whose name matches `words`, following the cursor. */
  async search(words: string, options: RegistrySearchOptions = {}): Promise<RegistryServerItem[]> {
    const { limit = 30, signal } = options;
    const found: RegistryServerItem[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES && found.length < limit; page++) {
      const query = new URLSearchParams({ version: "latest", limit: String(Math.min(100, limit)) });
      if (words !== "") query.set("search", words);
      if (cursor !== undefined) query.set("cursor", cursor);
      const answer = await this.page(query, signal);
      found.push(...answer.servers.filter(usable));
      cursor = answer.metadata?.nextCursor;
      if (cursor === undefined || cursor === "" || answer.servers.length === 0) break;
    }
    return found.slice(0, limit);
  }

  /**
   * The one server `name` means: the exact name, else the only server whose name ends with
   * `/name`, else the only match. None is REGISTRY_NOT_FOUND; several are REGISTRY_AMBIGUOUS,
   * listing them, since picking one would install a server the user did not choose.
   */
  async resolve(name: string, signal?: AbortSignal): Promise<ServerJson> {
    const items = await this.search(name, { limit: 500, ...(signal === undefined ? {} : { signal }) });
    const servers = items.map((item) => item.server);
    const exact = servers.filter((server) => server.name === name);
    const tail = servers.filter((server) => server.name.split("/").pop() === name);
    const chosen = exact.length > 0 ? exact : tail.length > 0 ? tail : servers;
    if (chosen.length === 1) return chosen[0]!;
    if (chosen.length === 0)
      throw new RegistryError("REGISTRY_NOT_FOUND", `no server named "${name}" in the registry ${this.url}`, {
        hint: `look for it with: mcplex search ${name.split("/").pop()}`,
      });
    const names = [...new Set(chosen.map((server) => server.name))];
    const shown =
      names.slice(0, 10).join(", ") + (names.length > 10 ? `, and ${names.length - 10} more` : "");
    throw new RegistryError("REGISTRY_AMBIGUOUS", `"${name}" matches ${names.length} servers: ${shown}`, {
      hint: `run mcplex add with the exact name, e.g. mcplex add ${names[0]}`,
    });
  }

  private async page(query: URLSearchParams, signal: AbortSignal | undefined): Promise<RegistryServerPage> {
    const deadline = deadlineSignal(PAGE_TIMEOUT_MS, signal);
    try {
      return await this.pageWithin(query, signal, deadline.signal);
    } finally {
      deadline.clear();
    }
  }

  /** One page, read whole within `within` (the caller's `signal` or the page's deadline). */
  private async pageWithin(
    query: URLSearchParams,
    signal: AbortSignal | undefined,
    within: AbortSignal,
  ): Promise<RegistryServerPage> {
    const url = `${this.url}/v0.1/servers?${query}`;
    let response: Response;
    try {
      response = await this.fetch(url, { headers: { accept: "application/json" }, signal: within });
    } catch (error) {
      signal?.throwIfAborted();
      throw new RegistryError(
        "REGISTRY_UNAVAILABLE",
        `cannot reach the registry ${this.url}`,
        {
          hint: "check the network, or pass --registry URL for another registry",
          retryable: true,
        },
        { cause: error },
      );
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new RegistryError(
        "REGISTRY_UNAVAILABLE",
        `the registry ${this.url} answered ${response.status}`,
        {
          hint: "check --registry: it is the URL before /v0.1/servers",
          retryable: response.status >= 500,
        },
      );
    }
    const body = (await response.json().catch(() => undefined)) as Partial<RegistryServerPage> | undefined;
    if (body === undefined || !Array.isArray(body.servers))
      throw new RegistryError("REGISTRY_UNAVAILABLE", `${url} did not answer with a list of servers`, {
        hint: "check --registry: it is the URL before /v0.1/servers",
      });
    return body as RegistryServerPage;
  }
}

/** The registry's own record of an entry, under its `_meta`. */
const OFFICIAL_META = "io.modelcontextprotocol.registry/official";

/**
 * An item worth showing: a named `server.json`, not one the registry marks deleted (a
 * publisher takes a server down that way; it stays listed for mirrors).
 */
function usable(item: RegistryServerItem): boolean {
  if (typeof item?.server?.name !== "string") return false;
  const official = item._meta?.[OFFICIAL_META] as { status?: unknown } | undefined;
  return official?.status !== "deleted";
}
