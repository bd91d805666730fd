import { discoverOAuthProtectedResourceMetadata } from "@modelcontextprotocol/client";
import type { ServerMetadata } from "openid-client";
import type { IdJagCredentialsConfig } from "../config/types.js";
import { McplexError } from "../errors.js";
import { scrub } from "./exchange-failure.js";
import {
  discoverExchangeProvider,
  EXCHANGE_TIMEOUT_MS,
  grantRequest,
  reasonOf,
  TOKEN_EXCHANGE_GRANT,
} from "./exchange-provider.js";
import { lifetimeOf } from "./token-lifetime.js";

/** RFC 8693 token type of an identity assertion JWT authorization grant (an ID-JAG). */
export const ID_JAG_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id-jag";
/** The RFC 7523 grant an ID-JAG is redeemed with at the server's authorization server. */
export const JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const SUBJECT_TYPES = {
  access_token: "urn:ietf:params:oauth:token-type:access_token",
  id_token: "urn:ietf:params:oauth:token-type:id_token",
} as const;
/** An ID-JAG is asked for again this long before it expires. */
const JAG_MARGIN_MS = 10_000;

/** One user's ask for a server's token, as {@link IdJagGrants.token} takes it. */
export interface IdJagAsk {
  /** The server's name, for messages. */
  server: string;
  /** The server's URL: its protected-resource metadata names its authorization server. */
  url: string;
  config: IdJagCredentialsConfig;
  /** The identity provider (its issuer, discovered as `idp`). */
  issuer: string;
  idp: ServerMetadata;
  /** What the ID-JAG is cached under: the user and everything the grant depends on. */
  key: string;
  /** The user's own token. */
  subject: string;
}

/** A token, or the refusal of one of the two steps, worded for the user. */
export type IdJagOutcome =
  | { kind: "issued"; token: string; expiresIn?: number }
  | { kind: "refused"; failure: McplexError };

/** The authorization server a server names, and the resource it is. */
interface ServerAuthorization {
  resource: string;
  metadata: ServerMetadata;
}

/**
 * Enterprise-managed authorization (SEP-990) for `credentials: { idJag }`: the user's token is
 * exchanged at their identity provider (RFC 8693) for an ID-JAG whose audience is the server's
 * authorization server and whose resource is the server; the ID-JAG is redeemed there (RFC
 * 7523 JWT-bearer grant, as `serverClientId`) for the user's access token to the server.
 *
 * - The server's authorization server is found from its protected-resource metadata (RFC 9728),
 *   once per server URL (a failed discovery is tried again next time).
 * - ID-JAGs are cached per (user, provider, server, audience) until shortly before they expire:
 *   an access token that expires is renewed with the ID-JAG still held, without asking the
 *   provider again. An ID-JAG the authorization server refuses (spent, or revoked) is dropped
 *   and one fresh ID-JAG is asked for.
 * - The caller ({@link TokenExchangeSource}) caches the access tokens, shares one flight per
 *   user and server, and remembers refusals.
 */
export class IdJagGrants {
  readonly #timeout: number;
  readonly #now: () => number;
  readonly #maxEntries: number;
  readonly #jags = new Map<string, { jag: string; renewAt: number }>();
  readonly #servers = new Map<string, Promise<ServerAuthorization>>();

  constructor(options: { timeoutMs?: number; now?: () => number; maxEntries?: number } = {}) {
    this.#timeout = options.timeoutMs ?? EXCHANGE_TIMEOUT_MS;
    this.#now = options.now ?? Date.now;
    this.#maxEntries = options.maxEntries ?? 10_000;
  }

