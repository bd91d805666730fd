/**
 * The identity provider's keys change and the provider goes away, while mcplex serves: tokens
 * signed with a rotated key pass without a restart (mcplex fetches the JWKS again on the
 * unknown `kid`, at most once per `auth.jwksCooldown`), keys withdrawn stop verifying, and
 * during an outage known keys keep working while new ones fail closed with a clear log line
 * (the `serve()` event, and the CLI's stderr). The provider is the real one of
 * test/support/oidc-provider.ts; mcplex is `serve()` of a YAML config, then `mcplex serve`.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningGateway, type ServeEvent, serve } from "../../src/assembly/serve.js";
import { parseConfig } from "../../src/config/parse-config.js";
import {
  COMMANDS,
  postRev2026,
  resultText,
  rev2026Request,
  type ServeProcess,
  serveHttp,
  yamlConfig,
} from "../support/gateway.js";
import {
  type AuthServer,
  CookieJar,
  generateSigningKey,
  type RegisteredClient,
  startAuthServer,
} from "../support/oidc-provider.js";
import { until } from "../support/wait.js";

/**
 * Short, so that the tests wait little for mcplex to look at the keys again; long enough that
 * many requests fall within one interval.
 */
const COOLDOWN_MS = 1000;

function authBlock(as: AuthServer): string {
  return `auth:
  issuers:
    - issuer: ${as.issuer}
  scopes: ["mcp:tools"]
  jwksCooldown: ${COOLDOWN_MS}ms
`;
}

let as: AuthServer;
beforeAll(async () => {
  as = await startAuthServer();
});
afterAll(async () => {
  expect(as?.serverErrors).toEqual([]);
  await as?.close();
});

/** A tool call with `token`: its status, and the echo or the refusal's text. */
async function callWith(origin: string, token: string) {
  const answer = await postRev2026(
    `${origin}/mcp`,
    rev2026Request(1, "tools/call", { name: "fx__echo", arguments: { message: "k" } }),
    { authorization: `Bearer ${token}` },
  );
  // Whatever the provider does, mcplex answers a token 200, 401 or 403: never a 5xx.
  expect([200, 401, 403]).toContain(answer.status);
  return {
    status: answer.status,
    text: answer.status === 200 ? resultText((answer.json as { result?: unknown }).result) : answer.body,
    challenge: answer.headers["www-authenticate"],
  };
}

/** Retries `token` until mcplex accepts it (within a bound); each refusal must be a clean 401. */
async function acceptedOnceKeysRefetched(origin: string, token: string): Promise<void> {
  await until(
    async () => {
      const answer = await callWith(origin, token);
      if (answer.status === 200) return true;
      expect(answer.status).toBe(401);
      expect(answer.text).toContain("signed with a key the issuer does not publish");
      return false;
    },
    15_000,
    "a token signed with the new key accepted",
  );
}

