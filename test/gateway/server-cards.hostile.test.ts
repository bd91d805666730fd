import { request } from "node:http";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OAuthAuthenticator } from "../../src/auth/oauth-authenticator.js";
import { parseConfig } from "../../src/config/parse-config.js";
import { SKILLS_EXTENSION } from "../../src/protocol/extensions.js";
import { configOf, fixture, stdio } from "../support/config.js";
import { type InProcessGateway, startGateway } from "../support/gateway.js";
import { validateAiCatalog, validateServerCard } from "../support/server-card-schema.js";

/**
 * The gateway's Server Card against a forged `Host` and against anonymous readers: its URLs are
 * the configured or bound ones, and a gateway that needs a credential shows an anonymous reader
 * nothing of the servers behind it (here a skills server, whose extension the open front lists).
 */

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((done, fail) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => done({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on("error", fail);
    req.end();
  });
}

const originOf = (url: string) => url.replace(/\/mcp$/, "");

let gw: InProcessGateway;
beforeAll(async () => {
  const skills = stdio("skills", process.execPath, [resolve("test/fixtures/servers/skills-server.mjs")]);
  gw = await startGateway(configOf([fixture("fx"), skills]));
});
afterAll(async () => {
  await gw?.stop();
});

describe("the Server Card, read by a stranger", () => {
  it("of the open loopback front lists the skills extension (what the others must hide)", async () => {
    const card = JSON.parse((await get(`${gw.origin}/mcp/server-card`)).body);
    expect(card._meta["mcplex/gateway"].extensions).toContain(SKILLS_EXTENSION);
  });

  it("never names a Host header it was sent", async () => {
    const res = await get(`${gw.origin}/mcp/server-card`, { host: "evil.example:80" });
    expect(res.status).toBe(200);
    expect(res.body).not.toContain("evil");
    expect(JSON.parse(res.body).remotes[0].url).toBe(gw.url);
    const catalog = await get(`${gw.origin}/.well-known/ai-catalog.json`, { host: "evil.example" });
    expect(catalog.body).not.toContain("evil");
  });

  it("names auth.resource and the protected-resource metadata, and no server's extensions", async () => {
    const config = parseConfig(
      "servers: {}\nauth:\n  resource: https://mcp.example.com\n  issuers:\n    - issuer: https://idp.example.com\n",
      { source: "mcplex.yaml", env: {} },
    );
    const front = await gw.addFront({ authenticator: new OAuthAuthenticator(config.auth!) });
    // Served without a credential: discovery comes before sign-in.
    const res = await get(`${originOf(front.url)}/mcp/server-card`, { host: "attacker.example" });
    expect(res.status).toBe(200);
    const card = JSON.parse(res.body);
    expect(validateServerCard(card), JSON.stringify(validateServerCard.errors)).toBe(true);
    expect(card.name).toBe("com.example.mcp/mcplex");
    expect(card.remotes[0].url).toBe("https://mcp.example.com/mcp");
    expect(card.remotes[0].headers[0]).toMatchObject({
      name: "Authorization",
      isRequired: true,
      isSecret: true,
    });
    expect(card._meta["mcplex/gateway"]).toEqual({
      websocket: "wss://mcp.example.com/ws",
      signIn: { resourceMetadata: "https://mcp.example.com/.well-known/oauth-protected-resource/mcp" },
    });
    const catalog = JSON.parse((await get(`${originOf(front.url)}/.well-known/ai-catalog.json`)).body);
    expect(validateAiCatalog(catalog)).toBe(true);
    expect(catalog.entries[0]).toMatchObject({
      identifier: "urn:air:mcp.example.com:mcp:mcplex",
      url: "https://mcp.example.com/mcp/server-card",
    });
    // The metadata the card points to is the gateway's own.
    const metadata = JSON.parse(
      (await get(`${originOf(front.url)}/.well-known/oauth-protected-resource/mcp`)).body,
    );
    expect(metadata.resource).toBe("https://mcp.example.com/mcp");
  });

  it("of a gateway with static tokens asks for one and declares no extension", async () => {
    const front = await gw.addFront({ tokens: [{ token: "a-token-of-sixteen-chars-or-more" }] });
    const card = JSON.parse((await get(`${originOf(front.url)}/mcp/server-card`)).body);
    expect(validateServerCard(card)).toBe(true);
    expect(card.remotes[0].headers[0].variables.token.isSecret).toBe(true);
    expect(card._meta["mcplex/gateway"]).toEqual({ websocket: front.wsUrl });
  });
});
