import { RegistryError } from "../errors.js";
import { deadlineSignal } from "../protocol/deadline-signal.js";
import { refused, remoteUrlProblem } from "./entry-rules.js";
import { printable } from "./registry-text.js";
import type { RegistryInput, RegistryTransport, ServerJson } from "./server-json.js";

/**
 * Reading MCP Server Cards (the MCP draft SEP-2127, `experimental-ext-server-card` at 8924e08):
 * one card by its URL, or a domain's AI Catalog at `/.well-known/ai-catalog.json` and the cards
 * it lists. A card is a remote server's `server.json` with no packages; what is read of it
 * becomes a {@link ServerJson} with only its identity and its remotes, so `mcplex add` writes it
 * through the same checks as a registry entry (`planEntry`).
 */

/** The media type of a Server Card, and of a catalog entry that lists one. */
const CARD_TYPE = "application/mcp-server-card+json";
/** The draft's catalog path on a domain. */
const CATALOG_PATH = "/.well-known/ai-catalog.json";
/** The draft's pattern of a card's `name`: `namespace/name`, one slash. */
const CARD_NAME = /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/;
/** The most a card or a catalog may weigh; past it the document is refused, unread. */
export const MAX_CARD_DOCUMENT_BYTES = 256 * 1024;
/** Cards read from one catalog at most. */
const MAX_ENTRIES = 20;
/** Remotes read from one card at most. */
const MAX_REMOTES = 8;
/** Redirects followed, within the first URL's origin. */
const MAX_REDIRECTS = 3;
const FETCH_TIMEOUT_MS = 15_000;

/** A card the catalog listed that was not read, and why. */
export interface SkippedCard {
  where: string;
  why: string;
}

/** What {@link readServerCards} found. */
export interface ServerCards {
  /** Each card as a remote-only `server.json`, with the URL it came from. */
  servers: Array<{ server: ServerJson; from: string }>;
  skipped: SkippedCard[];
}

/** Options of {@link readServerCards}. */
export interface ReadCardsOptions {
  fetch?: typeof fetch;
  signal?: AbortSignal;
}

/**
 * The URL `target` means when it is a card's or a catalog's location rather than a registry
 * name: a URL as it is; a domain (`example.com`, `localhost:8420`: a dot or `localhost`, no
 * slash) as its catalog, `https:` (`http:` for this machine, which the draft allows in
 * development). `undefined` for anything else (a registry name).
 */
