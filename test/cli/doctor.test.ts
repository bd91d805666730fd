import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { startMockLlm } from "../support/mock-llm.js";
import { startAuthServer } from "../support/oidc-provider.js";

const TSX = resolve("node_modules/.bin/tsx");
const FIXTURE = resolve("test/fixtures/servers/fixture-server.ts");
/**
 * A plain-Node server that starts in a blink, for the checks that are not about servers:
 * beside the conformance suite on two cores, two runs with the TypeScript fixture took
 * more than 30 s once.
 */
const QUICK_SERVER = [
  "servers:",
  "  quick:",
  `    command: ${process.execPath}`,
  `    args: [${resolve("test/fixtures/servers/ttl-server.mjs")}]`,
];

/** Empty values count as unset: the machine's own LLM settings stay out of these tests. */
const NO_LLM = {
  MCPLEX_LLM_BASE_URL: "",
  MCPLEX_LLM_MODEL: "",
  MCPLEX_LLM_API_KEY: "",
  MCPLEX_LLM_PROVIDER: "",
};

interface Check {
  area: string;
  status: "ok" | "warn" | "fail" | "skip";
  message: string;
  hint?: string;
  server?: string;
}

let dir: string;
let llm: Awaited<ReturnType<typeof startMockLlm>>;
/** Something already listening, as another `mcplex serve` would be. */
let busy: Server;
let busyPort: number;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-doctor-"));
  llm = await startMockLlm({ apiKey: "sk-right" });
  busy = createServer();
  await new Promise<void>((done) => busy.listen(0, "127.0.0.1", done));
  busyPort = (busy.address() as { port: number }).port;
});
afterAll(async () => {
  await llm.close();
  await new Promise((done) => busy.close(done));
  await rm(dir, { recursive: true, force: true });
});