  /**
   * The user's access token for the server, through an ID-JAG (held, or asked for now).
   *
   * @throws McplexError `TOKEN_EXCHANGE_FAILED` (retryable) when a party could not be asked.
   */
  async token(ask: IdJagAsk): Promise<IdJagOutcome> {
    const target = await this.#authorization(ask);
    const jagKey = `${ask.key}\n${JSON.stringify([target.metadata.issuer, target.resource])}`;
    const held = this.#jags.get(jagKey);
    const fresh = held === undefined || held.renewAt <= this.#now();
    if (!fresh) {
      const redeemed = await this.#redeem(ask, target, held.jag);
      // A held ID-JAG the server's authorization server no longer takes: one fresh one is asked for.
      if (redeemed.kind === "issued" || redeemed.error !== "invalid_grant")
        return outcome(ask, target, redeemed, held.jag);
      this.#jags.delete(jagKey);
    }
    const issued = await this.#askJag(ask, target);
    if (issued.kind === "refused")
      return { kind: "refused", failure: refused(ask, "idp", ask.issuer, issued, ask.subject) };
    this.#remember(jagKey, issued.token, issued.expiresIn);
    return outcome(ask, target, await this.#redeem(ask, target, issued.token), issued.token);
  }

  /**
   * Drops the ID-JAGs held for the asks whose key starts with `prefix` (a user) and, with
   * `only`, ends with it (one server's grant): signed out, or revoked by an operator.
   */
  forget(prefix: string, only?: string): void {
    for (const key of this.#jags.keys()) {
      const ask = key.slice(0, key.lastIndexOf("\n"));
      if (key.startsWith(prefix) && (only === undefined || ask.endsWith(only))) this.#jags.delete(key);
    }
  }

  #authorization(ask: IdJagAsk): Promise<ServerAuthorization> {
    let found = this.#servers.get(ask.url);
    if (found === undefined) {
      found = discoverServerAuthorization(ask.url, this.#timeout).catch((error: unknown) => {
        this.#servers.delete(ask.url);
        throw unreachable(ask, `the authorization server of ${ask.server} could not be found`, error);
      });
      this.#servers.set(ask.url, found);
    }
    return found;
  }

  /** Step one: the user's token exchanged for an ID-JAG at the identity provider. */
  async #askJag(ask: IdJagAsk, target: ServerAuthorization) {
    const { config } = ask;
    const parameters: Record<string, string> = {
      subject_token: ask.subject,
      subject_token_type: SUBJECT_TYPES[config.subjectTokenType ?? "access_token"],
      requested_token_type: ID_JAG_TOKEN_TYPE,
      audience: target.metadata.issuer,
      resource: target.resource,
    };
    if (config.scopes !== undefined && config.scopes.length > 0) parameters.scope = config.scopes.join(" ");
    let answer: Awaited<ReturnType<typeof grantRequest>>;
    try {
      answer = await grantRequest(ask.idp, config, TOKEN_EXCHANGE_GRANT, parameters, this.#timeout);
    } catch (error) {
      throw unreachable(ask, `could not ask the identity provider ${ask.issuer} for an ID-JAG`, error);
    }
    if (answer.kind === "issued" && answer.issued !== ID_JAG_TOKEN_TYPE) {
      throw unreachable(
        ask,
        `the identity provider ${ask.issuer} answered with a ${String(answer.issued ?? answer.tokenType)} token, not an ID-JAG`,
      );
    }
    return answer;
  }

  /** Step two: the ID-JAG redeemed at the server's authorization server (RFC 7523). */
  async #redeem(ask: IdJagAsk, target: ServerAuthorization, jag: string) {
    const { serverClientId, serverClientSecret, scopes } = ask.config;
    const parameters: Record<string, string> = { assertion: jag };
    if (scopes !== undefined && scopes.length > 0) parameters.scope = scopes.join(" ");
    const client = { clientId: serverClientId, clientSecret: serverClientSecret };
    try {
      return await grantRequest(target.metadata, client, JWT_BEARER_GRANT, parameters, this.#timeout);
    } catch (error) {
      const at = target.metadata.issuer;
      throw unreachable(ask, `could not redeem the ID-JAG at the authorization server ${at}`, error);
    }
  }

  #remember(key: string, jag: string, expiresIn: number | undefined): void {
    const lifetime = lifetimeOf(expiresIn, jag, this.#now());
    this.#jags.delete(key);
    if (this.#jags.size >= this.#maxEntries) {
      const oldest = this.#jags.keys().next();
      if (oldest.done !== true) this.#jags.delete(oldest.value);
    }
    this.#jags.set(key, { jag, renewAt: this.#now() + lifetime - Math.min(JAG_MARGIN_MS, lifetime / 4) });
  }
}

