import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Gateway } from "../gateway/gateway.js";
import { servedExtensions } from "../gateway/methods/discover.js";
import { REV2025_PROTOCOL_VERSIONS } from "../protocol/rev2025.js";
import { SUPPORTED_PROTOCOL_VERSIONS } from "../protocol/revisions.js";
import type { Authenticator } from "./authenticator.js";

/**
 * Server Cards as the MCP working group's draft (SEP-2127, the `experimental-ext-server-card`
 * repository at 8924e08, 2026-07-24) has them: one card for the gateway's endpoint at
 * `<streamable-http-url>/server-card`, and the domain's AI Catalog, which lists it, at
 * `/.well-known/ai-catalog.json`. Both public, read-only, and built from the live catalog once
 * per change of it, not per request.
 */

/** The card's path: the draft reserves `/server-card` under the streamable-HTTP endpoint. */
export const SERVER_CARD_PATH = "/mcp/server-card";
/** The domain-level catalog's well-known path. */
export const AI_CATALOG_PATH = "/.well-known/ai-catalog.json";
/** The media types the draft names for a card and for a catalog. */
export const SERVER_CARD_TYPE = "application/mcp-server-card+json";
export const AI_CATALOG_TYPE = "application/ai-catalog+json";
/** The card schema the draft's documents name (`$schema`). */
export const SERVER_CARD_SCHEMA = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";
/** The key of mcplex's own facts under the card's `_meta` (the draft's extension point). */
export const CARD_META_KEY = "mcplex/gateway";
/**
 * The most a card may weigh. Its fields are the gateway's own and few; the extension names are
 * the one part that grows with the catalog, so they are capped too ({@link MAX_EXTENSIONS}).
 */
export const MAX_CARD_BYTES = 8 * 1024;
const MAX_EXTENSIONS = 16;
/** Cards change when the config is reloaded: a client revalidates (ETag) after five minutes. */
const CACHE_CONTROL = "public, max-age=300";
const CORS = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET",
  "access-control-allow-headers": "Content-Type, If-None-Match",
  "access-control-expose-headers": "ETag",
  "x-content-type-options": "nosniff",
};

/** What the cards are built from besides the gateway: the front's endpoints and who may call it. */
export interface ServerCardsOptions {
  gateway: Gateway;
  /** Decides who calls; its protected-resource metadata (sign-in) names the public URL. */
  authenticator?: Authenticator;
  /** Whether callers must present a credential (then the card shows what anonymous callers know). */
  authenticated: () => boolean;
  /** The profile of callers that present no profile-bound credential. */
  profile: string | undefined;
  /** Served at /sse and /ws besides /mcp. */
  sse: boolean;
  websocket: boolean;
}

interface Built {
  key: string;
  card: Document;
  catalog: Document;
}

interface Document {
  body: string;
  etag: string;
}

/**
 * The card and the catalog of one HTTP front. The public URL they name is `auth.resource` (as
 * the protected-resource metadata names it), else the address the front is bound to; never a
 * request's `Host`. With the front bound to an unspecified address (`0.0.0.0`) and no
 * `auth.resource`, the card names no endpoint and the catalog carries it inline.
 */
export class ServerCards {
  readonly #options: ServerCardsOptions;
  #bound: string | undefined;
  #built: Built | undefined;

  constructor(options: ServerCardsOptions) {
    this.#options = options;
  }

  /** Told once the front listens: its origin (`http://127.0.0.1:8420`). */
  bound(host: string, port: number): void {
    if (host === "0.0.0.0" || host === "::" || host === "") return;
    const literal = host.includes(":") ? `[${host}]` : host;
    this.#bound = `http://${literal}:${port}`;
  }

  /** Whether `path` is the card's or the catalog's. */
  owns(path: string): boolean {
    return path === SERVER_CARD_PATH || path === AI_CATALOG_PATH;
  }

  /** Answers a request for the card or the catalog (GET, HEAD, OPTIONS; `If-None-Match`). */
  handle(req: IncomingMessage, res: ServerResponse, path: string): void {
    if (req.method === "OPTIONS") {
      res.writeHead(204, CORS).end();
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      const text = JSON.stringify({ error: "use GET" });
      res.writeHead(405, { ...CORS, allow: "GET", "content-type": "application/json" }).end(text);
      return;
    }
    const built = this.current();
    const [document, type] =
      path === SERVER_CARD_PATH ? [built.card, SERVER_CARD_TYPE] : [built.catalog, AI_CATALOG_TYPE];
    const headers = { ...CORS, "cache-control": CACHE_CONTROL, etag: document.etag };
    if (matches(req.headers["if-none-match"], document.etag)) {
      res.writeHead(304, headers).end();
      return;
    }
    res.writeHead(200, {
      ...headers,
      "content-type": type,
      "content-length": Buffer.byteLength(document.body),
    });
    res.end(req.method === "HEAD" ? undefined : document.body);
  }

