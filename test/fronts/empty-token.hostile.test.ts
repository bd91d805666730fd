import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpFront } from "../../src/fronts/http-front.js";
import { Gateway } from "../../src/gateway/gateway.js";
import { Hub } from "../../src/hub/hub.js";
import { runCli } from "../support/cli.js";
import { configOf, fixture } from "../support/config.js";
import {
  COMMANDS,
  type InProcessGateway,
  postRev2026,
  rev2026Request,
  type ServeProcess,
  serveHttp,
  startGateway,
  yamlConfig,
} from "../support/gateway.js";

// The attack: `mcplex serve --host 0.0.0.0 --token "$UNSET_VAR"` listened with an empty token, and
// `Authorization: Bearer \xA0` (trimmed to nothing) got every tool. Tokens too weak to protect
// anything are refused wherever they come from, and the header is parsed by RFC 6750.

const GOOD = "a-good-token-0123456789";
/** Tokens refused from every source: empty, blank (ASCII and Unicode), too short, spaced inside. */
const WEAK = ["", "   ", "\u00A0", "\t", "short-token", "fifteen-chars!!", "has a space in the middle"];

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-token-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("an HTTP front given a weak token", () => {
  it.each(WEAK)(
    "refuses to start on 0.0.0.0 with token %j, naming the entry and the minimum",
    async (token) => {
      const hub = new Hub({ config: configOf([]) });
      const gateway = new Gateway(hub);
      try {
        const started = startHttpFront(gateway, {
          host: "0.0.0.0",
          port: 0,
          tokens: [{ token: GOOD }, { token }],
        });
        const error = await started.then(
          async (front) => {
            await front.close();
            return undefined;
          },
          (e: Error) => e,
        );
        expect(error?.message).toMatch(/tokens\[1\]\.token/);
        expect(error?.message).toMatch(/16 characters/);
        if (token.trim() !== "") expect(error?.message).not.toContain(token);
      } finally {
        gateway.close();
        await hub.close();
      }
    },
  );

  it("keeps the old tokens when new ones are weak", async () => {
    const gw = await startGateway(configOf([fixture("fx")]), { tokens: [{ token: GOOD }] });
    try {
      for (const token of WEAK) expect(() => gw.front.setTokens([{ token }])).toThrow(/tokens\[0\]\.token/);
      const list = rev2026Request(1, "tools/list");
      expect((await postRev2026(gw.url, list, { authorization: `Bearer ${GOOD}` })).status).toBe(200);
      expect((await postWithAuthorization(gw.url, "Bearer \u00A0")).status).toBe(401);
    } finally {
      await gw.stop();
    }
  });
});

/** Authorization values refused with 401 while GOOD is the configured token. */
const JUNK = [
  "Bearer \u00A0",
  `Bearer \u00A0${GOOD}`,
  `Bearer ${GOOD}\u00A0`,
  `Bearer\u00A0${GOOD}`,
  `Bearer ${GOOD} extra`,
  `Bearer ${GOOD},`,
  `Bearer  ${GOOD} x`,
  `Basic ${GOOD}`,
  `Bearer`,
  `Bearer `,
  `${GOOD}`,
  `Bearer ${GOOD.slice(0, -1)}`,
];

/**
 * POSTs a 2026 tools/list with this Authorization value written byte for byte (latin1, as curl
 * sends `\xA0`; node:http's client would encode it as UTF-8): the status and the body.
 */