async function doctor(lines: string[], args: string[] = [], env: Record<string, string> = {}) {
  const config = join(dir, `${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(config, `${lines.join("\n")}\n`);
  return runCli(["doctor", "--config", config, ...args], { env: { ...NO_LLM, ...env }, cwd: dir });
}

/** The checks of a `--json` run, by subject ("server fx", "llm", ...). */
function bySubject(stdout: string): Map<string, Check> {
  const { checks } = JSON.parse(stdout) as { ok: boolean; checks: Check[] };
  return new Map(checks.map((c) => [c.server === undefined ? c.area : `${c.area} ${c.server}`, c]));
}

// Every test runs the CLI as a process, some of them several in turn: beside the conformance
// suite on two cores, one of them took more than the default 30 s in a clean-clone run.
describe("mcplex doctor", { timeout: 90_000 }, () => {
  it("starts every server, lazy ones too, and passes when everything works", async () => {
    const { code, stdout } = await doctor(
      [
        "servers:",
        "  fx:",
        `    command: ${TSX}`,
        `    args: [${FIXTURE}]`,
        "    lazy: true",
        "  off:",
        "    command: mcplex-no-such-command",
        "    enabled: false",
        // Nothing shared to start: not a failure.
        "  mine:",
        "    command: mcplex-no-such-command",
        "    env: { KEY: '${user:KEY}' }",
        "    credentials: per-user",
        "llm:",
        `  baseUrl: ${llm.url}`,
        "  model: mock",
        "  apiKey: sk-right",
      ],
      ["--json", "--port", "0"],
    );
    expect(code).toBe(0);
    const checks = bySubject(stdout);
    expect(JSON.parse(stdout).ok).toBe(true);
    expect(checks.get("server fx")).toMatchObject({ status: "ok" });
    expect(checks.get("server fx")!.message).toMatch(/^ready in \d+ ms: 2026-07-28 over stdio; \d+ tools,/);
    expect(checks.get("server off")).toMatchObject({ status: "skip", message: "disabled in the config" });
    expect(checks.get("server mine")).toMatchObject({
      status: "skip",
      message:
        "called with each user's own credentials (per-user): it starts on a signed-in user's first call",
    });
    expect(checks.get("catalog")!.message).toMatch(/^\d+ tools, \d+ resources?, \d+ prompts?/);
    expect(checks.get("llm")).toMatchObject({ status: "ok", message: `${llm.url} answers; model mock` });
    expect(checks.get("node")).toMatchObject({ status: "ok" });
    // The key was sent (the mock refuses requests without it) and is never printed.
    expect(stdout).not.toContain("sk-right");
  });

  it("names each server that does not start, with its stderr and a command to try; exit 3", async () => {
    const { code, stdout } = await doctor(
      [
        "servers:",
        "  missing:",
        "    command: mcplex-no-such-command",
        "  dies:",
        `    command: ${process.execPath}`,
        `    args: [-e, "console.error('boom: GITHUB_TOKEN is not set'); process.exit(1)"]`,
      ],
      ["--port", "0"],
    );
    expect(code).toBe(3);
    expect(stdout).toMatch(/^fail {2}server missing {5}missing: could not start "mcplex-no-such-command"/m);
    expect(stdout).toMatch(
      /^ {25}hint: Run its command by hand to see what it prints: mcplex-no-such-command$/m,
    );
    expect(stdout).toMatch(/^fail {2}server dies {8}dies: .*exited with code 1/m);
    // The server's own words, indented under its line.
    expect(stdout).toMatch(/^ {25}boom: GITHUB_TOKEN is not set$/m);
    expect(stdout).toMatch(/^2 problems and 1 warning: see "fail" above\.$/m);
  });

  it("refuses a config it cannot load with exit 2 and the config's own error", async () => {
    const { code, stdout } = await doctor(
      ["servers:", "  bad:", "    transport: carrier-pigeon"],
      ["--json"],
    );
    expect(code).toBe(2);
    const checks = bySubject(stdout);
    expect(checks.get("config")).toMatchObject({ status: "fail" });
    expect(checks.get("config")!.message).toContain("bad");
    expect(checks.get("node")).toMatchObject({ status: "ok" });
  });

  it("warns when the port serve would take is in use, and says which to take", async () => {
    const { code, stdout } = await doctor(QUICK_SERVER, ["--json", "--port", String(busyPort)]);
    expect(code).toBe(0);
    expect(bySubject(stdout).get("serve")).toMatchObject({
      status: "warn",
      message: `mcplex serve cannot listen on 127.0.0.1:${busyPort}: EADDRINUSE`,
      hint: expect.stringContaining(`--port ${busyPort + 1}`),
    });
  });

  it("checks the LLM endpoint: a refused key and an unknown model", async () => {
    const base = QUICK_SERVER;
    const refused = await doctor([...base, "llm:", `  baseUrl: ${llm.url}`, "  model: mock"], ["--json"], {
      MCPLEX_LLM_API_KEY: "sk-wrong",
    });
    expect(refused.code).toBe(3);
    expect(bySubject(refused.stdout).get("llm")).toMatchObject({
      status: "fail",
      message: `${llm.url} refused the API key (HTTP 401)`,
    });
    expect(refused.stdout).not.toContain("sk-wrong");

    const unknown = await doctor(base, ["--json", "--base-url", llm.url, "--model", "gpt-9"], {
      MCPLEX_LLM_API_KEY: "sk-right",
    });
    expect(unknown.code).toBe(0);
    expect(bySubject(unknown.stdout).get("llm")).toMatchObject({
      status: "warn",
      message: `${llm.url} answers, but does not list the model "gpt-9"`,
      hint: expect.stringContaining("It lists: mock"),
    });
  });

  it("asks each sign-in issuer for its metadata and keys, and says what is wrong", async () => {
    const server = await startAuthServer();
    try {
      const auth = (issuer: string, extra: string[] = []) => [
        ...QUICK_SERVER,
        "auth:",
        "  issuers:",
        `    - issuer: ${issuer}`,
        ...extra,
      ];
      const good = await doctor(auth(server.issuer), ["--json", "--port", "0"]);
      expect(bySubject(good.stdout).get("sign-in")).toMatchObject({
        status: "ok",
        message: `${server.issuer}: 2 signing key(s) (RS256, ES256)`,
      });
      const narrow = await doctor(auth(server.issuer, ["      algorithms: [EdDSA]"]), [
        "--json",
        "--port",
        "0",
      ]);
      expect(narrow.code).toBe(3);
      expect(bySubject(narrow.stdout).get("sign-in")).toMatchObject({
        status: "fail",
        message: expect.stringContaining("none for an accepted algorithm (EdDSA)"),
      });
      const wrong = await doctor(auth(`${server.issuer}/other`), ["--json", "--port", "0"]);
      expect(bySubject(wrong.stdout).get("sign-in")).toMatchObject({
        status: "fail",
        message: expect.stringContaining(`no metadata for the issuer ${server.issuer}/other`),
        hint: expect.stringContaining("must equal the tokens' `iss`"),
      });
    } finally {
      await server.close();
    }
  });

  it("reports that a sandbox starts here, and starts the sandboxed server in it", async () => {
    const { code, stdout } = await doctor([...QUICK_SERVER, "    sandbox: true"], ["--json", "--port", "0"]);
    expect(code).toBe(0);
    const checks = bySubject(stdout);
    expect(checks.get("sandbox")).toMatchObject({ status: "ok" });
    expect(checks.get("sandbox")!.message).toMatch(/^bubblewrap \(\S+bwrap\) works here, .*; for quick$/);
    expect(checks.get("server quick")).toMatchObject({ status: "ok" });
  });

  it("on the zero-config default checks the workspace server; no LLM is only skipped", async () => {
    const { code, stdout } = await runCli(["doctor", "--port", "0"], { cwd: dir, env: NO_LLM });
    expect(code).toBe(0);
    expect(stdout).toContain(`no config file here: the embedded default, ${dir} (read-only)`);
    expect(stdout).toMatch(/^ok {4}server workspace {3}ready in \d+ ms/m);
    expect(stdout).toMatch(/^skip {2}llm {16}no LLM endpoint configured/m);
    expect(stdout).toMatch(/All checks passed\.$/m);
  });
});
