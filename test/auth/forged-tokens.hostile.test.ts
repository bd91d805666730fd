import { Agent } from "node:http";
import { performance } from "node:perf_hooks";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewaySignIn } from "../../src/auth/gateway-sign-in.js";
import { OAuthAuthenticator } from "../../src/auth/oauth-authenticator.js";
import { parseConfig } from "../../src/config/parse-config.js";
import { dashboardPage } from "../../src/dashboard/dashboard.js";
import { type HttpFront, startHttpFront } from "../../src/fronts/http-front.js";
import { Gateway } from "../../src/gateway/gateway.js";
import { Hub } from "../../src/hub/hub.js";
import { ANSWERING_CAPABILITIES } from "../../src/protocol/server-requests.js";
import { WebSocketClientTransport } from "../../src/upstream/websocket-transport.js";
import { COMMANDS, postRev2026, resultText, rev2026Request } from "../support/gateway.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";
import { type AuthServer, connectWithSignIn, startAuthServer } from "../support/oidc-provider.js";
import { rng } from "../support/rng.js";
import { FORGERIES, type Forged, type ForgeryContext } from "./forged-token-kinds.js";
import {
  type Answer,
  messageOf,
  openSession,
  openSseSession,
  send,
  type Target,
  targetsOf,
} from "./guarded-entries.js";

// The hostile run of sign-in (issue 24): thousands of forged or wrong tokens (forged-token-kinds.ts)
// against a gateway whose `auth:` trusts a real authorization server (oidc-provider), a static
// token beside it, over every entry the authenticator guards. None gets through (no 2xx, no
// upgraded WebSocket, no MCP result), none is a 5xx; each is a 401 with the challenge (or Node's
// own 431/400 where its parser refuses the bytes first), and nothing of the token or the keys
// comes back. Over the run the issuer sees at most one JWKS fetch per `auth.jwksCooldown`
// however many unknown `kid`s arrive, the token cache keeps no forged token, and afterwards a
// user who signs in for real and the static token still work.

const STATIC = "static-forged-run-token-0123456789abcdef";
const TOKENS = attackSize(420, 2400);
const IN_FLIGHT = 8;
/** The whole run fits in one or two cooldowns, so the JWKS bound below is tight. */
const COOLDOWN_MS = 60_000;
const TOLERANCE_S = 5;

/** The gateway as `serve()` wires an `auth:` block, with its authenticator in hand (for its cache). */
interface SignInGateway {
  readonly origin: string;
  readonly front: HttpFront;
  readonly authenticator: OAuthAuthenticator;
  /** What the gateway reported (its log lines). */
  readonly events: string[];
  close(): Promise<void>;
}

async function startSignInGateway(
  issuer: string,
  introspection: { clientId: string; clientSecret: string },
): Promise<SignInGateway> {
  const yaml = `servers:
  fx:
    command: ${JSON.stringify(COMMANDS.fixture.command)}
    args: ${JSON.stringify(COMMANDS.fixture.args)}
profiles:
  engineering:
    servers: [fx]
  sales:
    tools:
      allow: [fx__echo]
tokens:
  - token: ${STATIC}
auth:
  issuers:
    - issuer: ${issuer}
      introspection:
        clientId: ${introspection.clientId}
        clientSecret: ${introspection.clientSecret}
  scopes: [mcp:tools]
  clockTolerance: ${TOLERANCE_S}s
  jwksCooldown: ${COOLDOWN_MS / 1000}s
  access:
    - when: { groups: [eng] }
      profile: engineering
      operator: true
    - when: { groups: [sales] }
      profile: sales
  require:
    - tools: ["fx__slow"]
      scopes: [github:write]
`;
  const config = parseConfig(yaml, { source: "forged-tokens.yaml", env: {} });
  const hub = new Hub({ config, clientCapabilities: ANSWERING_CAPABILITIES });
  const starting = hub.start();
  const gateway = new Gateway(hub, { ready: starting });
  const events: string[] = [];
  // What serve() does with config.auth (src/assembly/serve.ts), the same two calls.
  const authenticator = gatewaySignIn(config.auth!, {
    tokens: config.tokens,
    host: "127.0.0.1",
    onEvent: (message) => events.push(message),
  });
  if (!(authenticator instanceof OAuthAuthenticator))
    throw new Error("auth: did not make an OAuthAuthenticator");
  const front = await startHttpFront(gateway, {
    host: "127.0.0.1",
    port: 0,
    dashboard: dashboardPage,
    tokens: config.tokens,
    authenticator,
  });
  await starting;
  return {
    origin: front.url.replace(/\/mcp$/, ""),
    front,
    authenticator,
    events,
    async close() {
      await front.close(0);
      gateway.close();
      await hub.close();
    },
  };
}

