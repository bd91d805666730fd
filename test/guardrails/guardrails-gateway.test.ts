/**
 * Guardrails end to end: `serve()` over HTTP with the SDK client and the fixture server over
 * stdio (its `echo` tool answers `echo: <message>`). A schema refusal, personal data redacted,
 * a long result cut; each decision in the audit trail and in `mcplex_decisions_total`.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningGateway, serve } from "../../src/assembly/serve.js";
import { parseConfig } from "../../src/config/parse-config.js";
import { COMMANDS, resultText } from "../support/gateway.js";
import { until } from "../support/wait.js";

let running: RunningGateway;
let client: Client;
let dir: string;
let auditFile: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-guardrails-"));
  auditFile = join(dir, "audit.jsonl");
  const text = `servers:
  fx:
    command: ${JSON.stringify(COMMANDS.fixture.command)}
    args: ${JSON.stringify(COMMANDS.fixture.args)}
guardrails:
  - { guardrail: schema, tools: ["fx__echo"] }
  - { guardrail: pii, types: { phone: audit } }
  - { guardrail: size, maxBytes: 600 }
  - { guardrail: secrets }
audit:
  to: ${JSON.stringify(auditFile)}
`;
  const config = parseConfig(text, { source: "guardrails.yaml", env: {} });
  running = await serve({ config, transport: "http", http: { host: "127.0.0.1", port: 0 }, watch: false });
  await running.started;
  client = new Client({ name: "guardrails", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(running.http!.url)));
}, 60_000);

afterAll(async () => {
  await client?.close();
  await running?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

const echo = (message: unknown) => client.callTool({ name: "fx__echo", arguments: { message } });

describe("guardrails through serve --http with the SDK client", () => {
  it("refuses arguments that do not match the tool's inputSchema before they reach the server", async () => {
    await expect(echo(42)).rejects.toThrow(
      "fx__echo: refused by the schema guardrail: the arguments do not match its inputSchema: /message must be string",
    );
  });

  it("redacts personal data in a result and counts a kind it only audits", async () => {
    expect(resultText(await echo("mail ada@example.com or call +44 20 7946 0958"))).toBe(
      "echo: mail [email redacted] or call +44 20 7946 0958",
    );
  });

  it("cuts a long result to the bound, saying so", async () => {
    const text = resultText(await echo("x".repeat(5000)));
    expect(text.length).toBeLessThan(600);
    expect(text).toMatch(/^echo: x+\[mcplex: this result was \d+ bytes \(limit 600\); it was cut to fit\]$/);
  });

  it("redacts a credential in the arguments before the server sees it", async () => {
    expect(resultText(await echo("token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 here"))).toBe(
      "echo: token [secret redacted] here",
    );
  });

  it("puts every decision in the audit trail and in mcplex_decisions_total, never naming the caller", async () => {
    await until(
      async () => (await readFile(auditFile, "utf8").catch(() => "")).split("\n").filter(Boolean).length >= 4,
      10_000,
      "four audit lines",
    );
    const lines = (await readFile(auditFile, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const effects = lines.flatMap((l) =>
      (l.decisions ?? []).map((d: { name: string; effect: string }) => `${d.name}:${d.effect}`),
    );
    expect(effects).toEqual(["schema:refused", "pii:rewrote", "size:rewrote", "secrets:rewrote"]);
    expect(lines[3].decisions[0]).toMatchObject({
      phase: "request",
      detail: "1 credential (github) in the arguments redacted",
    });
    expect(lines[1].decisions[0].detail).toBe("1 email redacted, 1 phone seen");
    const metrics = await (await fetch(running.http!.url.replace(/\/mcp$/, "/metrics"))).text();
    expect(metrics).toContain('mcplex_decisions_total{by="guardrail",name="schema",effect="refused"} 1');
    expect(metrics).toContain('mcplex_decisions_total{by="guardrail",name="pii",effect="rewrote"} 1');
    expect(metrics).toContain('mcplex_decisions_total{by="guardrail",name="size",effect="rewrote"} 1');
    expect(metrics).toContain('mcplex_decisions_total{by="guardrail",name="secrets",effect="rewrote"} 1');
  });
});