describe("mcplex (serve) while the provider rotates its keys and goes away", () => {
  let running: RunningGateway;
  let origin: string;
  const events: ServeEvent[] = [];
  let client: RegisteredClient;
  const jar = new CookieJar();
  let since = 0;

  /** A real sign-in of alice for mcplex's /mcp: the provider signs with its key of the moment. */
  const signIn = async () =>
    (await as.signIn({ user: "alice", resource: `${origin}/mcp`, client, jar })).accessToken;
  /** A token the provider's current key signs, that mcplex has not seen yet. */
  const mint = () => as.sign({ sub: "alice", aud: `${origin}/mcp`, scope: "mcp:tools" });

  beforeAll(async () => {
    const config = parseConfig(yamlConfig({ fx: COMMANDS.fixture }, authBlock(as)), {
      source: "mcplex.yaml",
      env: {},
    });
    running = await serve({
      config,
      transport: "http",
      http: { host: "127.0.0.1", port: 0 },
      watch: false,
      onEvent: (event) => events.push(event),
    });
    await running.started;
    origin = running.http!.url.replace(/\/mcp$/, "");
    client = await as.registerClient();
    as.resetCounts();
    since = Date.now();
  }, 60_000);
  afterAll(() => running?.close());

  it("accepts tokens signed with a rotated key without a restart", async () => {
    const before = await signIn();
    expect((await callWith(origin, before)).text).toBe("echo: k");
    expect(as.jwksFetches).toBe(1);

    const [fresh] = await as.rotateKeys();
    const after = await signIn();
    expect(decodeProtectedHeader(after).kid).toBe(fresh!.kid);
    await acceptedOnceKeysRefetched(origin, after);
    expect(as.jwksFetches).toBe(2);
    // The old key is still published: a token it signs, not seen before, passes too.
    const oldKid = decodeProtectedHeader(before).kid!;
    const byOldKey = await as.sign(
      { sub: "alice", aud: `${origin}/mcp`, scope: "mcp:tools" },
      { kid: oldKid },
    );
    expect(decodeProtectedHeader(byOldKey).kid).toBe(oldKid);
    expect((await callWith(origin, byOldKey)).status).toBe(200);
  });

  it("fetches the keys at most once per cooldown, however many unknown kids arrive", async () => {
    const tokens = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        as.sign({ sub: "alice", aud: `${origin}/mcp`, scope: "mcp:tools" }, { kid: `unknown-${i}` }),
      ),
    );
    const fetched = as.jwksFetches;
    const start = Date.now();
    const answers = await Promise.all(tokens.map((token) => callWith(origin, token)));
    // One fetch for the lot, or one more per cooldown the burst outlasted on a slow machine.
    const allowed = 1 + Math.floor((Date.now() - start) / COOLDOWN_MS);
    for (const answer of answers) {
      expect(answer.status).toBe(401);
      expect(answer.challenge).toContain('error="invalid_token"');
    }
    expect(as.jwksFetches - fetched).toBeLessThanOrEqual(allowed);
  });

  it("refuses, after the next fetch, tokens of keys the provider withdrew (tokens already verified stay until they expire)", async () => {
    const verified = await signIn();
    expect((await callWith(origin, verified)).status).toBe(200);
    const unseen = await mint();
    const [fresh] = await as.rotateKeys({ dropOld: true });
    const next = await signIn();
    expect(decodeProtectedHeader(next).kid).toBe(fresh!.kid);
    await acceptedOnceKeysRefetched(origin, next);

    const refused = await callWith(origin, unseen);
    expect(refused.status).toBe(401);
    expect(refused.text).toContain("signed with a key the issuer does not publish");
    // Verified before the withdrawal, kept by its hash until its exp (the cache's rule).
    expect((await callWith(origin, verified)).status).toBe(200);
  });

  it("while the provider is down: known keys verify, new kids fail closed with a log line; back up, new kids pass", async () => {
    const [known, knownLater] = await Promise.all([mint(), mint()]);
    const outsider = await as.sign(
      { sub: "alice", aud: `${origin}/mcp`, scope: "mcp:tools" },
      { key: await generateSigningKey("RS256") },
    );
    await as.stop();
    // Rotated while down: the provider publishes this key when it is back.
    const [fresh] = await as.rotateKeys();
    const rotated = await mint();
    expect(decodeProtectedHeader(rotated).kid).toBe(fresh!.kid);
    try {
      expect((await callWith(origin, known)).text).toBe("echo: k");
      for (const token of [outsider, rotated]) {
        const refused = await callWith(origin, token);
        expect(refused.status).toBe(401);
        expect(refused.challenge).toContain('error="invalid_token"');
      }
      // The next fetch mcplex tries (once the cooldown allows) fails, and it says so.
      await until(
        async () => {
          expect((await callWith(origin, rotated)).status).toBe(401);
          return events.some((event) => event.type === "auth");
        },
        15_000,
        "a log line about the unreachable provider",
      );
      const [logged] = events.filter((event) => event.type === "auth");
      expect(logged).toEqual({
        type: "auth",
        message: expect.stringMatching(
          new RegExp(
            `^sign-in: the keys of ${as.issuer} could not be fetched \\(.+\\); known keys still verify, tokens signed with others are refused until they can be$`,
          ),
        ),
      });
      // A known key still verifies after the failed fetch (a token not seen before: not cached).
      expect((await callWith(origin, knownLater)).status).toBe(200);
    } finally {
      await as.start();
    }
    await acceptedOnceKeysRefetched(origin, rotated);
    expect((await callWith(origin, outsider)).status).toBe(401);
  });

  it("asked the provider for its keys at most once per cooldown throughout", () => {
    const intervals = Math.floor((Date.now() - since) / COOLDOWN_MS);
    expect(as.jwksFetches).toBeGreaterThanOrEqual(4);
    expect(as.jwksFetches).toBeLessThanOrEqual(intervals + 1);
  });
});

describe("mcplex serve (the CLI) while the provider is away", () => {
  let dir: string;
  let gateway: ServeProcess;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mcplex-key-rotation-"));
    const file = join(dir, "mcplex.yaml");
    await writeFile(file, yamlConfig({ fx: COMMANDS.fixture }, authBlock(as)));
    gateway = await serveHttp(["--config", file]);
  }, 60_000);
  afterAll(async () => {
    await gateway?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps known keys, refuses a new kid with 401, and says on stderr that the keys could not be fetched", async () => {
    const { origin } = gateway;
    const claims = { sub: "alice", aud: `${origin}/mcp`, scope: "mcp:tools" };
    const first = await as.sign(claims);
    expect((await callWith(origin, first)).text).toBe("echo: k");
    const known = await as.sign(claims);
    const outsider = await as.sign(claims, { key: await generateSigningKey("ES256") });
    await as.stop();
    try {
      await until(
        async () => {
          expect((await callWith(origin, outsider)).status).toBe(401);
          return gateway.stderr().includes("could not be fetched");
        },
        15_000,
        "mcplex serve's warning about the provider",
      );
      expect(gateway.stderr()).toMatch(
        new RegExp(
          `mcplex: warning: sign-in: the keys of ${as.issuer} could not be fetched \\(${as.endpoints.jwks}: [^)]+\\); known keys still verify`,
        ),
      );
      expect((await callWith(origin, known)).text).toBe("echo: k");
      // The log names the provider, never a token.
      for (const token of [first, known, outsider]) expect(gateway.stderr()).not.toContain(token);
    } finally {
      await as.start();
    }
  });
});