/** The server's protected-resource metadata, then its (first) authorization server's metadata. */
async function discoverServerAuthorization(url: string, timeoutMs: number): Promise<ServerAuthorization> {
  const resourceMetadata = await discoverOAuthProtectedResourceMetadata(url, {}, (input, init) =>
    fetch(input, { ...init, signal: AbortSignal.timeout(timeoutMs) }),
  );
  const [issuer] = resourceMetadata.authorization_servers ?? [];
  if (issuer === undefined) throw new Error("its protected-resource metadata names no authorization server");
  return { resource: resourceMetadata.resource, metadata: await discoverExchangeProvider(issuer, timeoutMs) };
}

/** The access token the redemption gave, or its refusal worded. */
function outcome(
  ask: IdJagAsk,
  target: ServerAuthorization,
  answer: Awaited<ReturnType<typeof grantRequest>>,
  jag: string,
): IdJagOutcome {
  if (answer.kind === "refused")
    return { kind: "refused", failure: refused(ask, "server", target.metadata.issuer, answer, jag) };
  if (answer.tokenType.toLowerCase() !== "bearer") {
    return {
      kind: "refused",
      failure: new McplexError(
        "TOKEN_EXCHANGE_FAILED",
        `${ask.server}: the authorization server ${target.metadata.issuer} issued a ${answer.tokenType} token for the ID-JAG, and mcplex sends bearer tokens only`,
        {
          server: ask.server,
          hint: `Ask its administrator to issue bearer tokens to the client ${ask.config.serverClientId}.`,
        },
      ),
    };
  }
  return {
    kind: "issued",
    token: answer.token,
    ...(answer.expiresIn === undefined ? {} : { expiresIn: answer.expiresIn }),
  };
}

/** A refusal, naming the step and the party that refused, without the token it was sent. */
function refused(
  ask: IdJagAsk,
  step: "idp" | "server",
  party: string,
  answer: { error: string; description?: string },
  sent: string,
): McplexError {
  const said = answer.description === undefined ? answer.error : `${answer.error}: ${answer.description}`;
  const text = scrub(scrub(said, sent), ask.subject);
  const message =
    step === "idp"
      ? `${ask.server}: the identity provider ${party} refused to issue an ID-JAG for your token: ${text}`
      : `${ask.server}: the authorization server ${party} refused the ID-JAG your identity provider issued: ${text}`;
  const hint =
    step === "idp"
      ? `Your company's identity provider decides who reaches ${ask.server}: ask its administrator to let the client ${ask.config.clientId} have ID-JAGs for it, or check credentials.idJag.clientId and clientSecret.`
      : `Check credentials.idJag.serverClientId and serverClientSecret of ${ask.server}, and that ${party} trusts ID-JAGs of ${ask.issuer}.`;
  return new McplexError("TOKEN_EXCHANGE_FAILED", message, { server: ask.server, hint });
}

function unreachable(ask: IdJagAsk, what: string, error?: unknown): McplexError {
  return new McplexError(
    "TOKEN_EXCHANGE_FAILED",
    `${ask.server}: ${what}${error === undefined ? "" : `: ${reasonOf(error)}`}`,
    {
      server: ask.server,
      retryable: true,
      hint: `Check that ${ask.url} publishes its protected-resource metadata and that its authorization server and ${ask.issuer} are reachable from mcplex.`,
    },
  );
}