/** What one timed pass of requests cost. */
interface Timed {
  readonly perSecond: number;
  /** CPU time of the whole process (user and system) per request, µs. */
  readonly cpuMicros: number;
}

/** Runs `pass` (of `count` requests) and measures its rate and CPU per request. */
async function timed(count: number, pass: () => Promise<void>): Promise<Timed> {
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await pass();
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  return { perSecond: Math.round(count / seconds), cpuMicros: Math.round((cpu.user + cpu.system) / count) };
}

/** A bearer JWT (three parts) the gateway reads: checked by signature and claims, never introspected. */
function isJwtBearer(forged: Forged): boolean {
  const header = forged.headers.authorization;
  if (typeof header !== "string" || forged.rawLines !== undefined) return false;
  const token = /^Bearer ([\x21-\x7e]+)$/.exec(header)?.[1];
  return token !== undefined && token.length <= 8192 && token.split(".").length === 3;
}

/** Runs `work` with `n` in flight. */
async function inFlight<T>(
  items: readonly T[],
  n: number,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) {
        const index = next++;
        await work(items[index]!, index);
      }
    }),
  );
}

/** The parts of a secret to look for: it whole, its dot-separated segments, its first and last 16 characters. */
function piecesOf(secret: string): string[] {
  if (secret.length < 8) return [];
  const pieces = [secret, ...secret.split(".").filter((part) => part.length >= 16)];
  if (secret.length >= 32) pieces.push(secret.slice(0, 16), secret.slice(-16));
  return pieces;
}

let issuer: AuthServer;
let stranger: AuthServer;
let gw: SignInGateway;
let ctx: ForgeryContext;
let targets: Target[];
/** Key material of both servers and the static token: none may come back in any answer. */
let keyPieces: string[];
let sseStream: { close(): void } | undefined;
/** When the gateway started fetching keys (the issuer's counts were reset then). */
let runStart = 0;
const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
const NO_TOKEN: Forged = { headers: {}, secrets: [] };