  /** The card and catalog now, built again only when the catalog, the sign-in or the URL changed. */
  current(): Built {
    const base = this.#publicBase();
    const authenticated = this.#options.authenticated();
    const key = `${this.#options.gateway.hub.catalog.revision}|${authenticated}|${base ?? ""}`;
    if (this.#built?.key === key) return this.#built;
    const card = this.#card(base, authenticated);
    const catalog = catalogOf(base, card);
    this.#built = { key, card: documentOf(card), catalog: documentOf(catalog) };
    return this.#built;
  }

  #card(base: string | undefined, authenticated: boolean): Record<string, unknown> {
    const { gateway, profile } = this.#options;
    const identity = gateway.identity;
    const metadata = this.#resourceMetadata();
    const remotes: Record<string, unknown>[] = [];
    const auth = authenticated ? [authorizationHeader(metadata !== undefined)] : undefined;
    if (base !== undefined) {
      remotes.push(remote("streamable-http", `${base}/mcp`, SUPPORTED_PROTOCOL_VERSIONS, auth));
      if (this.#options.sse) remotes.push(remote("sse", `${base}/sse`, REV2025_PROTOCOL_VERSIONS, auth));
    }
    const own: Record<string, unknown> = {};
    if (base !== undefined && this.#options.websocket) own.websocket = `${base.replace(/^http/, "ws")}/ws`;
    if (metadata !== undefined) own.signIn = { resourceMetadata: metadata };
    // What an anonymous caller may know: with a credential required, it reaches no server.
    const extensions = authenticated ? undefined : servedExtensions(gateway.hub.catalog, profile);
    if (extensions !== undefined)
      own.extensions = Object.keys(extensions)
        .slice(0, MAX_EXTENSIONS)
        .map((name) => name.slice(0, 100));
    const card: Record<string, unknown> = {
      $schema: SERVER_CARD_SCHEMA,
      name: cardName(base, identity.name),
      version: identity.version.slice(0, 255) || "0",
      title: identity.name.slice(0, 100) || "mcplex",
      description: "MCP servers served as one endpoint by an mcplex gateway",
    };
    if (remotes.length > 0) card.remotes = remotes;
    if (Object.keys(own).length > 0) card._meta = { [CARD_META_KEY]: own };
    return card;
  }

  /**
   * The gateway's public URL, without `/mcp`: the one its protected-resource metadata names
   * (`auth.resource`, else the bound origin), else the bound origin.
   */
  #publicBase(): string | undefined {
    const resource = this.#resource();
    return resource === undefined ? this.#bound : resource.replace(/\/mcp$/, "");
  }

  #resource(): string | undefined {
    const document = this.#options.authenticator?.wellKnown?.("oauth-protected-resource", "/mcp", {
      headers: {},
      remoteAddress: undefined,
      path: "/mcp",
    });
    const resource = document?.resource;
    return typeof resource === "string" ? resource : undefined;
  }

  /** Where a signed-in gateway's protected-resource metadata of `/mcp` is, if it has any. */
  #resourceMetadata(): string | undefined {
    const resource = this.#resource();
    if (resource === undefined) return undefined;
    return `${resource.replace(/\/mcp$/, "")}/.well-known/oauth-protected-resource/mcp`;
  }
}

function remote(
  type: "streamable-http" | "sse",
  url: string,
  versions: readonly string[],
  headers: Record<string, unknown>[] | undefined,
): Record<string, unknown> {
  return {
    type,
    url,
    supportedProtocolVersions: [...versions],
    ...(headers === undefined ? {} : { headers }),
  };
}

/** The credential a caller must send, as the draft describes an input the client asks for. */
function authorizationHeader(signIn: boolean): Record<string, unknown> {
  const token = signIn
    ? "An access token from this gateway's sign-in (its protected-resource metadata names the issuers)"
    : "A bearer token this gateway accepts";
  return {
    name: "Authorization",
    description: "Bearer token",
    isRequired: true,
    isSecret: true,
    value: "Bearer {token}",
    variables: { token: { description: token, isRequired: true, isSecret: true } },
  };
}

/**
 * The card's `name` in the draft's form `namespace/name`: the host's labels reversed
 * (`mcp.example.com` → `com.example.mcp`; an address as it is), then the gateway's name.
 */
function cardName(base: string | undefined, name: string): string {
  const host = base === undefined ? "localhost" : new URL(base).hostname.replace(/^\[|\]$/g, "");
  const address = /^[\d.]+$/.test(host) || host.includes(":");
  const namespace = address ? host.replace(/:/g, "-") : host.split(".").reverse().join(".");
  const tail = name.replace(/[^A-Za-z0-9._-]/g, "-").slice(0, 100) || "mcplex";
  return `${namespace.replace(/[^A-Za-z0-9.-]/g, "-")}/${tail}`;
}

/** The AI Catalog of this domain: one entry, the card by URL (inline when no URL is known). */
function catalogOf(base: string | undefined, card: Record<string, unknown>): Record<string, unknown> {
  const host = base === undefined ? "localhost" : new URL(base).hostname.replace(/^\[|\]$/g, "");
  const tail = String(card.name).split("/")[1];
  const entry: Record<string, unknown> = {
    identifier: `urn:air:${host.replace(/:/g, "-")}:mcp:${tail}`,
    type: SERVER_CARD_TYPE,
  };
  if (base !== undefined) entry.url = `${base}${SERVER_CARD_PATH}`;
  else entry.data = card;
  return { specVersion: "1.0", entries: [entry] };
}

function documentOf(value: Record<string, unknown>): Document {
  const body = JSON.stringify(value);
  const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`;
  return { body, etag };
}

/** Whether an `If-None-Match` value names `etag` (or `*`). */
function matches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header
    .split(",")
    .map((tag) => tag.trim().replace(/^W\//, ""))
    .some((tag) => tag === etag || tag === "*");
}
