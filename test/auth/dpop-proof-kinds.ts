/**
 * The forged, replayed and mismatched DPoP proofs of dpop-proofs.hostile.test.ts, one maker per
 * kind: each is one request that must be refused, sometimes after a valid one (the proof it
 * replays). A maker draws its variations (how far off a time is, which wrong URL, which byte is
 * altered) from the run's seeded random source. Proofs are signed with `jose`, as the SDK signs
 * them, by keys the test holds; tokens are minted with the test issuer's key, bound by `cnf.jkt`.
 */
import { createHash, randomBytes } from "node:crypto";
import { base64url, type CryptoKey, type JWK, SignJWT } from "jose";

/** Where a shot goes: a 2026 POST to /mcp, the /ws upgrade, or a POST to an SSE session's /messages. */
export type Entry = "mcp" | "ws" | "messages";

/** A key pair a proof can be signed with, and its thumbprint. */
export interface ProofKey {
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
  /** The private JWK (for the kind that leaks it in the header). */
  readonly privateJwk: JWK;
  readonly alg: string;
  readonly jkt: string;
}

/** What the proofs are made from. */
export interface ProofContext {
  readonly random: () => number;
  /** `auth.resource` of both replicas: what `htu` names (the replicas are reached on loopback). */
  readonly resource: string;
  /** The replicas' own origins (`http://127.0.0.1:<port>`), which `htu` must not name. */
  readonly origins: readonly [string, string];
  /** The key the tokens are bound to. */
  readonly key: ProofKey;
  /** Another EC key, and an RSA one (for the kinds whose key does not fit). */
  readonly otherKey: ProofKey;
  readonly rsaKey: ProofKey;
  /** Bound to {@link key}. */
  readonly token: string;
  /** Another token bound to {@link key} (a proof's `ath` for it, presented with {@link token}). */
  readonly otherToken: string;
  /** Not bound to any key. */
  readonly unbound: string;
  /** The current nonce (the last `DPoP-Nonce` the replicas handed out). */
  nonce(): string;
  /** `auth.dpop.window` and `auth.clockTolerance`, in seconds. */
  readonly windowS: number;
  readonly toleranceS: number;
}

/** One request: where, which replica, the credential headers. */
export interface Shot {
  readonly entry: Entry;
  readonly replica: 0 | 1;
  readonly headers: Readonly<Record<string, string | readonly string[]>>;
}

/** One hostile attempt: valid shots first (they run), then the one that must be refused. */
export interface Attempt {
  readonly before: readonly Shot[];
  readonly shot: Shot;
}

/** One kind of hostile proof. */
export interface ProofKind {
  readonly kind: string;
  /** What the refusal says: the check the kind aims at refused it. */
  readonly refusal: RegExp;
  /** The challenge's `error`. */
  readonly error: "invalid_dpop_proof" | "use_dpop_nonce" | "invalid_token" | "invalid_request";
  make(ctx: ProofContext, entry: Entry): Promise<Attempt>;
}

/** The method and path of an entry's request. */
export function requestOf(entry: Entry): { method: "GET" | "POST"; path: string } {
  if (entry === "ws") return { method: "GET", path: "/ws" };
  return { method: "POST", path: entry === "mcp" ? "/mcp" : "/messages" };
}