beforeAll(async () => {
  [issuer, stranger] = await Promise.all([startAuthServer(), startAuthServer()]);
  gw = await startSignInGateway(issuer.issuer, issuer.resourceServerClient);
  issuer.resetCounts();
  stranger.resetCounts();
  runStart = performance.now();
  const resource = `${gw.origin}/mcp`;
  const elsewhere = "http://127.0.0.1:1/mcp";
  const opaqueElsewhere = "http://127.0.0.1:2/mcp";
  issuer.setResource(opaqueElsewhere, { format: "opaque" });
  stranger.setResource(resource, { format: "opaque" });
  // Real tokens the gateway must refuse: the issuer's ID tokens and its access tokens for another
  // resource (one sign-in gives both; JWT and opaque), and the stranger's for this very resource.
  const [alice, bob, opaque, strangeAlice, strangeOpaque] = await Promise.all([
    issuer.signIn({ user: "alice", resource: elsewhere, scopes: ["openid", "mcp:tools"] }),
    issuer.signIn({ user: "bob", resource: elsewhere, scopes: ["openid", "mcp:tools"] }),
    issuer.signIn({ user: "alice", resource: opaqueElsewhere }),
    stranger.signIn({ user: "alice", resource, scopes: ["openid", "mcp:tools"] }),
    stranger.signIn({ user: "bob", resource }),
  ]);
  const valid = await issuer.sign({
    sub: "alice",
    email: "alice@example.com",
    groups: ["eng"],
    scope: "mcp:tools",
    aud: resource,
    client_id: "forged-run",
    exp: Math.floor(Date.now() / 1000) + 3600,
  });
  ctx = {
    random: rng(24),
    origin: gw.origin,
    resource,
    issuer,
    stranger,
    valid,
    idTokens: [alice.idToken!, bob.idToken!, strangeAlice.idToken!],
    otherResourceTokens: [alice.accessToken, bob.accessToken, opaque.accessToken],
    strangerTokens: [strangeAlice.accessToken, strangeOpaque.accessToken],
    toleranceS: TOLERANCE_S,
  };
  const session = await openSession(gw.origin, valid);
  const sse = await openSseSession(gw.origin, valid);
  sseStream = sse;
  targets = targetsOf(session, sse.messages);
  keyPieces = [STATIC];
  for (const key of [...issuer.keys, ...stranger.keys]) {
    const jwk = key.privateJwk as Record<string, unknown>;
    for (const name of ["n", "x", "y", "d", "p", "q", "dp", "dq", "qi"])
      if (typeof jwk[name] === "string") keyPieces.push(jwk[name] as string);
    keyPieces.push(
      ...key.publicPem.split("\n").filter((line) => line.length >= 32 && !line.startsWith("-----")),
    );
  }
}, 120_000);

afterAll(async () => {
  sseStream?.close();
  agent.destroy();
  await gw?.close();
  await issuer?.close();
  await stranger?.close();
});

/** What is wrong with `answer` to `forged` at `target`, if anything. */
function problemOf(
  target: Target,
  forged: Forged,
  answer: Answer,
  refusal: RegExp | undefined,
): string | undefined {
  const { status } = answer;
  if (status === "upgraded") return "a WebSocket was opened";
  if (status === "reset") return forged.nodeRefuses === 431 ? undefined : `no answer (${answer.body})`;
  if (status < 300 || status >= 500) return `answered ${status}`;
  const text = `${answer.body}\n${Object.values(answer.headers).join("\n")}`;
  for (const secret of [...forged.secrets, ...keyPieces])
    for (const piece of piecesOf(secret))
      if (text.includes(piece)) return `the answer holds ${piece.length} characters of a token or key`;
  if (status === forged.nodeRefuses) return undefined;
  if (status !== 401) return `answered ${status}, not 401`;
  const challenge = String(answer.headers["www-authenticate"] ?? "");
  // A token under the DPoP scheme is DPoP's to refuse (RFC 9449 §7.1): its challenge, the same metadata.
  const scheme = String(forged.headers.authorization ?? "").startsWith("DPoP ") ? "DPoP" : "Bearer";
  const expected = `${scheme} resource_metadata="${gw.origin}/.well-known/oauth-protected-resource${target.metadata}"`;
  if (!challenge.startsWith(expected)) return `401 without the challenge (${challenge})`;
  if (answer.body.includes('"result"')) return "an MCP result in a 401";
  // Refused by the check the kind aims at, not by chance on another (that one would go untried).
  const message = messageOf(answer.body);
  if (refusal !== undefined && !refusal.test(message)) return `refused for another reason: ${message}`;
  return undefined;
}

/** Each kind in turn, each kind going round every entry: with TOKENS ≥ kinds × entries, every pair is tried. */
function planOf(count: number): Array<{ kind: number; target: Target }> {
  const kinds = FORGERIES.length;
  return Array.from({ length: count }, (_, i) => ({
    kind: i % kinds,
    target: targets[((i % kinds) + Math.floor(i / kinds)) % targets.length]!,
  }));
}

