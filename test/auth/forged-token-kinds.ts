/**
 * The forged or wrong credentials of forged-tokens.hostile.test.ts, one maker per kind: tokens
 * signed with the configured issuer's real keys but wrong in one claim, tokens of a real issuer
 * the gateway does not trust, the classic JWT forgeries (`alg: none`, HMAC keyed with the public
 * key, `kid` confusion, embedded keys), tampered and garbled tokens, tokens too large, and valid
 * tokens sent where or how a bearer token may not be (the query string, a cookie, another
 * scheme, a second header, Unicode or control bytes around it). Each maker draws its variations
 * (claims, sizes, positions) from the run's seeded random source.
 */
import { createHash } from "node:crypto";
import { base64url, type JWTPayload } from "jose";
import type { AuthServer } from "../support/oidc-provider.js";

/** What the forgeries are made from. */
export interface ForgeryContext {
  readonly random: () => number;
  /** `http://127.0.0.1:<port>`: the gateway as its clients reach it. */
  readonly origin: string;
  /** The audience a token for this gateway names: `<origin>/mcp`. */
  readonly resource: string;
  /** The configured issuer (its keys are real; the test holds their private halves). */
  readonly issuer: AuthServer;
  /** A real authorization server with keys of its own that the gateway does not trust. */
  readonly stranger: AuthServer;
  /** A token the gateway accepts (alice, group eng): what the "elsewhere" kinds carry. */
  readonly valid: string;
  /** Real ID tokens of the configured issuer (their audience is the client that signed in). */
  readonly idTokens: readonly string[];
  /** Real access tokens of the configured issuer for another resource. */
  readonly otherResourceTokens: readonly string[];
  /** Real access tokens of the stranger, for this gateway's resource. */
  readonly strangerTokens: readonly string[];
  /** `auth.clockTolerance` in seconds. */
  readonly toleranceS: number;
}

/** The credential part of one wrong request, sent to one of the gateway's entries. */
export interface Forged {
  /** Request headers over the entry's own; a list is sent as that many header lines. */
  readonly headers: Readonly<Record<string, string | readonly string[]>>;
  /** Added to the entry's query string (`access_token=...`). */
  readonly query?: string;
  /** A body in place of the entry's, with its content type (a form with `access_token`). */
  readonly body?: { readonly type: string; readonly text: string };
  /** Header lines written as bytes on a raw socket: what Node's HTTP client refuses to send. */
  readonly rawLines?: string;
  /** Text that must not come back in the answer (the tokens sent, whole and in parts). */
  readonly secrets: readonly string[];
  /**
   * The answer Node's HTTP parser gives before the gateway sees the request, where that is
   * right: 431 for headers past its 16 KiB limit (or the connection reset while the rest of
   * them was still arriving), 400 for bytes HTTP forbids in a header.
   */
  readonly nodeRefuses?: 431 | 400;
}

/** One kind of forgery. */
export interface Forgery {
  readonly kind: string;
  /**
   * What a 401 for this kind says: the check the kind aims at refused it, rather than another
   * by chance (which would leave the aimed one untried). Absent where several checks fit.
   */
  readonly refusal?: RegExp;
  /** Its tokens name a `kid` the issuer does not publish: each may make the gateway fetch its keys. */
  readonly unpublishedKid?: true;
  make(ctx: ForgeryContext): Promise<Forged>;
}

const AUDIENCE = /not for this resource/;
const ISSUER = /issuer is not one this gateway accepts/;
const UNPUBLISHED = /signed with a key the issuer does not publish/;
const SIGNATURE = /signature does not verify|no key of the issuer matches/;
const ALGORITHM = /signature algorithm is not accepted/;

/** Node's default limit on a request's headers (`--max-http-header-size`). */
export const NODE_HEADER_LIMIT = 16 * 1024;
/** The gateway reads no token longer than this (`MAX_TOKEN_LENGTH` of src/auth/token-verifier.ts). */
const LONGEST_READ = 8192;

const int = (random: () => number, low: number, high: number) =>
  low + Math.floor(random() * (high - low + 1));
