import type { AuthConfig } from "../config/types.js";
import type { AuthRequest } from "../fronts/authenticator.js";

/** The endpoints a resource URL is published for, each with its own metadata (RFC 9728 §3.1). */
export const ENDPOINTS = ["/mcp", "/sse", "/ws"] as const;

/**
 * The URLs the gateway is reached at, without an endpoint: `auth.resource`, else the origins the
 * HTTP front is bound to (see {@link ResourceUrls.bound}); never taken from a request. From them:
 * the audiences a token may name, the resource URL and metadata URL named to a client, and what
 * a DPoP proof's `htu` must be.
 */
export class ResourceUrls {
  readonly #resource: string | undefined;
  readonly #extra: readonly string[];
  #bases: readonly string[];
  #audiences: ReadonlySet<string>;

  constructor(config: Pick<AuthConfig, "resource" | "audience">) {
    this.#resource = config.resource;
    this.#extra = config.audience ?? [];
    this.#bases = config.resource === undefined ? [] : [config.resource];
    this.#audiences = audiencesOf(this.#bases, this.#extra);
  }

  /** The `aud` values a token may name: each base, its endpoints, and `auth.audience`. */
  get audiences(): ReadonlySet<string> {
    return this.#audiences;
  }

  /**
   * Where the HTTP front listens: without `auth.resource`, these become the bases. Returns
   * whether they did (what was verified for other audiences must be checked again).
   */
  bound(origins: readonly string[]): boolean {
    if (this.#resource !== undefined) return false;
    this.#bases = [...origins];
    this.#audiences = audiencesOf(this.#bases, this.#extra);
    return true;
  }

  /**
   * The resource URL to name to this request's client: of the accepted bases, the one its Host
   * names (so a client that came by `localhost` is told `localhost`), else the first. It names
   * only URLs whose tokens are accepted; the Host only picks which.
   */
  base(request: AuthRequest): string {
    const bases = this.#bases;
    if (bases.length > 1) {
      const host = request.headers.host?.toLowerCase();
      const named = bases.find((base) => base === `http://${host}`);
      if (named !== undefined) return named;
    }
    return bases[0] ?? "http://127.0.0.1";
  }

  /** Where the metadata of the endpoint a request went to is published. */
  metadataUrl(request: AuthRequest): string {
    return `${this.base(request)}/.well-known/oauth-protected-resource${endpointOf(request.path)}`;
  }
}

/** The `aud` values accepted for the resource at `bases`: each, each endpoint of it, and `extra`. */
function audiencesOf(bases: readonly string[], extra: readonly string[]): ReadonlySet<string> {
  return new Set([
    ...bases.flatMap((base) => [base, `${base}/`, ...ENDPOINTS.map((e) => `${base}${e}`)]),
    ...extra,
  ]);
}

/** Which resource a path belongs to: `/mcp`, `/sse` (with its `/messages`), `/ws`, or the server (""). */
function endpointOf(path: string | undefined): string {
  if (path === "/mcp" || path === "/sse" || path === "/ws") return path;
  if (path === "/messages") return "/sse";
  return "";
}