/** What the attack measured, for the checks after it. */
let attack: { elapsedS: number; unknownKids: number } | undefined;

describe("forged or wrong tokens against a gateway that signs users in", () => {
  it("admits a valid token on every entry the attack goes to (a 401 there is the credential's doing)", async () => {
    for (const target of targets) {
      const answer = await send(
        gw.origin,
        target,
        { headers: { authorization: `Bearer ${ctx.valid}` }, secrets: [] },
        agent,
      );
      expect(answer.status, target.name).toBe(target.admitted);
      const none = await send(gw.origin, target, NO_TOKEN, agent);
      expect(none.status, target.name).toBe(401);
    }
  }, 60_000);

  it(
    `lets none of ${TOKENS} forged or wrong tokens through on any entry: 401 with a challenge, never 2xx or 5xx, nothing of the token or keys in the answer`,
    async () => {
      expect(TOKENS).toBeGreaterThanOrEqual(FORGERIES.length * targets.length);
      const plan = planOf(TOKENS);
      const forged: Forged[] = [];
      for (const step of plan) forged.push(await FORGERIES[step.kind]!.make(ctx));
      const unknownKids = plan.filter((step) => FORGERIES[step.kind]!.unpublishedKid === true).length;

      const problems: string[] = [];
      const statuses = new Map<number | string, number>();
      const messages = new Set<string>();
      const all = await timed(plan.length, () =>
        inFlight(plan, IN_FLIGHT, async (step, i) => {
          const answer = await send(gw.origin, step.target, forged[i]!, agent);
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          if (typeof answer.status === "number") messages.add(messageOf(answer.body));
          const problem = problemOf(step.target, forged[i]!, answer, FORGERIES[step.kind]!.refusal);
          if (problem !== undefined)
            problems.push(`${FORGERIES[step.kind]!.kind} → ${step.target.name}: ${problem}`);
        }),
      );
      expect(problems).toEqual([]);
      // The answers name kinds of fault, never anything of the token: a handful of texts in all.
      expect(messages.size).toBeLessThanOrEqual(FORGERIES.length);
      // A forged token is the caller's fault: nothing is logged as if the identity provider failed.
      expect(gw.events).toEqual([]);

      // The cost of a refusal, against the same requests without any credential. The first
      // figure holds the in-process issuer's introspections of opaque tokens; the JWT-shaped
      // ones are checked by the gateway alone (signature, claims), so they are timed apart.
      const jwts = plan.flatMap((step, i) => (isJwtBearer(forged[i]!) ? [{ step, forged: forged[i]! }] : []));
      const signed = await timed(jwts.length, () =>
        inFlight(jwts, IN_FLIGHT, async ({ step, forged: one }) => {
          const answer = await send(gw.origin, step.target, one, agent);
          expect(problemOf(step.target, one, answer, FORGERIES[step.kind]!.refusal)).toBeUndefined();
        }),
      );
      const bare = await timed(plan.length, () =>
        inFlight(plan, IN_FLIGHT, async (step) => {
          expect((await send(gw.origin, step.target, NO_TOKEN, agent)).status).toBe(401);
        }),
      );
      attack = { elapsedS: (performance.now() - runStart) / 1000, unknownKids };

      const tally = [...statuses].map(([status, n]) => `${n} x ${status}`).join(", ");
      reportFigure(
        "forged tokens",
        `${TOKENS} tokens of ${FORGERIES.length} kinds over ${targets.length} entries, ${IN_FLIGHT} in flight: ` +
          `${tally}; 0 got through, 0 x 5xx; ${messages.size} distinct refusal messages`,
      );
      const cost = (pass: Timed) => `${pass.perSecond} refused/s, ${pass.cpuMicros} us CPU each`;
      reportFigure(
        "forged tokens",
        `whole process (client, gateway, in-process issuer): all kinds ${cost(all)}; ` +
          `${jwts.length} JWT-shaped ones ${cost(signed)}; no token ${cost(bare)}; ` +
          `CPU ratio JWT-shaped / no token ${(signed.cpuMicros / bare.cpuMicros).toFixed(2)}`,
      );
    },
    attackTimeout(120_000, 900_000),
  );

  it("fetched the issuer's keys at most once per jwksCooldown however many unknown kids came, and never a key a token pointed to", () => {
    expect(attack, "the attack above did not finish").toBeDefined();
    const { elapsedS, unknownKids } = attack!;
    const bound = 1 + Math.floor((elapsedS * 1000) / COOLDOWN_MS);
    expect(issuer.jwksFetches).toBeGreaterThanOrEqual(1);
    expect(issuer.jwksFetches).toBeLessThanOrEqual(bound);
    expect(gw.authenticator.keyFetches).toEqual([issuer.jwksFetches]);
    // `jku`, `x5u` and `jwk` in a header are not followed: the stranger's keys were never asked for.
    expect(stranger.jwksFetches).toBe(0);
    expect(stranger.introspections).toBe(0);
    reportFigure(
      "forged tokens",
      `JWKS fetches: ${issuer.jwksFetches} over ${elapsedS.toFixed(1)} s (cooldown ${COOLDOWN_MS / 1000} s, ` +
        `bound ${bound}) with ${unknownKids} tokens naming a kid the issuer does not publish; ` +
        `${issuer.introspections} introspections (an opaque token is asked about each time it comes)`,
    );
  });

  it("kept no forged token, and locked nobody out: a user who signs in for real and the static token still work", async () => {
    expect(attack, "the attack above did not finish").toBeDefined();
    // Only the one valid token of the run was verified and kept.
    expect(gw.authenticator.cachedTokens).toBe(1);
    reportFigure("forged tokens", `token cache after the attack: ${gw.authenticator.cachedTokens} entry`);

    // Alice signs in through the SDK's own discovery (401 → metadata → registration → PKCE).
    const auth = issuer.clientProvider({ user: "alice" });
    const client = new Client({ name: "after-the-attack", version: "1.0.0" });
    await connectWithSignIn(
      client,
      () => new StreamableHTTPClientTransport(new URL(`${gw.origin}/mcp`), { authProvider: auth }),
      auth,
    );
    try {
      expect(
        resultText(await client.callTool({ name: "fx__echo", arguments: { message: "still in" } })),
      ).toBe("echo: still in");
    } finally {
      await client.close();
    }
    // Bob over /ws sees his profile.
    const bob = await issuer.signIn({ user: "bob", resource: `${gw.origin}/ws` });
    const ws = new Client({ name: "after-the-attack", version: "1.0.0" });
    await ws.connect(
      new WebSocketClientTransport({
        url: gw.front.wsUrl,
        headers: { authorization: `Bearer ${bob.accessToken}` },
      }),
    );
    try {
      expect((await ws.listTools()).tools.map((tool) => tool.name)).toEqual(["fx__echo"]);
    } finally {
      await ws.close();
    }
    for (const token of [STATIC, ctx.valid]) {
      const call = rev2026Request(9, "tools/call", { name: "fx__echo", arguments: { message: "s" } });
      const answer = await postRev2026(`${gw.origin}/mcp`, call, { authorization: `Bearer ${token}` });
      expect(answer.status).toBe(200);
      expect(resultText((answer.json as { result: unknown }).result)).toBe("echo: s");
    }
    expect(gw.authenticator.cachedTokens).toBe(3);

    // The gateway logged nothing through it all; the providers never failed.
    expect(gw.events).toEqual([]);
    expect(issuer.serverErrors).toEqual([]);
    expect(stranger.serverErrors).toEqual([]);
  }, 60_000);
});