/** How a proof differs from a valid one; `null` drops a claim. */
interface ProofOptions {
  htm?: string;
  htu?: string;
  iat?: number | null;
  jti?: string | null;
  ath?: string | null;
  nonce?: string | null;
  key?: ProofKey;
  /** The `jwk` header (default the key's public JWK); `null` drops it. */
  jwk?: Record<string, unknown> | null;
  typ?: string;
  /** The token the `ath` is of (default `ctx.token`). */
  accessToken?: string;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("base64url");

/** A proof for `entry` at the resource, valid unless `options` say otherwise. */
export async function proofFor(ctx: ProofContext, entry: Entry, options: ProofOptions = {}): Promise<string> {
  const { method, path } = requestOf(entry);
  const key = options.key ?? ctx.key;
  const claims: Record<string, unknown> = {
    jti: base64url.encode(randomBytes(16)),
    htm: method,
    htu: `${ctx.resource}${path}`,
    iat: Math.floor(Date.now() / 1000),
    ath: sha256(options.accessToken ?? ctx.token),
    nonce: ctx.nonce(),
  };
  for (const name of ["htm", "htu", "iat", "jti", "ath", "nonce"] as const) {
    const value = options[name];
    if (value === null) delete claims[name];
    else if (value !== undefined) claims[name] = value;
  }
  const header: Record<string, unknown> = { alg: key.alg, typ: options.typ ?? "dpop+jwt" };
  if (options.jwk !== null) header.jwk = options.jwk ?? key.publicJwk;
  return new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(key.privateKey);
}

/** `Authorization: DPoP <token>` with `proof`. */
function dpop(token: string, proof: string | readonly string[]): Record<string, string | readonly string[]> {
  return { authorization: `DPoP ${token}`, dpop: proof };
}

const pick = <T>(ctx: ProofContext, items: readonly T[]): T =>
  items[Math.floor(ctx.random() * items.length)]!;
const replica = (ctx: ProofContext): 0 | 1 => (ctx.random() < 0.5 ? 0 : 1);
const between = (ctx: ProofContext, low: number, high: number) =>
  Math.floor(low + ctx.random() * (high - low));

/** A kind that is one refused request with the proof `options` make. */
function single(
  kind: string,
  refusal: RegExp,
  error: ProofKind["error"],
  options: (ctx: ProofContext, entry: Entry) => ProofOptions | Promise<ProofOptions>,
): ProofKind {
  return headersOnly(kind, refusal, error, async (ctx, entry) =>
    dpop(ctx.token, await proofFor(ctx, entry, await options(ctx, entry))),
  );
}

/** A kind whose one refused request carries `headers`. */
function headersOnly(
  kind: string,
  refusal: RegExp,
  error: ProofKind["error"],
  headers: (ctx: ProofContext, entry: Entry) => Promise<Record<string, string | readonly string[]>>,
): ProofKind {
  return {
    kind,
    refusal,
    error,
    async make(ctx, entry) {
      return { before: [], shot: { entry, replica: replica(ctx), headers: await headers(ctx, entry) } };
    },
  };
}

/** A valid proof, sent once to one replica (it runs), then again to `again`'s replica. */
function replay(kind: string, again: "same" | "other"): ProofKind {
  return {
    kind,
    refusal: /used before/,
    error: "invalid_dpop_proof",
    async make(ctx, entry) {
      const first = replica(ctx);
      const headers = dpop(ctx.token, await proofFor(ctx, entry));
      const second = again === "same" ? first : ((1 - first) as 0 | 1);
      return { before: [{ entry, replica: first, headers }], shot: { entry, replica: second, headers } };
    },
  };
}

const IAT_PAST = (ctx: ProofContext) => Math.floor(Date.now() / 1000) - ctx.windowS - ctx.toleranceS;
const IAT_FUTURE = (ctx: ProofContext) => Math.floor(Date.now() / 1000) + ctx.toleranceS;

/** Every kind, in the order the run cycles through them. */
export const PROOF_KINDS: readonly ProofKind[] = [
  single("wrong htm", /htm/, "invalid_dpop_proof", (ctx, entry) => ({
    htm: pick(ctx, entry === "ws" ? ["POST", "PUT", "DELETE"] : ["GET", "PUT", "DELETE", "PATCH"]),
  })),
  single("htm in lower case", /htm/, "invalid_dpop_proof", (_ctx, entry) => ({
    htm: requestOf(entry).method.toLowerCase(),
  })),
  single("htu of another endpoint", /htu/, "invalid_dpop_proof", (ctx, entry) => ({
    htu: `${ctx.resource}${pick(
      ctx,
      ["/mcp", "/sse", "/ws", "/messages", "/dashboard/state", "/"].filter(
        (p) => p !== requestOf(entry).path,
      ),
    )}`,
  })),
  single(
    "htu naming the replica's own address, not auth.resource",
    /htu/,
    "invalid_dpop_proof",
    (ctx, entry) => ({
      htu: `${pick(ctx, ctx.origins)}${requestOf(entry).path}`,
    }),
  ),
  single("htu of another host", /htu/, "invalid_dpop_proof", (ctx, entry) => {
    const url = new URL(ctx.resource);
    const host = pick(ctx, [
      "evil.example",
      `${url.hostname}.evil.example`,
      `evil-${url.hostname}`,
      `${url.hostname}:8443`,
    ]);
    return { htu: `${pick(ctx, ["http", "https"])}://${host}${requestOf(entry).path}` };
  }),
  single("htu of another scheme", /htu/, "invalid_dpop_proof", (ctx, entry) => ({
    htu: `${ctx.resource.replace(/^http:/, pick(ctx, ["https:", "wss:", "ftp:"]))}${requestOf(entry).path}`,
  })),
  single("htu with the path moved into its query or fragment", /htu/, "invalid_dpop_proof", (ctx, entry) => {
    const path = requestOf(entry).path;
    return {
      htu: pick(ctx, [`${ctx.resource}/?${path}`, `${ctx.resource}/#${path}`, `${ctx.resource}/x?p=${path}`]),
    };
  }),
  single("htu with user info", /htu/, "invalid_dpop_proof", (ctx, entry) => ({
    htu: `${ctx.resource.replace("://", "://user:pass@")}${requestOf(entry).path}`,
  })),
  single("htu that is not a URL", /htu/, "invalid_dpop_proof", (ctx) => ({
    htu: pick(ctx, ["mcp", "/mcp", "", "http//x", `${ctx.resource}/${"x".repeat(2100)}`]),
  })),
  single("iat too old", /too old/, "invalid_dpop_proof", (ctx) => ({
    iat: IAT_PAST(ctx) - between(ctx, 5, 86_400),
  })),
  single("iat in the future", /future/, "invalid_dpop_proof", (ctx) => ({
    iat: IAT_FUTURE(ctx) + between(ctx, 5, 86_400),
  })),
  single("no iat, or one that is not a number", /iat/, "invalid_dpop_proof", (ctx) => ({
    iat: pick(ctx, [null, `${Math.floor(Date.now() / 1000)}`]) as number | null,
  })),
  single("no jti", /jti/, "invalid_dpop_proof", () => ({ jti: null })),
  single("an empty or oversized jti", /jti/, "invalid_dpop_proof", (ctx) => ({
    jti: pick(ctx, ["", "j".repeat(257), "j".repeat(between(ctx, 300, 1500))]),
  })),
  replay("replayed at the same replica", "same"),
  replay("replayed at the other replica (through Redis)", "other"),
  {
    kind: "a new proof reusing a spent jti",
    refusal: /used before/,
    error: "invalid_dpop_proof",
    async make(ctx, entry) {
      const jti = base64url.encode(randomBytes(16));
      const first = await proofFor(ctx, entry, { jti });
      const second = await proofFor(ctx, entry, { jti, iat: Math.floor(Date.now() / 1000) - 1 });
      return {
        before: [{ entry, replica: replica(ctx), headers: dpop(ctx.token, first) }],
        shot: { entry, replica: replica(ctx), headers: dpop(ctx.token, second) },
      };
    },
  },
  single("wrong ath", /ath/, "invalid_dpop_proof", (ctx) => ({
    ath: pick(ctx, [sha256(`${ctx.token}x`), base64url.encode(randomBytes(32)), "", ctx.token]),
  })),
  single("no ath", /ath/, "invalid_dpop_proof", () => ({ ath: null })),
  single("a proof for another token of the same key", /ath/, "invalid_dpop_proof", (ctx) => ({
    accessToken: ctx.otherToken,
  })),
  single("signed by a key the token is not bound to (cnf.jkt)", /cnf\.jkt/, "invalid_dpop_proof", (ctx) => ({
    key: ctx.otherKey,
  })),
  headersOnly("alg none", /alg/, "invalid_dpop_proof", async (ctx, entry) => {
    const { method, path } = requestOf(entry);
    const header = { alg: "none", typ: "dpop+jwt", jwk: ctx.key.publicJwk };
    const claims = { jti: base64url.encode(randomBytes(16)), htm: method, htu: `${ctx.resource}${path}` };
    const part = (value: object) => base64url.encode(JSON.stringify(value));
    const proof = `${part(header)}.${part({ ...claims, iat: Math.floor(Date.now() / 1000), ath: sha256(ctx.token), nonce: ctx.nonce() })}.`;
    return dpop(ctx.token, proof);
  }),
  headersOnly("HS256 with a symmetric jwk", /alg/, "invalid_dpop_proof", async (ctx, entry) => {
    const secret = randomBytes(32);
    const { method, path } = requestOf(entry);
    const proof = await new SignJWT({
      jti: base64url.encode(randomBytes(16)),
      htm: method,
      htu: `${ctx.resource}${path}`,
      iat: Math.floor(Date.now() / 1000),
      ath: sha256(ctx.token),
      nonce: ctx.nonce(),
    })
      .setProtectedHeader({
        alg: pick(ctx, ["HS256", "HS384", "HS512"]),
        typ: "dpop+jwt",
        // A symmetric key where a public one goes: jose's type rightly has no `k` there.
        jwk: { kty: "oct", k: base64url.encode(secret) } as JWK,
      })
      .sign(secret);
    return dpop(ctx.token, proof);
  }),
  single("jwk holding the private key", /private/, "invalid_dpop_proof", (ctx) => ({
    jwk: ctx.key.privateJwk as Record<string, unknown>,
  })),
  single("no jwk, or one that is not an object", /jwk/, "invalid_dpop_proof", (ctx) => ({
    jwk: pick(ctx, [null, { kty: "oct", k: "AAAA" }, { kty: "EC" }, { kty: "XYZ", x: "1" }]),
  })),
  single("jwk of another key type than alg", /jwk|signature/, "invalid_dpop_proof", (ctx) => ({
    key: ctx.rsaKey,
    jwk: ctx.key.publicJwk as Record<string, unknown>,
  })),
  single("typ other than dpop+jwt", /typ/, "invalid_dpop_proof", (ctx) => ({
    typ: pick(ctx, ["JWT", "at+jwt", "dpop", "application/jwt"]),
  })),
  headersOnly("signature altered", /signature/, "invalid_dpop_proof", async (ctx, entry) => {
    const proof = await proofFor(ctx, entry);
    const [h, p, s] = proof.split(".") as [string, string, string];
    const bytes = Buffer.from(s, "base64url");
    bytes[between(ctx, 0, bytes.length)]! ^= 1 << between(ctx, 0, 8);
    return dpop(ctx.token, `${h}.${p}.${bytes.toString("base64url")}`);
  }),
  headersOnly("claims changed after signing", /signature/, "invalid_dpop_proof", async (ctx, entry) => {
    const proof = await proofFor(ctx, entry, { htm: "GET", htu: `${ctx.resource}/elsewhere` });
    const [h, p, s] = proof.split(".") as [string, string, string];
    const { method, path } = requestOf(entry);
    const claims = {
      ...JSON.parse(Buffer.from(p, "base64url").toString("utf8")),
      htm: method,
      htu: `${ctx.resource}${path}`,
    };
    return dpop(ctx.token, `${h}.${base64url.encode(JSON.stringify(claims))}.${s}`);
  }),
  headersOnly("malformed proof", /malformed|signature|typ/, "invalid_dpop_proof", async (ctx, entry) => {
    const proof = await proofFor(ctx, entry);
    const [h, p] = proof.split(".") as [string, string, string];
    return dpop(
      ctx.token,
      pick(ctx, [
        `${h}.${p}`,
        `${proof}.extra`,
        base64url.encode(randomBytes(between(ctx, 1, 200))),
        `${h}.!!!.${base64url.encode(randomBytes(64))}`,
        `e30.${p}.${base64url.encode(randomBytes(64))}`,
        "..",
      ]),
    );
  }),
  headersOnly("a proof past the size limit", /longer/, "invalid_dpop_proof", async (ctx, entry) => {
    const proof = await proofFor(ctx, entry, { jti: "j".repeat(between(ctx, 4200, 7000)) });
    return dpop(ctx.token, proof);
  }),
  headersOnly("two DPoP headers", /several DPoP/, "invalid_dpop_proof", async (ctx, entry) => {
    const one = await proofFor(ctx, entry);
    return dpop(ctx.token, [one, pick(ctx, [one, await proofFor(ctx, entry)])]);
  }),
  headersOnly("no DPoP header", /no DPoP proof/, "invalid_dpop_proof", async (ctx) => ({
    authorization: `DPoP ${ctx.token}`,
  })),
  headersOnly("the bound token as a plain Bearer", /DPoP-bound/, "invalid_token", async (ctx, entry) =>
    pick<Record<string, string>>(ctx, [
      { authorization: `Bearer ${ctx.token}` },
      { authorization: `Bearer ${ctx.token}`, dpop: await proofFor(ctx, entry) },
    ]),
  ),
  headersOnly("an unbound token as DPoP", /not DPoP-bound/, "invalid_token", async (ctx, entry) =>
    dpop(ctx.unbound, await proofFor(ctx, entry, { accessToken: ctx.unbound })),
  ),
  headersOnly(
    "two Authorization headers",
    /several Authorization/,
    "invalid_request",
    async (ctx, entry) => ({
      authorization: [`DPoP ${ctx.token}`, `DPoP ${ctx.otherToken}`],
      dpop: await proofFor(ctx, entry),
    }),
  ),
  single("no nonce while nonces are required", /nonce/, "use_dpop_nonce", () => ({ nonce: null })),
  single("a stale or forged nonce", /nonce/, "use_dpop_nonce", (ctx) => {
    const [slot, mac] = ctx.nonce().split(".") as [string, string];
    const n = Number.parseInt(slot, 36);
    return {
      nonce: pick(ctx, [
        `${(n - between(ctx, 2, 1000)).toString(36)}.${mac}`,
        `${slot}.${base64url.encode(randomBytes(16)).slice(0, 22)}`,
        `${(n + 1).toString(36)}.${mac}`,
        base64url.encode(randomBytes(between(ctx, 4, 40))),
        "",
        "x".repeat(65),
      ]),
    };
  }),
];
