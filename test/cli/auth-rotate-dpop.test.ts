import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AssertionGrantServer,
  CLIENTS,
  startAssertionGrantServer,
} from "../support/assertion-grant-server.js";
import { type CliResult, runCli } from "../support/cli.js";

/**
 * `mcplex auth rotate-dpop NAME` from a terminal: a server whose tokens are DPoP-bound gets a new
 * key in the secret store, the old tokens go, and the next command is served with tokens bound
 * to the new key (the server refuses a proof of any other).
 */

let dir: string;
let config: string;
let env: Record<string, string>;
let auth: AssertionGrantServer;
const printed: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-rotate-dpop-"));
  env = { MCPLEX_HOME: dir, MCPLEX_SECRET_KEY: "d".repeat(64) };
  auth = await startAssertionGrantServer();
  config = join(dir, "mcplex.yaml");
  const server = (name: string, dpop: boolean) => [
    `  ${name}:`,
    `    url: ${auth.mcpUrl}`,
    "    oauth:",
    "      grant: client_credentials",
    `      clientId: ${CLIENTS.as.id}`,
    `      clientSecret: ${CLIENTS.as.secret}`,
    ...(dpop ? ["      dpop: true"] : []),
  ];
  await writeFile(config, ["servers:", ...server("billing", true), ...server("plain", false), ""].join("\n"));
});

afterAll(async () => {
  await auth?.close();
  await rm(dir, { recursive: true, force: true });
});

async function cli(...args: string[]): Promise<CliResult> {
  const result = await runCli([...args, "--config", config], { env });
  printed.push(result.stdout, result.stderr);
  return result;
}

describe("mcplex auth rotate-dpop", () => {
  it("gives the server a new key, and the next command gets tokens bound to it", async () => {
    const first = await cli("call", "billing__whoami", "{}");
    expect(first.code, first.stderr).toBe(0);
    const bound = auth.presented.at(-1)?.jkt;
    expect(auth.presented.at(-1)?.scheme).toBe("DPoP");

    const rotated = await cli("auth", "rotate-dpop", "billing");
    expect(rotated.code, rotated.stderr).toBe(0);
    const [, fresh, was] = /new DPoP key (\S+) \(was (\S+)\)/.exec(rotated.stderr) ?? [];
    expect(was).toBe(bound);
    expect(fresh).not.toBe(bound);
    expect(rotated.stderr).toContain("tokens were bound to the old key and are dropped");

    const requests = auth.tokenRequests.length;
    const after = await cli("call", "billing__whoami", "{}");
    expect(after.code, after.stderr).toBe(0);
    expect(auth.tokenRequests.slice(requests).map((r) => r.jkt)).toEqual([fresh]);
    expect(auth.presented.at(-1)).toEqual({ scheme: "DPoP", jkt: fresh });
  });

  it("refuses a server that does not use DPoP, saying how to turn it on", async () => {
    const result = await cli("auth", "rotate-dpop", "plain");
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('plain does not use DPoP: add "dpop: true"');
  });

  it("never prints a key or a token", () => {
    const all = printed.join("\n");
    expect(all).not.toMatch(/"d"\s*:/);
    expect(all).not.toMatch(/eyJ[\w-]+\.[\w-]+\./);
  });
});