export function cardTarget(target: string): string | undefined {
  if (/^https?:\/\//i.test(target)) return target;
  const domain = /^([a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(?::(\d{1,5}))?$/i.exec(target);
  if (domain === null) return undefined;
  const host = domain[1]!.toLowerCase();
  if (!host.includes(".") && host !== "localhost" && !host.startsWith("[")) return undefined;
  const local = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/.test(host);
  return `${local ? "http" : "https"}://${target.toLowerCase()}${CATALOG_PATH}`;
}

/**
 * The servers at `url`: a card, or a catalog whose card entries are read (inline, or fetched
 * from the catalog's own origin; an entry on another origin is skipped, naming it, since the
 * user vouched for this one only and may add it by its URL). Everything fetched is `https:`
 * (`http:` to this machine), at most {@link MAX_CARD_DOCUMENT_BYTES}, redirected only within
 * its origin; nothing in it is trusted beyond its form.
 */
export async function readServerCards(url: string, options: ReadCardsOptions = {}): Promise<ServerCards> {
  const document = await fetchDocument(url, options);
  const entries = (document as { entries?: unknown }).entries;
  if (!Array.isArray(entries))
    return { servers: [{ server: cardServer(document, url), from: url }], skipped: [] };
  const origin = new URL(url).origin;
  const servers: ServerCards["servers"] = [];
  const skipped: SkippedCard[] = [];
  const cards = entries.filter((e) => isObject(e) && e.type === CARD_TYPE) as Array<Record<string, unknown>>;
  if (cards.length === 0)
    throw new RegistryError(
      "REGISTRY_NOT_FOUND",
      `the AI Catalog ${printable(url)} lists no MCP Server Card`,
      {
        hint: "add the server by its card's URL, or by its name in the MCP Registry",
      },
    );
  for (const [index, entry] of cards.entries()) {
    const where = `${url} entries[${index}]`;
    if (index >= MAX_ENTRIES) {
      skipped.push({ where, why: `only the first ${MAX_ENTRIES} cards of a catalog are read` });
      continue;
    }
    if (isObject(entry.data)) {
      servers.push({ server: cardServer(entry.data, where), from: where });
      continue;
    }
    if (typeof entry.url !== "string" || !URL.canParse(entry.url, url)) {
      skipped.push({ where, why: "it has neither a card nor a card's URL" });
      continue;
    }
    const cardUrl = new URL(entry.url, url).href;
    if (new URL(cardUrl).origin !== origin) {
      skipped.push({
        where,
        why: `its card is on another origin (${new URL(cardUrl).origin}); if you trust it: mcplex add ${cardUrl}`,
      });
      continue;
    }
    servers.push({ server: cardServer(await fetchDocument(cardUrl, options), cardUrl), from: cardUrl });
  }
  return { servers, skipped };
}

/**
 * A card as a remote-only `server.json`: its `name` (the draft's `namespace/name`), version,
 * title, description and remotes (`streamable-http` and `sse`). Whatever else it carries
 * (`packages`, a `command`, `env`, `_meta`) is not read: a card describes a remote server.
 */
export function cardServer(card: Record<string, unknown>, where: string): ServerJson {
  const name = card.name;
  if (typeof name !== "string" || name.length > 200 || !CARD_NAME.test(name))
    throw refused(
      typeof name === "string" ? name : where,
      "name",
      typeof name === "string" ? name : String(name),
      "a Server Card's name is namespace/name (letters, digits, . - _, one slash)",
    );
  const server: ServerJson = { name };
  for (const key of ["version", "title", "description"] as const) {
    const value = card[key];
    if (typeof value === "string") server[key] = value.slice(0, key === "version" ? 255 : 300);
  }
  const remotes = Array.isArray(card.remotes) ? card.remotes : [];
  server.remotes = remotes
    .slice(0, MAX_REMOTES)
    .filter(
      (r): r is Record<string, unknown> => isObject(r) && (r.type === "streamable-http" || r.type === "sse"),
    )
    .map(remoteOf);
  if (server.remotes.length === 0)
    throw new RegistryError("RUNTIME_MISSING", `${printable(name)}: its Server Card names no HTTP endpoint`, {
      hint: "a card names its server's streamable-http or sse URL under remotes; ask its publisher",
    });
  return server;
}

/** A remote of a card, its inputs as the registry's (the same shape in the draft). */
function remoteOf(remote: Record<string, unknown>): RegistryTransport {
  const out: RegistryTransport = { type: String(remote.type) };
  if (typeof remote.url === "string") out.url = remote.url;
  if (Array.isArray(remote.headers)) out.headers = remote.headers.filter(isObject) as RegistryInput[];
  if (isObject(remote.variables)) out.variables = remote.variables as Record<string, RegistryInput>;
  return out;
}

/** A JSON object from `url`, under the rules of {@link readServerCards}. */
async function fetchDocument(url: string, options: ReadCardsOptions): Promise<Record<string, unknown>> {
  const first = checkedUrl(url, url);
  const deadline = deadlineSignal(FETCH_TIMEOUT_MS, options.signal);
  try {
    let at = first;
    for (let hop = 0; ; hop++) {
      const response = await (options.fetch ?? fetch)(at, {
        headers: { accept: `${CARD_TYPE}, application/ai-catalog+json, application/json` },
        redirect: "manual",
        signal: deadline.signal,
      }).catch((error: unknown) => {
        options.signal?.throwIfAborted();
        throw new RegistryError(
          "REGISTRY_UNAVAILABLE",
          `cannot read ${printable(at)}`,
          { hint: "check the URL or domain and the network", retryable: true },
          { cause: error },
        );
      });
      const location = response.headers.get("location");
      if (response.status >= 300 && response.status < 400 && location !== null) {
        await response.body?.cancel();
        const next = new URL(location, at).href;
        if (hop >= MAX_REDIRECTS || new URL(next).origin !== new URL(first).origin)
          throw new RegistryError(
            "REGISTRY_ENTRY_REFUSED",
            `${printable(at)} redirects to ${printable(next)}`,
            {
              hint: "only redirects within the same origin are followed; add the card by its final URL if you trust it",
            },
          );
        at = next;
        continue;
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new RegistryError("REGISTRY_UNAVAILABLE", `${printable(at)} answered ${response.status}`, {
          hint: "check the URL or domain: a domain publishes its catalog at /.well-known/ai-catalog.json",
          retryable: response.status >= 500,
        });
      }
      const parsed = parseObject(await boundedText(response, at));
      if (parsed === undefined)
        throw new RegistryError("REGISTRY_ENTRY_REFUSED", `${printable(at)} is not a JSON object`, {
          hint: "a Server Card and an AI Catalog are JSON objects",
        });
      return parsed;
    }
  } finally {
    deadline.clear();
  }
}

/** `url` if mcplex may fetch it (`https:`, `http:` to this machine, no credentials in it). */
function checkedUrl(url: string, where: string): string {
  const problem = remoteUrlProblem(url);
  if (problem !== undefined) throw refused(where, "url", url, problem);
  return new URL(url).href;
}

/** The body as text, refused past {@link MAX_CARD_DOCUMENT_BYTES} without reading the rest. */
async function boundedText(response: Response, url: string): Promise<string> {
  const declared = Number(response.headers.get("content-length") ?? "0");
  const tooLarge = () =>
    new RegistryError(
      "REGISTRY_ENTRY_REFUSED",
      `${printable(url)} is larger than ${MAX_CARD_DOCUMENT_BYTES} bytes`,
      { hint: "a Server Card or an AI Catalog is a small document; this one is not read" },
    );
  if (declared > MAX_CARD_DOCUMENT_BYTES) {
    await response.body?.cancel();
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body?.getReader();
  if (reader === undefined) return "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_CARD_DOCUMENT_BYTES) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
