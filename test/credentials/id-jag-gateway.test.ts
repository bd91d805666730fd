/**
 * `credentials: { idJag }` through a gateway served by `serve()` with sign-in: each signed-in
 * user's calls to `crm` carry a token the server's own authorization server issued for an ID-JAG
 * that the gateway's identity provider (the company's) issued from that user's sign-in. The
 * provider's policy lets alice reach `crm` and not bob: the company decides, not the gateway.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultText } from "../support/gateway.js";
import { type AuthServer, startAuthServer } from "../support/oidc-provider.js";
import { startTokenCheckingServer, type TokenCheckingServer } from "../support/token-checking-server.js";
import { type PerUserGateway, startPerUserGateway } from "./per-user-gateway.js";

let gw: PerUserGateway;
let serverAs: AuthServer;
let crm: TokenCheckingServer;

beforeAll(async () => {
  serverAs = await startAuthServer({ jwtBearer: true, tokenExchange: false });
  crm = await startTokenCheckingServer({ issuer: serverAs.issuer, jwksUri: serverAs.endpoints.jwks });
  const redeemer = await serverAs.allowJwtBearer({ resources: { [crm.audience]: { scopes: ["crm:read"] } } });
  gw = await startPerUserGateway(["alice", "bob"], "", async (idp) => {
    serverAs.trustIdJags(idp.issuer, () => idp.publicJwks);
    const target = {
      idJag: { resources: [crm.audience], clientId: redeemer.clientId },
      scopes: ["crm:read"],
    };
    const asker = await idp.allowExchange({ audiences: { [serverAs.issuer]: target }, users: ["alice"] });
    return `  crm:
    url: ${crm.url}
    credentials:
      idJag:
        clientId: ${asker.clientId}
        clientSecret: ${asker.clientSecret}
        serverClientId: ${redeemer.clientId}
        serverClientSecret: ${redeemer.clientSecret}
        scopes: [crm:read]
`;
  });
}, 120_000);

afterAll(async () => {
  await gw?.close();
  await crm?.close();
  expect(serverAs?.serverErrors).toEqual([]);
  await serverAs?.close();
});

async function call(user: string) {
  const answer = await gw.call(gw.tokens[user]!, "crm__whoami", { tag: user });
  const result = (answer.json as { result?: { isError?: boolean } }).result;
  expect(result, JSON.stringify(answer.json)).toBeDefined();
  return { text: resultText(result), isError: result?.isError === true };
}

describe("credentials: { idJag } behind the gateway", () => {
  it("calls the server as each signed-in user, as the company's provider allows", async () => {
    const served = crm.served.length;
    expect(await call("alice")).toEqual({ text: "alice", isError: false });
    expect(await call("alice")).toEqual({ text: "alice", isError: false });
    const refused = await call("bob");
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain("refused to issue an ID-JAG");
    expect(refused.text).not.toContain(gw.tokens.bob);
    expect(crm.served.slice(served).map((c) => [c.tag, c.sub])).toEqual([
      ["alice", "alice"],
      ["alice", "alice"],
    ]);
    // One ID-JAG and one redemption served both of alice's calls; bob's was refused at the provider.
    const asked = gw.as.exchanges.filter((e) => e.kind === "id-jag" || e.outcome !== "issued");
    expect(asked.map((e) => [e.sub, e.outcome])).toEqual([
      ["alice", "issued"],
      ["bob", "access_denied"],
    ]);
    expect(serverAs.jwtBearerGrants.map((g) => [g.sub, g.outcome])).toEqual([["alice", "issued"]]);
  });
});
