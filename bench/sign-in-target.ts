/**
 * The target of bench/sign-in-bench.ts, in its own process: an issuer (metadata and JWKS over
 * node:http, ES256 keys), and one gateway with an echo tool behind two HTTP fronts, one that
 * admits a static token (as `tokens:` does) and one that admits the issuer's access tokens (as
 * `auth:` does). Prints `static <url>`, `oauth <url>` and `token <jwt>` when listening; reads
 * `fresh <n>` on stdin and answers `verify <µs per first check> <µs per cached check>`.
 * Imports mcplex from dist/ (run `npm run build` first).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { OAuthAuthenticator } from "../dist/auth/oauth-authenticator.js";
import { parseConfig } from "../dist/config/parse-config.js";
import { startHttpFront } from "../dist/fronts/http-front.js";
import { Gateway } from "../dist/gateway/gateway.js";
import { startEchoHub } from "./echo-hub.mjs";

const STATIC_TOKEN = "bench-static-token-0123456789abcdef";

const { privateKey, publicKey } = await generateKeyPair("ES256");
const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256", use: "sig" };
let issuer = "";
const idp = createServer((req, res) => {
  const body = req.url === "/jwks" ? { keys: [jwk] } : { issuer, jwks_uri: `${issuer}/jwks` };
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
});
await new Promise<void>((r) => idp.listen(0, "127.0.0.1", r));
issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;

const hub = await startEchoHub();
const gateway = new Gateway(hub);
const common = { port: 0, websocket: false, dashboard: false } as const;
const staticFront = await startHttpFront(gateway, { ...common, tokens: [{ token: STATIC_TOKEN }] });
// The `auth:` block as a user writes it, read by the config reader.
const auth = parseConfig(`servers: {}\nauth:\n  issuers: [${JSON.stringify(issuer)}]\n  scopes: [mcp]\n`, {
  source: "bench.yaml",
  env: {},
}).auth!;
const oauth = new OAuthAuthenticator(auth);
const oauthFront = await startHttpFront(gateway, { ...common, authenticator: oauth });
const origin = oauthFront.url.replace(/\/mcp$/, "");

const sign = (sub: string) =>
  new SignJWT({ sub, scope: "mcp", aud: `${origin}/mcp` })
    .setProtectedHeader({ alg: "ES256", kid: "k1" })
    .setIssuer(issuer)
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(privateKey);

console.log(`static ${staticFront.url}`);
console.log(`oauth ${oauthFront.url}`);
console.log(`token ${await sign("bench-user")}`);

/** What one verification of a token not seen before costs, against a check of a cached one. */
async function verifyCost(n: number): Promise<string> {
  const tokens = await Promise.all(Array.from({ length: n }, (_, i) => sign(`user-${i}-${Date.now()}`)));
  const request = (token: string) => ({
    headers: { authorization: `Bearer ${token}`, host: new URL(origin).host },
    remoteAddress: "127.0.0.1",
    path: "/mcp",
  });
  const firstStart = process.cpuUsage();
  for (const token of tokens) if (!(await oauth.authenticate(request(token))).ok) throw new Error("refused");
  const first = process.cpuUsage(firstStart);
  const cachedStart = process.cpuUsage();
  for (let round = 0; round < 10; round++)
    for (const token of tokens)
      if (!(await oauth.authenticate(request(token))).ok) throw new Error("refused");
  const cached = process.cpuUsage(cachedStart);
  const us = (u: NodeJS.CpuUsage, count: number) => ((u.user + u.system) / count).toFixed(1);
  return `verify ${us(first, n)} ${us(cached, n * 10)}`;
}

for await (const line of createInterface({ input: process.stdin })) {
  const [word, count] = line.split(" ");
  if (word === "fresh") console.log(await verifyCost(Number(count)));
}
