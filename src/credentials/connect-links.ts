import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from "node:crypto";
import { McplexError } from "../errors.js";
import type { UserRef } from "./user-credentials.js";

/** How long a connect link works: long enough to sign in at a provider, short enough to be useless when leaked later. */
export const CONNECT_LINK_MS = 10 * 60_000;
const MAC_BYTES = 16;

/** Who a connect link was made for, as its ticket says. */
export interface ConnectTicket {
  /** {@link UserRef.key}: the vault record the browser's connect is stored under. */
  readonly user: string;
  /** The user's `sub`, to greet them on the page once the browser has signed in as them. */
  readonly subject: string;
  /** The issuer that vouched for the user: where the page signs the browser in. */
  readonly issuer?: string;
  readonly server: string;
  /** Expiry, ms since the epoch. */
  readonly expires: number;
  /** Random, so that two links for the same (user, server) differ. */
  readonly nonce: string;
}

/** Options of {@link ConnectLinks}. */
export interface ConnectLinksOptions {
  /**
   * Where the gateway's pages are, as the user's browser reaches them: `auth.resource`'s origin,
   * else the HTTP front's address. A function, as the front's port is known only once it listens.
   */
  base: string | (() => string);
  /**
   * What tickets are signed with: the cluster secret (every replica takes every replica's links),
   * else a key made at start (links die with the process).
   */
  secret?: string;
  /** Default {@link CONNECT_LINK_MS}. */
  ttlMs?: number;
  /** The clock, for tests. */
  now?: () => number;
  /**
   * Claims a key once across replicas (`ClusterLink.claimState`): `false` when any replica
   * claimed it before. Without it, a link is used once in this process.
   */
  claim?: (key: string, ttlMs: number) => Promise<boolean>;
}

/** The steps of a link that each happen once: its user signed in through it, and what it connects was stored. */
export type LinkStep = "signed-in" | "stored";

/**
 * Makes and checks the links a user opens to connect a per-user server:
 * `<base>/connect/<server>?ticket=<signed>`. The ticket (HMAC-SHA256, 10 minutes) names the
 * user it was made for; the page stores nothing before the browser has signed in as that user
 * (`ConnectSignIn`), and each link is used once ({@link use}, on every replica). Also seals what an OAuth redirect must bring back (the `state`:
 * the user, the PKCE verifier), encrypted, so any replica can finish a connect another began.
 *
 * @example
 * const links = new ConnectLinks({ base: "https://mcp.example.com", secret });
 * throw new ConnectRequiredError("github", links.connectUrl(user, "github"));
 */
export class ConnectLinks {
  readonly #base: () => string;
  readonly #macKey: Buffer;
  readonly #sealKey: Buffer;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #claim: ((key: string, ttlMs: number) => Promise<boolean>) | undefined;
  /** The link steps taken in this process, by key, with their expiry. */
  readonly #used = new Map<string, number>();

  constructor(options: ConnectLinksOptions) {
    const { base } = options;
    this.#base = typeof base === "string" ? () => base : base;
    const secret = options.secret ?? randomBytes(32).toString("base64url");
    const derive = (purpose: string) =>
      Buffer.from(hkdfSync("sha256", secret, "mcplex-connect", purpose, 32));
    this.#macKey = derive("connect-ticket");
    this.#sealKey = derive("connect-state");
    this.#ttlMs = options.ttlMs ?? CONNECT_LINK_MS;
    this.#now = options.now ?? Date.now;
    this.#claim = options.claim;
  }

  /** The gateway's origin (and path prefix) the links point at, without a trailing slash. */
  get base(): string {
    return this.#base().replace(/\/+$/, "");
  }

  /** The page that connects `server` for `user`, valid for ten minutes. */
  connectUrl(user: UserRef, server: string): string {
    const ticket: ConnectTicket = {
      user: user.key,
      subject: user.subject,
      ...(user.issuer === undefined ? {} : { issuer: user.issuer }),
      server,
      expires: this.#now() + this.#ttlMs,
      nonce: randomBytes(9).toString("base64url"),
    };
    const body = Buffer.from(JSON.stringify(ticket)).toString("base64url");
    const signed = `${body}.${this.#mac(body).toString("base64url")}`;
    return `${this.base}/connect/${encodeURIComponent(server)}?ticket=${signed}`;
  }

  /** Where the authorization server sends the browser back for `server`. */
  callbackUrl(server: string): string {
    return `${this.base}/connect/${encodeURIComponent(server)}/callback`;
  }

  /**
   * The ticket of a link opened for `server`.
   *
   * @throws McplexError `INVALID_ARGUMENT` when it was not made here, was changed, is for another
   *   server, or has expired: the page says to call the tool again for a fresh link.
   */
  check(ticket: string | null | undefined, server: string): ConnectTicket {
    const [body, given] = (ticket ?? "").split(".");
    if (body === undefined || given === undefined || body === "" || !this.#matches(body, given))
      throw linkProblem("this connect link is not valid (it was changed, or made by another gateway)");
    let parsed: ConnectTicket;
    try {
      parsed = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as ConnectTicket;
    } catch {
      throw linkProblem("this connect link is not valid");
    }
    if (parsed.server !== server) throw linkProblem(`this connect link is for another server than ${server}`);
    if (!(parsed.expires > this.#now())) throw linkProblem("this connect link has expired");
    return parsed;
  }

  /**
   * Takes `step` of the link `ticket` came from, once: `false` when it was taken before, here or
   * (with `claim`) on any replica. A link whose user signed in is used: opened again, by anyone,
   * it is refused; and what it connects is stored once.
   */
  async use(ticket: ConnectTicket, step: LinkStep): Promise<boolean> {
    const now = this.#now();
    for (const [key, expires] of this.#used) if (!(expires > now)) this.#used.delete(key);
    const key = `connect-link:${step}:${ticket.server}:${ticket.nonce}`;
    if (this.#used.has(key)) return false;
    this.#used.set(key, ticket.expires);
    // Kept past the ticket's expiry by a minute: an expired ticket is refused anyway.
    return this.#claim === undefined ? true : this.#claim(key, Math.max(0, ticket.expires - now) + 60_000);
  }

  /** `data` encrypted and authenticated (AES-256-GCM), base64url, for a `state` parameter. */
  seal(data: object): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.#sealKey, iv);
    const body = Buffer.concat([cipher.update(JSON.stringify(data), "utf8"), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
  }

  /** What {@link seal} sealed, or `undefined` when `sealed` was not made here or was changed. */
  open<T>(sealed: string | null | undefined): T | undefined {
    const raw = Buffer.from(sealed ?? "", "base64url");
    // Only the one spelling seal() writes: another that decodes to the same bytes is not ours.
    if (raw.length < 29 || raw.toString("base64url") !== sealed) return undefined;
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.#sealKey, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
      return JSON.parse(text) as T;
    } catch {
      return undefined;
    }
  }

  /** The current time, by the links' clock. */
  now(): number {
    return this.#now();
  }

  #mac(body: string): Buffer {
    return createHmac("sha256", this.#macKey).update(body).digest().subarray(0, MAC_BYTES);
  }

  #matches(body: string, given: string): boolean {
    const expected = this.#mac(body);
    const actual = Buffer.from(given, "base64url");
    if (actual.toString("base64url") !== given) return false;
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  }
}

function linkProblem(problem: string): McplexError {
  return new McplexError("INVALID_ARGUMENT", `${problem}; call the tool again for a fresh link`, {
    hint: "Links to connect a server work for ten minutes, for the user and server they were made for.",
  });
}