const pick = <T>(random: () => number, list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
const now = () => Math.floor(Date.now() / 1000);
const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const VISIBLE = `${B64URL}.~+/=!#$%&'*^\`|`;

function randomText(random: () => number, length: number, alphabet = B64URL): string {
  let text = "";
  for (let i = 0; i < length; i++) text += alphabet[Math.floor(random() * alphabet.length)];
  return text;
}

/** Claims in shuffled order, with a few random ones beside: positions and sizes vary. */
function shuffled(random: () => number, claims: JWTPayload): JWTPayload {
  const entries = Object.entries(claims);
  for (let n = int(random, 0, 4); n > 0; n--)
    entries.push([`x_${randomText(random, int(random, 1, 12))}`, randomText(random, int(random, 0, 200))]);
  for (let i = entries.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [entries[i], entries[j]] = [entries[j]!, entries[i]!];
  }
  return Object.fromEntries(entries);
}

/** Claims of a user the gateway's rules admit (alice or bob, or one given rights the rules grant). */
function userClaims(ctx: ForgeryContext, extra: JWTPayload = {}): JWTPayload {
  const { random } = ctx;
  const who = pick(random, [
    { sub: "alice", email: "alice@example.com", groups: ["eng"] },
    { sub: "bob", email: "bob@example.com", groups: ["sales"] },
    { sub: "root", email: "root@example.com", groups: ["eng", "admin"] },
    { sub: randomText(random, int(random, 1, 40)), groups: ["eng"] },
  ]);
  return shuffled(random, {
    ...who,
    aud: ctx.resource,
    scope: pick(random, ["mcp:tools", "mcp:tools github:write", "mcp:tools admin"]),
    client_id: randomText(random, 16),
    ...extra,
  });
}

const bearer = (token: string): Forged => ({
  headers: { authorization: `Bearer ${token}` },
  secrets: [token],
});

const json64 = (value: unknown) => base64url.encode(JSON.stringify(value));

/** A compact JWS from its parts, as given (nothing checked). */
function compact(header: unknown, payload: unknown, signature: string): string {
  return `${json64(header)}.${json64(payload)}.${signature}`;
}

/** The parts of a compact JWT: header and payload decoded, signature as sent. */
function partsOf(token: string): { header: Record<string, unknown>; payload: JWTPayload; signature: string } {
  const [header, payload, signature] = token.split(".");
  const decode = (part: string) => JSON.parse(new TextDecoder().decode(base64url.decode(part)));
  return { header: decode(header!), payload: decode(payload!), signature: signature! };
}

/** A base64url character other than `c` (a middle one carries six whole bits: the bytes change). */
const otherChar = (random: () => number, c: string) => {
  const others = B64URL.replace(c, "");
  return others[Math.floor(random() * others.length)]!;
};

/** `tampered`, which must differ from `token` (a change that changes nothing would forge nothing). */
function changed(token: string, tampered: string): string {
  if (tampered === token) throw new Error("forged-token-kinds: a tampering left the token as it was");
  return tampered;
}

/** A token signed with the configured issuer's key, valid but for a claim `extra` spoils. */
function signed(
  ctx: ForgeryContext,
  extra: JWTPayload = {},
  options: Parameters<AuthServer["sign"]>[1] = {},
) {
  return ctx.issuer.sign(userClaims(ctx, extra), { alg: pick(ctx.random, ["RS256", "ES256"]), ...options });
}

/** UTF-8 bytes as a Latin-1 string: what Node's HTTP client then writes byte for byte. */
const utf8Bytes = (text: string) => Buffer.from(text, "utf8").toString("latin1");

const UNICODE_BLANKS = [
  "\u00a0",
  "\u2000",
  "\u2003",
  "\u2009",
  "\u200b",
  "\u2028",
  "\u3000",
  "\ufeff",
  "\u180e",
];

/** Every kind, each made many times over a run with other variations. */
export const FORGERIES: readonly Forgery[] = [
  {
    kind: "audience: another resource",
    refusal: AUDIENCE,
    async make(ctx) {
      const { random } = ctx;
      if (random() < 0.2) return bearer(pick(random, ctx.otherResourceTokens));
      const port = new URL(ctx.origin).port;
      const aud = pick(random, [
        `http://127.0.0.1:${int(random, 1, 65535)}/mcp`,
        `${ctx.origin}/mcp/${randomText(random, int(random, 1, 20))}`,
        `${ctx.origin}/mcpx`,
        `${ctx.origin}/dashboard`,
        `https://127.0.0.1:${port}/mcp`,
        `https://mcp.${randomText(random, 8).toLowerCase()}.example/mcp`,
        ctx.resource.toUpperCase(),
        `${ctx.resource}?x=1`,
        "",
      ]);
      return bearer(await signed(ctx, { aud }));
    },
  },
  {
    kind: "audience: the issuer itself",
    refusal: AUDIENCE,
    async make(ctx) {
      const aud = pick(ctx.random, [ctx.issuer.issuer, `${ctx.issuer.issuer}/`, ctx.issuer.endpoints.token]);
      return bearer(await signed(ctx, { aud }));
    },
  },
  {
    kind: "audience: a list without ours, or none",
    refusal: AUDIENCE,
    async make(ctx) {
      const { random } = ctx;
      const others = Array.from(
        { length: int(random, 0, 6) },
        () => `http://127.0.0.1:${int(random, 1, 65535)}/${pick(random, ["mcp", "sse", "ws", ""])}`,
      );
      const aud = pick(random, [
        others,
        [...others, ctx.issuer.issuer],
        undefined,
        [],
        42,
        { aud: ctx.resource },
      ]);
      return bearer(await signed(ctx, { aud: aud as JWTPayload["aud"] }));
    },
  },
  {
    kind: "issuer: a real one not configured",
    refusal: /issuer is not one this gateway accepts|not active/,
    async make(ctx) {
      if (ctx.random() < 0.25) return bearer(pick(ctx.random, ctx.strangerTokens));
      return bearer(await ctx.stranger.sign(userClaims(ctx), { alg: pick(ctx.random, ["RS256", "ES256"]) }));
    },
  },
  {
    kind: "issuer: near misses of ours",
    refusal: ISSUER,
    async make(ctx) {
      const { random } = ctx;
      const ours = ctx.issuer.issuer;
      const iss = pick(random, [
        `${ours}/`,
        ours.replace("127.0.0.1", "localhost"),
        ours.replace("http:", "https:"),
        ours.toUpperCase(),
        `${ours}#`,
        `${ours}/${randomText(random, 6)}`,
        ` ${ours}`,
        "",
      ]);
      return bearer(await signed(ctx, { iss }));
    },
  },
  {
    kind: "key: the stranger's kid and signature, our iss",
    unpublishedKid: true,
    refusal: UNPUBLISHED,
    async make(ctx) {
      const claims = userClaims(ctx, { iss: ctx.issuer.issuer });
      return bearer(await ctx.stranger.sign(claims, { alg: pick(ctx.random, ["RS256", "ES256"]) }));
    },
  },
  {
    kind: "key: our kid, the stranger's signature",
    refusal: SIGNATURE,
    async make(ctx) {
      const alg = pick(ctx.random, ["RS256", "ES256"] as const);
      const claims = userClaims(ctx, { iss: ctx.issuer.issuer });
      const kid = pick(ctx.random, ctx.issuer.keys).kid;
      return bearer(await ctx.stranger.sign(claims, { alg, kid }));
    },
  },
  {
    kind: "key: embedded in the header (jwk, jku, x5u)",
    refusal: /does not publish|signature does not verify|no key of the issuer matches/,
    async make(ctx) {
      const { random } = ctx;
      const key = ctx.stranger.signingKey(pick(random, ["RS256", "ES256"] as const));
      const header = pick(random, [
        { jwk: key.publicJwk },
        { jku: ctx.stranger.endpoints.jwks },
        { x5u: ctx.stranger.endpoints.jwks },
        { jwk: key.publicJwk, jku: ctx.stranger.endpoints.jwks },
      ]);
      const claims = userClaims(ctx, { iss: ctx.issuer.issuer });
      const kid = pick(random, [null, key.kid, ctx.issuer.keys[0]!.kid]);
      return bearer(await ctx.stranger.sign(claims, { key, kid, header }));
    },
  },
  {
    kind: "time: expired beyond the tolerance",
    refusal: /has expired/,
    async make(ctx) {
      const exp = now() - ctx.toleranceS - int(ctx.random, 2, 10 ** 7);
      return bearer(await signed(ctx, { exp, iat: exp - 3600, nbf: exp - 3600 }));
    },
  },
  {
    kind: "time: not valid yet beyond the tolerance",
    refusal: /not valid yet/,
    async make(ctx) {
      const nbf = now() + ctx.toleranceS + int(ctx.random, 2, 10 ** 7);
      return bearer(await signed(ctx, { nbf, exp: nbf + 3600 }));
    },
  },
  {
    kind: "alg: none",
    refusal: ALGORITHM,
    async make(ctx) {
      const { random } = ctx;
      const alg = pick(random, ["none", "None", "NONE", "nOnE"]);
      const kid = pick(random, [undefined, ctx.issuer.keys[0]!.kid]);
      const header = { alg, typ: "at+jwt", ...(kid === undefined ? {} : { kid }) };
      const signature = pick(random, ["", randomText(random, int(random, 1, 342))]);
      const payload = userClaims(ctx, { iss: ctx.issuer.issuer, exp: now() + 300 });
      return bearer(compact(header, payload, signature));
    },
  },
  {
    kind: "alg: HMAC keyed with the public key",
    refusal: ALGORITHM,
    async make(ctx) {
      const { random } = ctx;
      const key = pick(random, ctx.issuer.keys);
      const pem = key.publicPem;
      const der = pem.replace(/-----[A-Z ]+-----|\s/g, "");
      const secret = pick(random, [
        pem,
        pem.trim(),
        JSON.stringify(key.publicJwk),
        JSON.stringify(ctx.issuer.publicJwks),
        key.publicJwk.n ?? key.publicJwk.x!,
        Buffer.from(der, "base64").toString("latin1"),
      ]);
      const alg = pick(random, ["HS256", "HS384", "HS512"] as const);
      const token = await ctx.issuer.sign(userClaims(ctx), {
        alg,
        key: Buffer.from(secret, "latin1"),
        kid: pick(random, [key.kid, null]),
      });
      return bearer(token);
    },
  },
  {
    kind: "kid: unknown to the issuer",
    unpublishedKid: true,
    refusal: UNPUBLISHED,
    async make(ctx) {
      const kid = randomText(ctx.random, int(ctx.random, 1, 120), VISIBLE);
      return bearer(await signed(ctx, {}, { kid }));
    },
  },
  {
    kind: "kid: not a string",
    unpublishedKid: true,
    refusal: UNPUBLISHED,
    async make(ctx) {
      const kid = pick(ctx.random, [0, 123456, true, {}, [], ["a"], { kid: ctx.issuer.keys[0]!.kid }, ""]);
      return bearer(await signed(ctx, {}, { kid: null, header: { kid: kid as string } }));
    },
  },
  {
    kind: "tampered: payload changed after signing",
    refusal: /signature does not verify/,
    async make(ctx) {
      const { random } = ctx;
      const token = await signed(ctx);
      const { header, payload, signature } = partsOf(token);
      const change = pick(random, [
        () => ({ scope: `${payload.scope} admin github:write` }),
        () => ({
          sub: pick(
            random,
            ["admin", "root", "alice", "bob"].filter((sub) => sub !== payload.sub),
          ),
        }),
        () => ({ aud: pick(random, [ctx.resource, [ctx.resource], `${ctx.origin}/sse`]), scope: "x" }),
        () => ({ groups: ["eng", "admin", "wheel"], email: "root@example.com" }),
        () => ({ exp: (payload.exp ?? 0) + int(random, 1, 10 ** 6) }),
        () => ({ iss: ctx.issuer.issuer, [randomText(random, 4)]: randomText(random, 4) }),
      ])();
      return bearer(changed(token, compact(header, { ...payload, ...change }, signature)));
    },
  },
  {
    kind: "tampered: header changed after signing",
    refusal: /signature does not verify|no key of the issuer matches|algorithm is not accepted|malformed/,
    async make(ctx) {
      const { random } = ctx;
      const token = await signed(ctx);
      const { header, signature } = partsOf(token);
      const other = ctx.issuer.keys.find((k) => k.kid !== header.kid)!;
      const forgedHeader = pick(random, [
        {
          ...header,
          alg: pick(
            random,
            ["RS256", "ES256", "PS256", "RS512", "EdDSA", "HS256"].filter((a) => a !== header.alg),
          ),
        },
        { ...header, kid: other.kid },
        { ...header, typ: "JWT", cty: "JWT" },
        { ...header, crit: ["exp"], exp: 1 },
        { alg: header.alg },
      ]);
      // The payload's own bytes, so that only the header differs from what was signed.
      return bearer(changed(token, `${json64(forgedHeader)}.${token.split(".")[1]}.${signature}`));
    },
  },
  {
    kind: "signature: truncated, garbled or another token's",
    refusal: /signature does not verify|malformed|not active/,
    async make(ctx) {
      const { random } = ctx;
      const token = await signed(ctx);
      const [head, body, signature] = token.split(".") as [string, string, string];
      const middle = int(random, 1, signature.length - 3);
      const garbled = pick(random, [
        () => signature.slice(0, int(random, 0, signature.length - 1)),
        () =>
          signature.slice(0, middle) + otherChar(random, signature[middle]!) + signature.slice(middle + 1),
        () => [...signature.slice(0, -2)].reverse().join("") + signature.slice(-2),
        () => randomText(random, signature.length),
        () => ctx.valid.split(".")[2]!,
        () => `${signature}.${signature}`,
      ])();
      return bearer(changed(token, `${head}.${body}.${garbled}`));
    },
  },
  {
    kind: "claims: no sub, or no exp",
    refusal: /(sub|exp) claim is missing/,
    async make(ctx) {
      const drop = pick(ctx.random, [
        { sub: undefined },
        { exp: undefined },
        { sub: undefined, exp: undefined },
      ]);
      return bearer(await signed(ctx, drop));
    },
  },
  {
    kind: "ID token as an access token",
    refusal: /not for this resource|issuer is not one this gateway accepts/,
    async make(ctx) {
      const { random } = ctx;
      if (random() < 0.3) return bearer(pick(random, ctx.idTokens));
      const clientId = randomText(random, 21);
      const claims = userClaims(ctx, {
        aud: pick(random, [clientId, [clientId]]),
        azp: clientId,
        nonce: randomText(random, 16),
        auth_time: now() - 60,
        at_hash: randomText(random, 22),
      });
      return bearer(await ctx.issuer.sign(claims, { alg: "RS256", header: { typ: "JWT" } }));
    },
  },
  {
    kind: "size: past the 8 KiB the gateway reads, within Node's header limit",
    refusal: /longer than 8192 characters/,
    async make(ctx) {
      const { random } = ctx;
      // Up to what still fits with the request line and the entry's other headers.
      const length = int(random, LONGEST_READ + 1, NODE_HEADER_LIMIT - 700);
      if (random() < 0.4) {
        const junk = randomText(random, length);
        const at = [int(random, 1, length / 2), int(random, length / 2 + 1, length - 2)];
        return bearer(`${junk.slice(0, at[0])}.${junk.slice(at[0]! + 1, at[1])}.${junk.slice(at[1]! + 1)}`);
      }
      // Otherwise valid in every way, signed with the issuer's key: refused for its size alone.
      const claims = userClaims(ctx);
      const alg = pick(random, ["RS256", "ES256"] as const);
      const base = await ctx.issuer.sign({ ...claims, pad: "" }, { alg });
      // Base64url makes 4 characters of 3: a few over the length wanted, so never at or under 8 KiB.
      const pad = randomText(random, Math.ceil(((Math.max(length, LONGEST_READ + 4) - base.length) * 3) / 4));
      return bearer(await ctx.issuer.sign({ ...claims, pad }, { alg }));
    },
  },
  {
    kind: "size: past Node's header limit",
    async make(ctx) {
      const length = int(ctx.random, NODE_HEADER_LIMIT + 1, 4 * NODE_HEADER_LIMIT);
      const token = `${randomText(ctx.random, 40)}.${randomText(ctx.random, length - 400)}.${randomText(ctx.random, 342)}`;
      return { ...bearer(token), nodeRefuses: 431 };
    },
  },
  {
    kind: "placement: in the query string",
    async make(ctx) {
      const { random } = ctx;
      const token = pick(random, [ctx.valid, await signed(ctx)]);
      const name = pick(random, ["access_token", "token", "bearer", "authorization"]);
      const query = `${name}=${random() < 0.5 ? token : encodeURIComponent(`Bearer ${token}`)}`;
      const headers = pick<Record<string, string>>(random, [
        {},
        { authorization: `Basic ${Buffer.from(`alice:${token}`).toString("base64")}` },
        { authorization: `Bearer ${randomText(random, 60)}` },
        { authorization: `DPoP ${token}` },
      ]);
      return { headers, query, secrets: [token] };
    },
  },
  {
    kind: "placement: a cookie, another header, a form body",
    refusal: /sign in, and send the access token/,
    async make(ctx) {
      const { random, valid } = ctx;
      const form = { type: "application/x-www-form-urlencoded", text: `access_token=${valid}` };
      return pick<Forged>(random, [
        { headers: { cookie: `access_token=${valid}` }, secrets: [valid] },
        { headers: { cookie: `mcplex_token=${valid}; token=${valid}` }, secrets: [valid] },
        { headers: { "x-access-token": valid }, secrets: [valid] },
        { headers: { "proxy-authorization": `Bearer ${valid}` }, secrets: [valid] },
        { headers: { authentication: `Bearer ${valid}` }, secrets: [valid] },
        { headers: { "x-forwarded-authorization": `Bearer ${valid}` }, secrets: [valid] },
        { headers: {}, body: form, secrets: [valid] },
      ]);
    },
  },
  {
    kind: "scheme: not Bearer",
    // An unbound token under DPoP: refused by DPoP (not bound), never taken as a bearer.
    refusal: /sign in, and send the access token|malformed|not DPoP-bound/,
    async make(ctx) {
      const { random, valid } = ctx;
      const authorization = pick(random, [
        `Basic ${Buffer.from(`alice:${valid}`).toString("base64")}`,
        `Basic ${Buffer.from(`${valid}:`).toString("base64")}`,
        `DPoP ${valid}`,
        `Token ${valid}`,
        `JWT ${valid}`,
        `OAuth ${valid}`,
        `Negotiate ${valid}`,
        `MAC id="${valid}"`,
        `Bearer:${valid}`,
        `Bearer=${valid}`,
        `Bearer${valid}`,
        `XBearer ${valid}`,
        `Bearer "${valid}"`,
        `Bearer ${valid},`,
        `Bearer ${valid};`,
      ]);
      const headers: Record<string, string> = { authorization };
      if (authorization.startsWith("DPoP")) headers.dpop = randomText(random, 200);
      return { headers, secrets: [valid] };
    },
  },
  {
    kind: "duplicated: a forged token first or last, or two forged",
    // `Bearer a,b` is one run of visible ASCII, so one token: not a JWT, the issuer that
    // introspects opaque tokens is asked, and does not know it.
    refusal: /several Authorization headers|malformed|not for this resource|not active/,
    async make(ctx) {
      const { random, valid } = ctx;
      const forged = await signed(ctx, { aud: `http://127.0.0.1:${int(random, 1, 65535)}/mcp` });
      return pick(random, [
        { headers: { authorization: [`Bearer ${forged}`, `Bearer ${valid}`] }, secrets: [forged, valid] },
        // The valid one first: Node would read it alone; several are refused whatever their order.
        { headers: { authorization: [`Bearer ${valid}`, `Bearer ${forged}`] }, secrets: [forged, valid] },
        {
          headers: { authorization: [`Bearer ${forged}`, `Bearer ${randomText(random, 40)}`] },
          secrets: [forged],
        },
        { headers: { authorization: `Bearer ${forged}, Bearer ${valid}` }, secrets: [forged, valid] },
        { headers: { authorization: `Bearer ${valid} ${valid}` }, secrets: [valid] },
        { headers: { authorization: `Bearer ${valid},${valid}` }, secrets: [valid] },
      ]);
    },
  },
  {
    kind: "whitespace and Unicode around a valid token",
    refusal: /malformed Authorization header|sign in, and send the access token/,
    async make(ctx) {
      const { random, valid } = ctx;
      const blank = pick(random, UNICODE_BLANKS);
      const cut = int(random, 1, valid.length - 1);
      const value = pick(random, [
        `Bearer${blank}${valid}`,
        `Bearer ${blank}${valid}`,
        `Bearer ${valid}${blank}`,
        `Bearer ${valid.slice(0, cut)}${blank}${valid.slice(cut)}`,
        `Bearer ${valid.slice(0, cut)}\u00ad${valid.slice(cut)}`,
        `Bearer ${valid.slice(0, cut)}\t${valid.slice(cut)}`,
        `Bearer ${valid.replace(".", pick(random, ["\u2024", "\uff0e", "\u3002"]))}`,
        `\uff22earer ${valid}`,
        `Bearer\u00a0\u00a0${valid}`,
      ]);
      return { headers: { authorization: utf8Bytes(value) }, secrets: [valid] };
    },
  },
  {
    kind: "bytes HTTP forbids in the header",
    async make(ctx) {
      const { random, valid } = ctx;
      const cut = int(random, 1, valid.length - 1);
      const rawLines = pick(random, [
        `Authorization: Bearer ${valid.slice(0, cut)}\x00${valid.slice(cut)}\r\n`,
        `Authorization: Bearer\x0b${valid}\r\n`,
        `Authorization: Bearer ${valid}\x0c\r\n`,
        `Authorization: Bearer\r\n ${valid}\r\n`,
        `Authorization: Bearer ${valid.slice(0, cut)}\r\n\t${valid.slice(cut)}\r\n`,
        `Authorization: Bearer ${randomText(random, 20)}\nAuthorization: Bearer ${valid}\r\n`,
        `Authorization: Bearer ${randomText(random, 20)}\rAuthorization: Bearer ${valid}\r\n`,
        `Authorization: Bearer ${valid}\x7f\r\n`,
        `Authorization : Bearer ${valid}\r\n`,
      ]);
      return { headers: {}, rawLines, secrets: [valid], nodeRefuses: 400 };
    },
  },
  {
    kind: "opaque: random text, not a JWT",
    refusal: /not active|malformed/,
    async make(ctx) {
      const token = randomText(ctx.random, int(ctx.random, 1, 4000), VISIBLE);
      return bearer(token);
    },
  },
  {
    kind: "malformed: JWT-shaped, does not decode",
    refusal: /malformed|not active/,
    async make(ctx) {
      const { random } = ctx;
      const header = json64({ alg: "RS256", kid: ctx.issuer.keys[0]!.kid, typ: "at+jwt" });
      const payload = json64(userClaims(ctx, { iss: ctx.issuer.issuer, exp: now() + 300 }));
      const sig = randomText(random, 342);
      const token = pick(random, [
        `${randomText(random, 30)}.${randomText(random, 60)}.${randomText(random, 40)}`,
        `${base64url.encode("{not json")}.${payload}.${sig}`,
        `${header}.${base64url.encode(pick(random, ["null", "[]", "123", '"x"', "{", "true"]))}.${sig}`,
        `${header}.${payload}`,
        `${header}.${payload}.${sig}.${sig}`,
        `${header}.${payload}.${sig}.${sig}.${sig}`,
        "..",
        "...",
        `${header}..${sig}`,
        `.${payload}.${sig}`,
        `${header}.${payload}.${sig}`.replaceAll("-", "+").replaceAll("_", "/"),
        `${header}.${createHash("sha256").update(payload).digest("hex")}.${sig}`,
      ]);
      return bearer(token);
    },
  },
];
