/**
 * `policies:` at work end to end: `serve()` over HTTP, tokens signed by the real oidc-provider of
 * test/support/oidc-provider.ts, the SDK client, and the built-in workspace server (its tools
 * carry `readOnlyHint`). Five rules of the kinds the README shows: by group, by argument value,
 * by time, read-only for contractors, a per-tool scope; and an audit rule whose decisions reach
 * the audit trail.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningGateway, serve } from "../../src/assembly/serve.js";
import { parseConfig } from "../../src/config/parse-config.js";
import { type AuthServer, startAuthServer } from "../support/oidc-provider.js";
import { until } from "../support/wait.js";

let as: AuthServer;
let running: RunningGateway;
let url: string;
let dir: string;
let auditFile: string;

beforeAll(async () => {
  as = await startAuthServer();
  dir = await mkdtemp(join(tmpdir(), "mcplex-policies-"));
  await writeFile(join(dir, "notes.md"), "hello\n");
  auditFile = join(dir, "audit.jsonl");
  const text = `servers:
  ws:
    type: workspace
    root: ${JSON.stringify(dir)}
    allowWrite: true
policies:
  # By time: nothing may write before 2001 (a rule that reads the clock; it never holds now).
  - name: not-before-2001
    when: 'request.tool == "ws__write_file" && now < timestamp("2001-01-01T00:00:00Z")'
    effect: deny
  # Read-only for contractors: any tool its server does not mark read-only is denied them.
  - name: contractors-read-only
    when: '"contractors" in caller.groups && request.annotations.?readOnlyHint.orValue(false) != true'
    effect: deny
    message: contractors may only use read-only tools
  # By argument value: nobody writes a file named like a secret.
  - name: no-secret-files
    when: 'request.tool == "ws__write_file" && has(request.arguments.path) && request.arguments.path.contains("secret")'
    effect: deny
    message: files named like secrets are not written through the gateway
  # A per-tool scope: editing needs the editor scope.
  - name: editing-needs-scope
    when: 'request.tool == "ws__edit_file"'
    effect: require
    scopes: [editor]
  # By group: the auditors group reads only.
  - name: auditors-read
    when: '"auditors" in caller.groups && request.tool == "ws__read_file"'
    effect: allow
  - name: auditors-nothing-else
    when: '"auditors" in caller.groups'
    effect: deny
    message: auditors read files and nothing else
  - name: watch-writes
    when: 'request.tool == "ws__write_file"'
    effect: audit
audit:
  to: ${JSON.stringify(auditFile)}
auth:
  issuers:
    - issuer: ${as.issuer}
  scopes: ["mcp:tools"]
  access:
    - when: { sub: ["*"] }
`;
  const config = parseConfig(text, { source: "policies.yaml", env: {} });
  running = await serve({ config, transport: "http", http: { host: "127.0.0.1", port: 0 }, watch: false });
  await running.started;
  url = running.http!.url;
}, 60_000);

afterAll(async () => {
  await running?.close();
  await as?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** An SDK client signed in as `sub` with `groups` and `scopes`, closed once `use` is done. */
async function as_<T>(
  who: { sub: string; groups?: string[]; scopes?: string[] },
  use: (client: Client) => Promise<T>,
): Promise<T> {
  const token = await as.sign({
    sub: who.sub,
    aud: url,
    scope: ["mcp:tools", ...(who.scopes ?? [])].join(" "),
    groups: who.groups ?? [],
  });
  const client = new Client({ name: "policies", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

const names = async (client: Client) => (await client.listTools()).tools.map((t) => t.name).sort();
const text = (result: unknown) =>
  ((result as { content?: { text?: string }[] }).content ?? []).map((c) => c.text ?? "").join("");

describe("policies through serve --http with the SDK client", () => {
  it("lets a plain user write, and audits the write with the rule that held", async () => {
    await as_({ sub: "dev" }, async (client) => {
      const written = await client.callTool({
        name: "ws__write_file",
        arguments: { path: "a.md", content: "x" },
      });
      expect(written.isError).not.toBe(true);
    });
    await until(
      async () => (await readFile(auditFile, "utf8").catch(() => "")).includes("watch-writes"),
      10_000,
      "the audit line of the write",
    );
    const lines = (await readFile(auditFile, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const write = lines.find((l) => l.target === "ws__write_file" && l.subject === "dev");
    expect(write.decisions).toEqual([
      { by: "policy", name: "watch-writes", effect: "audit", phase: "request", target: "ws__write_file" },
    ]);
  });

  it("denies by argument value, with the rule's message, as an unknown name answers", async () => {
    await as_({ sub: "dev" }, async (client) => {
      const refused = await client
        .callTool({ name: "ws__write_file", arguments: { path: "secret.env", content: "x" } })
        .then(
          (result) => ({ isError: result.isError, text: text(result) }),
          (error: Error) => ({ isError: true, text: error.message }),
        );
      expect(refused.isError).toBe(true);
      expect(refused.text).toContain("files named like secrets are not written through the gateway");
    });
  });

  it("keeps contractors to read-only tools: the others left out of their list and refused", async () => {
    await as_({ sub: "carol", groups: ["contractors"] }, async (client) => {
      expect(await names(client)).toEqual(["ws__list_directory", "ws__read_file", "ws__search_files"]);
      const read = await client.callTool({ name: "ws__read_file", arguments: { path: "notes.md" } });
      expect(text(read)).toContain("hello");
      const write = await client
        .callTool({ name: "ws__write_file", arguments: { path: "b.md", content: "x" } })
        .then(
          (result) => text(result),
          (error: Error) => error.message,
        );
      expect(write).toContain("contractors may only use read-only tools");
    });
  });

  it("by group: auditors read files and nothing else, the allow before the deny", async () => {
    await as_({ sub: "audrey", groups: ["auditors"] }, async (client) => {
      expect(await names(client)).toEqual(["ws__read_file"]);
      expect(
        text(await client.callTool({ name: "ws__read_file", arguments: { path: "notes.md" } })),
      ).toContain("hello");
    });
  });

  it("asks for the editor scope before an edit (a step-up), and lets it through with it", async () => {
    const edit = {
      name: "ws__edit_file",
      arguments: { path: "notes.md", edits: [{ oldText: "hello", newText: "hi" }] },
    };
    await as_({ sub: "dev" }, async (client) => {
      const refused = await client.callTool(edit).then(
        (result) => text(result),
        (error: Error) => error.message,
      );
      // The HTTP front's 403 challenge names the scopes to sign in again with; the SDK reads it.
      expect(refused).toBe('Insufficient scope: required "mcp:tools editor"');
    });
    await as_({ sub: "dev", scopes: ["editor"] }, async (client) => {
      const edited = await client.callTool(edit);
      expect(edited.isError).not.toBe(true);
    });
    expect(await readFile(join(dir, "notes.md"), "utf8")).toBe("hi\n");
  });
});
