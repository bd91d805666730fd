import { randomBytes } from "node:crypto";
import { Agent } from "node:http";
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Cluster } from "../../src/cluster/cluster.js";
import { eventually, rev2026Headers, rev2026Request } from "../support/gateway.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";
import { type AuthServer, startAuthServer } from "../support/oidc-provider.js";
import { type RedisProcess, startRedis } from "../support/redis.js";
import { rng } from "../support/rng.js";
import { type DpopGateway, startDpopGateway } from "./dpop-gateway.js";
import {
  type Attempt,
  type Entry,
  PROOF_KINDS,
  type ProofContext,
  type ProofKey,
  proofFor,
  requestOf,
  type Shot,
} from "./dpop-proof-kinds.js";
import { type Answer, messageOf, openSseSession, send, type Target } from "./guarded-entries.js";

// The hostile run of DPoP at the gateway (RFC 9449): two replicas behind one public URL
// (`auth.resource`), sharing DPoP's jti store and nonce key through a real Redis as `cluster:`
// makes them, DPoP required with nonces. Over a thousand forged, replayed and mismatched proofs
// (dpop-proof-kinds.ts) go to /mcp, the /ws upgrade and an SSE session's /messages of either
// replica; every one is a 401 with the DPoP challenge and the error its kind aims at, none is a
// 2xx, an upgrade or a 5xx, and the `mark` call each carries never ran. The valid proofs a
// replay kind sends first do run: the refusals are the proofs' doing, not the gateway's.

const ATTEMPTS = attackSize(1000, 6000);
const IN_FLIGHT = 8;
const RESOURCE = "http://mcp.dpop-hostile.test";
const SECRET = "dpop-hostile-cluster-secret-0123456789abcdef";
const WINDOW_S = 120;
const TOLERANCE_S = 30;

let as: AuthServer;
let redis: RedisProcess;
const clusters: Cluster[] = [];
const replicas: DpopGateway[] = [];
/** Each replica's SSE session: its `/messages?sessionId=` path, and what closes its stream. */
const sse: Array<{ messages: string; close(): void }> = [];
let ctx: ProofContext & { setNonce(nonce: string): void };
const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });

async function proofKey(alg: "ES256" | "RS256"): Promise<ProofKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  return {
    privateKey,
    publicJwk,
    privateJwk: await exportJWK(privateKey),
    alg,
    jkt: await calculateJwkThumbprint(publicJwk),
  };
}

/** The request of `shot`, carrying a `mark` call tagged `tag` where it has a body. */
function targetOf(shot: Shot, tag: string): Target {
  const { method, path } = requestOf(shot.entry);
  if (shot.entry === "ws")
    return {
      name: "GET /ws (upgrade)",
      method,
      path,
      headers: {
        connection: "Upgrade",
        upgrade: "websocket",
        "sec-websocket-version": "13",
        "sec-websocket-key": randomBytes(16).toString("base64"),
        "sec-websocket-protocol": "mcp",
      },
      upgrade: true,
      metadata: "/ws",
      admitted: "upgraded",
    };
  if (shot.entry === "mcp") {
    const call = rev2026Request(tag, "tools/call", { name: "fx__mark", arguments: { tag } });
    return {
      name: "POST /mcp",
      method,
      path,
      headers: rev2026Headers(call),
      body: JSON.stringify(call),
      metadata: "/mcp",
      admitted: 200,
    };
  }
  const call = {
    jsonrpc: "2.0",
    id: tag,
    method: "tools/call",
    params: { name: "fx__mark", arguments: { tag } },
  };
  return {
    name: "POST /messages",
    method,
    path: sse[shot.replica]!.messages,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(call),
    metadata: "/sse",
    admitted: 202,
  };
}

/** Sends `shot`; keeps the nonce its answer hands out. */
async function fire(shot: Shot, tag: string): Promise<Answer> {
  const answer = await send(
    replicas[shot.replica]!.origin,
    targetOf(shot, tag),
    { headers: shot.headers, secrets: [] },
    agent,
  );
  const nonce = answer.headers["dpop-nonce"];
  if (typeof nonce === "string") ctx.setNonce(nonce);
  return answer;
}

