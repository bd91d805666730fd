/**
 * The optional layers of bench:compare: mcplex as the bench's plain mcplex target runs it, with
 * one layer more turned on in its config (or on its command line), each a target of its own in
 * front of the same echo server. What the layers need from outside runs here too: an OTLP
 * receiver that drops what it gets (bench/compare/otlp-sink.mjs, a process of its own) and an
 * identity provider on loopback (metadata and JWKS, ES256) whose access token the raw client
 * sends, so that no browser is involved.
 */
import type { ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { listening } from "../process-stats.js";
import type { Front, TargetSpec } from "./targets.js";

/** What the layers reach outside mcplex while they are measured. */
export interface LayerSupport {
  /** The OTLP/HTTP endpoint of the receiver that drops (`/v1/traces` is added). */
  otlp: string;
  /** The identity provider's issuer URL. */
  issuer: string;
  /** An access token of the issuer for the bench's gateways (audience {@link AUDIENCE}). */
  token: string;
  stop(): Promise<void>;
}

/** The audience the sign-in layer accepts besides its own address, so one token fits every port. */
const AUDIENCE = "bench-compare";

/** One optional layer: how it is turned on, over which fronts. */
export interface Layer {
  id: string;
  /** The name of its row. */
  label: string;
  /** How it is turned on, as the page says it. */
  how: string;
  fronts: readonly Front[];
  /** The config block added to the plain target's config (`file`: a file it may write). */
  block?(support: LayerSupport, file: (name: string) => string): string;
  /** Flags added to the plain target's command line. */
  flags?: readonly string[];
  /** Headers the raw client sends. */
  headers?(support: LayerSupport): Record<string, string>;
}

/** The guardrails of the guide's example, on every call: what a team that turns them on writes. */
const GUARDRAILS = `guardrails:
  - { guardrail: size, maxBytes: 256KiB, maxTokens: 20000 }
  - { guardrail: schema }
  - { guardrail: pii, types: { email: redact, phone: redact, card: redact, iban: audit } }
  - { guardrail: secrets }
`;

export const LAYERS: readonly Layer[] = [
  {
    id: "audit",
    label: "audit trail",
    how: "`audit: { to: <file> }`, a file in the run's scratch directory, the other keys their defaults",
    fronts: ["stdio", "http"],
    block: (_, file) => `audit:\n  to: ${JSON.stringify(file("audit.log"))}\n`,
  },
  {
    id: "telemetry",
    label: "telemetry",
    how: "`telemetry: { enabled: true, endpoint }`: a SERVER and a CLIENT span per call, every trace sampled (the default), exported in batches over OTLP/HTTP to a receiver on loopback that drops them (bench/compare/otlp-sink.mjs, a process of its own); metrics every 60 s, so none in a window",
    fronts: ["stdio", "http"],
    block: (s) => `telemetry:\n  enabled: true\n  endpoint: ${JSON.stringify(s.otlp)}\n`,
  },
  {
    id: "sign-in",
    label: "sign-in",
    how: "`auth: { issuers: [<loopback issuer>], audience: [bench-compare], scopes: [mcp] }` (the audience so that one token fits every port); the raw client sends one ES256 access token of that issuer with every request (its first check verifies it, later ones find it by its hash)",
    fronts: ["http"],
    block: (s) =>
      `auth:\n  issuers: [${JSON.stringify(s.issuer)}]\n  audience: [${AUDIENCE}]\n  scopes: [mcp]\n`,
    headers: (s) => ({ authorization: `Bearer ${s.token}` }),
  },
  {
    id: "guardrails",
    label: "guardrails",
    how: "`guardrails:` size (256 KiB, 20,000 tokens), schema, pii and secrets, on every call",
    fronts: ["stdio", "http"],
    block: () => GUARDRAILS,
  },
  {
    id: "dashboard",
    label: "metrics and dashboard beside stdio",
    how: "`serve --stdio --dashboard-port 0`: the HTTP front for the dashboard and `/metrics`, its call feed and metrics fed by every call (over HTTP both are on by default)",
    fronts: ["stdio"],
    flags: ["--dashboard-port", "0"],
  },
];

/** Starts the OTLP receiver and the identity provider. */
export async function startLayerSupport(): Promise<LayerSupport> {
  const sink: { url: URL; child: ChildProcess } = await listening(
    [new URL("./otlp-sink.mjs", import.meta.url).pathname],
    "otlp sink",
  );
  const { privateKey, publicKey } = await generateKeyPair("ES256");
  const jwk = { ...(await exportJWK(publicKey)), kid: "bench", alg: "ES256", use: "sig" };
  let issuer = "";
  const idp = createServer((req, res) => {
    const body = req.url === "/jwks" ? { keys: [jwk] } : { issuer, jwks_uri: `${issuer}/jwks` };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => idp.listen(0, "127.0.0.1", resolve));
  issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
  const token = await new SignJWT({ sub: "bench-user", scope: "mcp", aud: AUDIENCE })
    .setProtectedHeader({ alg: "ES256", kid: "bench" })
    .setIssuer(issuer)
    .setIssuedAt()
    .setExpirationTime("2h")
    .sign(privateKey);
  return {
    otlp: sink.url.href.replace(/\/$/, ""),
    issuer,
    token,
    stop: async () => {
      const gone = new Promise((resolve) => sink.child.once("exit", resolve));
      if (sink.child.exitCode === null) sink.child.kill("SIGTERM");
      await gone;
      await new Promise((resolve) => idp.close(resolve));
    },
  };
}

/**
 * Per front, the plain mcplex target of `specs` and one target per layer over that front: its
 * config the plain one's (`scratch`/mcplex.yaml, which targets() wrote) with the layer's block
 * added, its command line the plain one's with the layer's flags.
 */
export function layerTargets(
  specs: readonly TargetSpec[],
  scratch: string,
  support: LayerSupport,
): TargetSpec[] {
  const base = readFileSync(join(scratch, "mcplex.yaml"), "utf8");
  const list: TargetSpec[] = [];
  for (const plain of specs.filter((s) => s.id === "mcplex")) {
    list.push(plain);
    for (const layer of LAYERS.filter((l) => l.fronts.includes(plain.front))) {
      const config = join(scratch, `layer-${layer.id}-${plain.front}.yaml`);
      const file = (name: string) => join(scratch, `layer-${plain.front}-${name}`);
      writeFileSync(config, base + (layer.block?.(support, file) ?? ""));
      const headers = layer.headers?.(support);
      list.push({
        ...plain,
        id: `mcplex+${layer.id}`,
        label: `mcplex + ${layer.label}`,
        argv: (port) => {
          const argv = plain.argv(port);
          argv[argv.indexOf("--config") + 1] = config;
          return [...argv, ...(layer.flags ?? [])];
        },
        ...(headers === undefined ? {} : { headers }),
      });
    }
  }
  return list;
}

/** Runs `use` over the layered targets of `specs`, with their support running. */
export async function withLayerTargets<T>(
  specs: readonly TargetSpec[],
  scratch: string,
  use: (layered: TargetSpec[]) => Promise<T>,
): Promise<T> {
  const support = await startLayerSupport();
  try {
    return await use(layerTargets(specs, scratch, support));
  } finally {
    await support.stop();
  }
}