async function postWithAuthorization(
  url: string,
  authorization: string,
): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(url);
  const body = JSON.stringify(rev2026Request(1, "tools/list"));
  const head = [
    "POST /mcp HTTP/1.1",
    `Host: ${hostname}:${port}`,
    "Content-Type: application/json",
    "Accept: application/json, text/event-stream",
    "Mcp-Protocol-Version: 2026-07-28",
    "Mcp-Method: tools/list",
    `Authorization: ${authorization}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    "Connection: close",
  ].join("\r\n");
  const socket = connect(Number(port), hostname);
  socket.end(Buffer.from(`${head}\r\n\r\n${body}`, "latin1"));
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return { status: Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1]), text };
}

describe("the Authorization header on a real socket", () => {
  let gw: InProcessGateway;
  beforeAll(async () => {
    gw = await startGateway(configOf([fixture("fx")]), { tokens: [{ token: GOOD }] });
  });
  afterAll(() => gw?.stop());

  it.each(JUNK)("refuses %j with 401", async (authorization) => {
    const res = await postWithAuthorization(gw.url, authorization);
    expect(res.status).toBe(401);
    expect(res.text).toMatch(/\r\nwww-authenticate: Bearer realm="mcplex"/i);
    expect(res.text).not.toContain(GOOD);
  });

  it.each([`Bearer ${GOOD}`, `bearer ${GOOD}`, `BEARER  ${GOOD}`, `Bearer\t${GOOD}`, `Bearer ${GOOD} \t`])(
    "accepts %j (spaces and tabs around the token only)",
    async (authorization) => {
      const res = await postWithAuthorization(gw.url, authorization);
      expect(res.status).toBe(200);
    },
  );
});

describe("mcplex serve with a weak token", () => {
  let config: string;
  beforeAll(async () => {
    config = join(dir, "mcplex.yaml");
    await writeFile(config, yamlConfig({ fx: COMMANDS.fixture }));
  });

  it.each(["", " ", "\u00A0", "short"])(
    "refuses --token %j (an unset variable) on 0.0.0.0, naming --token and the minimum",
    async (token) => {
      const result = await runCli(
        ["serve", "--http", "--host", "0.0.0.0", "--port", "0", "--config", config, "--token", token],
        { timeout: 20_000 },
      );
      expect(result.stderr).toMatch(/--token/);
      expect(result.stderr).toMatch(/16 characters/);
      expect(result.code).toBe(2);
      expect(result.stderr).not.toMatch(/Streamable HTTP/);
    },
  );

  it("refuses a weak token in the config file, naming its path, without printing it", async () => {
    const file = join(dir, "weak.yaml");
    await writeFile(
      file,
      yamlConfig({ fx: COMMANDS.fixture }, `tokens:\n  - token: ${GOOD}\n  - token: "tiny-secret"\n`),
    );
    const result = await runCli(["serve", "--http", "--port", "0", "--config", file], { timeout: 20_000 });
    expect(result.stderr).toMatch(/tokens\[1\]\.token/);
    expect(result.stderr).toMatch(/16 characters/);
    expect(result.stderr).not.toContain("tiny-secret");
    expect(result.code).not.toBe(0);
    expect(result.stderr).not.toMatch(/Streamable HTTP/);
  });

  describe("on reload", () => {
    let gw: ServeProcess;
    let file: string;
    beforeAll(async () => {
      file = join(dir, "reload.yaml");
      await writeFile(file, yamlConfig({ fx: COMMANDS.fixture }, `tokens:\n  - token: ${GOOD}\n`));
      gw = await serveHttp(["--config", file]);
    });
    afterAll(() => gw?.stop());

    it("refuses a weak token, keeps the old one, and says which entry", async () => {
      await writeFile(file, yamlConfig({ fx: COMMANDS.fixture }, `tokens:\n  - token: "weak-reload"\n`));
      const reported = new Promise<void>((done) => {
        const check = () => {
          if (!/config not reloaded/.test(gw.stderr())) return;
          gw.child.stderr?.off("data", check);
          done();
        };
        gw.child.stderr?.on("data", check);
        check();
      });
      await reported;
      expect(gw.stderr()).toMatch(/config not reloaded:[\s\S]*tokens\[0\]\.token/);
      const list = rev2026Request(1, "tools/list");
      expect((await postRev2026(gw.url, list, { authorization: `Bearer ${GOOD}` })).status).toBe(200);
      expect((await postWithAuthorization(gw.url, "Bearer \u00A0")).status).toBe(401);
    });
  });
});