beforeAll(async () => {
  [as, redis] = await Promise.all([startAuthServer(), startRedis()]);
  for (const id of ["a", "b"]) {
    const cluster = new Cluster({ url: redis.url, secret: SECRET, id });
    await cluster.connect();
    clusters.push(cluster);
  }
  replicas.push(
    ...(await Promise.all(
      clusters.map((cluster) =>
        startDpopGateway({
          issuer: as.issuer,
          resource: RESOURCE,
          dpop: `required: true\nnonce: true\nwindow: ${WINDOW_S}s`,
          // What build-fronts.ts hands gatewaySignIn with `cluster:`.
          sharing: { replays: cluster.dpopReplays, nonceKey: cluster.dpopNonceKey },
        }),
      ),
    )),
  );
  const [key, otherKey, rsaKey] = await Promise.all([
    proofKey("ES256"),
    proofKey("ES256"),
    proofKey("RS256"),
  ]);
  const mint = (cnf?: { jkt: string }) =>
    as.sign({
      sub: "alice",
      aud: `${RESOURCE}/mcp`,
      scope: "mcp:tools",
      client_id: "dpop-hostile",
      exp: Math.floor(Date.now() / 1000) + 3600,
      ...(cnf === undefined ? {} : { cnf }),
    });
  const [token, otherToken, unbound] = await Promise.all([
    mint({ jkt: key.jkt }),
    mint({ jkt: key.jkt }),
    mint(),
  ]);
  let nonce = "";
  ctx = {
    random: rng(35),
    resource: RESOURCE,
    origins: [replicas[0]!.origin, replicas[1]!.origin],
    key,
    otherKey,
    rsaKey,
    token,
    otherToken,
    unbound,
    nonce: () => nonce,
    setNonce: (next) => {
      nonce = next;
    },
    windowS: WINDOW_S,
    toleranceS: TOLERANCE_S,
  };
  // The first nonce: what a proof without one is answered with.
  const first = await fire(
    {
      entry: "mcp",
      replica: 0,
      headers: { authorization: `DPoP ${token}`, dpop: await proofFor(ctx, "mcp", { nonce: null }) },
    },
    "nonce-probe",
  );
  expect(first.status).toBe(401);
  expect(nonce).not.toBe("");
  for (const gw of replicas) {
    const proof = await proofFor(ctx, "messages", { htm: "GET", htu: `${RESOURCE}/sse` });
    sse.push(await openSseSession(gw.origin, { authorization: `DPoP ${token}`, dpop: proof }));
  }
}, 120_000);

afterAll(async () => {
  for (const stream of sse) stream.close();
  agent.destroy();
  await Promise.all(replicas.map((gw) => gw.close()));
  await Promise.all(clusters.map((cluster) => cluster.close()));
  await redis?.stop();
  await as?.close();
});

/** What is wrong with the answer to a refused `shot` of `kind`, if anything. */
function problemOf(kind: (typeof PROOF_KINDS)[number], answer: Answer): string | undefined {
  if (answer.status === "upgraded") return "a WebSocket was opened";
  if (answer.status === "reset") return `no answer (${answer.body})`;
  if (answer.status !== 401) return `answered ${answer.status}, not 401`;
  const challenge = String(answer.headers["www-authenticate"] ?? "");
  if (!challenge.startsWith("DPoP resource_metadata="))
    return `401 without the DPoP challenge (${challenge})`;
  if (!challenge.includes(`error="${kind.error}"`))
    return `challenge error is not ${kind.error}: ${challenge}`;
  if (typeof answer.headers["dpop-nonce"] !== "string") return "no DPoP-Nonce beside the refusal";
  const message = messageOf(answer.body);
  if (!kind.refusal.test(message)) return `refused for another reason: ${message}`;
  if (answer.body.includes(ctx.token) || answer.body.includes(ctx.key.privateJwk.d!))
    return "the answer holds the token or key";
  return undefined;
}

/** What the attack left for the checks after it. */
let attack: { refused: string[]; ran: string[] } | undefined;

describe("forged, replayed and mismatched DPoP proofs at two replicas sharing Redis", () => {
  it("admits a valid proof on every entry of both replicas, and hands out a nonce with the answer", async () => {
    for (const replica of [0, 1] as const)
      for (const entry of ["mcp", "ws", "messages"] as Entry[]) {
        const tag = `valid-${entry}-${replica}`;
        const proof = await proofFor(ctx, entry);
        const answer = await fire(
          { entry, replica, headers: { authorization: `DPoP ${ctx.token}`, dpop: proof } },
          tag,
        );
        expect(answer.status, `${entry} at replica ${replica}`).toBe(
          entry === "ws" ? "upgraded" : entry === "mcp" ? 200 : 202,
        );
        // On the 200, the 202 and the upgrade's 101 alike.
        expect(typeof answer.headers["dpop-nonce"], `${entry} at replica ${replica}`).toBe("string");
      }
    await eventually(
      async () => ((await replicas[0]!.marks()).includes("valid-messages-0") ? true : undefined),
      {
        what: "the valid /messages call ran",
      },
    );
  }, 60_000);

  it(
    `refuses every one of ${ATTEMPTS} forged, replayed and mismatched proofs: 401 with the DPoP challenge, the call not run`,
    async () => {
      expect(ATTEMPTS).toBeGreaterThanOrEqual(PROOF_KINDS.length * 3);
      const entries: Entry[] = ["mcp", "ws", "messages"];
      const problems: string[] = [];
      const refused: string[] = [];
      const ran: string[] = [];
      const byKind = new Map<string, number>();
      let next = 0;
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (next < ATTEMPTS) {
            const i = next++;
            const kind = PROOF_KINDS[i % PROOF_KINDS.length]!;
            const entry = entries[Math.floor(i / PROOF_KINDS.length) % entries.length]!;
            const attempt: Attempt = await kind.make(ctx, entry);
            for (const [j, shot] of attempt.before.entries()) {
              const tag = `before-${i}-${j}`;
              const answer = await fire(shot, tag);
              const expected = shot.entry === "ws" ? "upgraded" : shot.entry === "mcp" ? 200 : 202;
              if (answer.status !== expected)
                problems.push(
                  `${kind.kind} (${entry}): the valid proof before it got ${answer.status}: ${messageOf(answer.body)}`,
                );
              else if (shot.entry !== "ws") ran.push(tag);
            }
            const tag = `hostile-${i}`;
            const answer = await fire(attempt.shot, tag);
            const problem = problemOf(kind, answer);
            if (problem !== undefined)
              problems.push(`${kind.kind} (${entry} at replica ${attempt.shot.replica}): ${problem}`);
            refused.push(tag);
            byKind.set(kind.kind, (byKind.get(kind.kind) ?? 0) + 1);
          }
        }),
      );
      expect(problems).toEqual([]);
      attack = { refused, ran };
      reportFigure(
        "DPoP proofs",
        `${ATTEMPTS} hostile proofs of ${PROOF_KINDS.length} kinds over 3 entries of 2 replicas, ${IN_FLIGHT} in flight: all refused; ${ran.length} valid proofs before replays ran`,
      );
    },
    attackTimeout(180_000, 900_000),
  );

  it("ran none of the refused calls and every valid one, and the spent jtis are in Redis", async () => {
    expect(attack, "the attack above did not finish").toBeDefined();
    const { refused, ran } = attack!;
    // The valid calls before the replays ran (those on /messages answer 202 first, then run).
    await eventually(
      async () => {
        const marks = new Set([...(await replicas[0]!.marks()), ...(await replicas[1]!.marks())]);
        return ran.every((tag) => marks.has(tag)) ? marks : undefined;
      },
      { what: "every valid call ran" },
    );
    const marks = new Set([...(await replicas[0]!.marks()), ...(await replicas[1]!.marks())]);
    expect(refused.filter((tag) => marks.has(tag))).toEqual([]);
    const keys = await clusters[0]!.redis.client.keys("mcplex:dpop:*");
    expect(keys.length).toBeGreaterThanOrEqual(ran.length);
    // Hashed: no thumbprint or jti of a client in Redis.
    expect(keys.some((key) => key.includes(ctx.key.jkt))).toBe(false);
  }, 60_000);
});
