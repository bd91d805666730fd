import { spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { SecretStore } from "../../src/config/index.js";
import { MCPLEX_SERVER_KEYS } from "../../src/config/read-server.js";
import { CLI, runCli } from "../support/cli.js";
import { startTestRegistry, type TestRegistry, type TestRegistryEntry } from "../support/registry-server.js";

/**
 * `mcplex search` and `mcplex add` against a local registry serving `server.json` documents
 * shaped like the official registry's entries (npm, PyPI, OCI, remote), paged two at a time.
 * The written configs go through the built CLI's `config check`, and the npm one is started.
 */
const MEMORY_VERSION = (
  createRequire(import.meta.url)("@modelcontextprotocol/server-memory/package.json") as {
    version: string;
  }
).version;

const ENTRIES: TestRegistryEntry[] = [
  {
    server: {
      $schema: "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
      name: "io.github.modelcontextprotocol/memory",
      description: "Knowledge graph memory for the model",
      version: MEMORY_VERSION,
      repository: { url: "https://github.com/modelcontextprotocol/servers", source: "github" },
      packages: [
        {
          registryType: "npm",
          registryBaseUrl: "https://registry.npmjs.org",
          identifier: "@modelcontextprotocol/server-memory",
          version: MEMORY_VERSION,
          transport: { type: "stdio" },
          environmentVariables: [
            { name: "MEMORY_FILE_PATH", description: "Where the graph is kept", format: "filepath" },
          ],
        },
      ],
    },
  },
  {
    server: { name: "io.github.modelcontextprotocol/memory", version: "0.1.0", packages: [] },
    isLatest: false,
  },
  {
    server: {
      name: "io.github.example/weather",
      description: "Forecasts from a weather API",
      version: "1.4.0",
      packages: [
        {
          registryType: "pypi",
          identifier: "mcp-weather",
          version: "1.4.0",
          runtimeHint: "uvx",
          transport: { type: "stdio" },
          packageArguments: [{ type: "named", name: "--units", value: "metric" }],
          environmentVariables: [
            { name: "WEATHER_API_KEY", description: "API key", isRequired: true, isSecret: true },
          ],
        },
      ],
    },
  },
  {
    server: {
      name: "io.github.example/postgres",
      description: "Read-only Postgres access",
      version: "0.9.2",
      packages: [
        {
          registryType: "oci",
          identifier: "docker.io/example/postgres-mcp:0.9.2",
          transport: { type: "stdio" },
          runtimeArguments: [
            {
              type: "named",
              name: "--mount",
              value: "type=bind,src={dump_dir},dst=/dumps",
              isRequired: true,
              variables: {
                dump_dir: { description: "Where dumps go", isRequired: true, format: "filepath" },
              },
            },
          ],
          environmentVariables: [
            { name: "DATABASE_URL", description: "postgres:// URL", isRequired: true, isSecret: true },
            { name: "PGAPPNAME", value: "mcp-{client}", variables: { client: { default: "mcplex" } } },
          ],
        },
      ],
    },
  },
  {
    server: {
      name: "com.example/analytics",
      description: "Business analytics, hosted",
      version: "2.0.0",
      remotes: [
        {
          type: "streamable-http",
          url: "https://{tenant}.analytics.example.com/mcp",
          variables: { tenant: { description: "Your tenant", isRequired: true } },
          headers: [
            { name: "X-Api-Key", description: "API key", isRequired: true, isSecret: true },
            {
              name: "Authorization",
              value: "Bearer {api_token}",
              variables: { api_token: { description: "Token", isRequired: true, isSecret: true } },
            },
          ],
        },
        { type: "sse", url: "https://{tenant}.analytics.example.com/sse" },
      ],
    },
  },
  { server: { name: "io.github.carol/notes", version: "0.0.1", packages: [] }, status: "deleted" },
  {
    server: {
      name: "io.github.alice/notes",
      version: "1.0.0",
      packages: [{ registryType: "npm", identifier: "alice-notes" }],
    },
  },
  {
    server: {
      name: "io.github.bob/notes",
      version: "3.1.0",
      packages: [{ registryType: "npm", identifier: "bob-notes" }],
    },
  },
];

let registry: TestRegistry;
let dir: string;
let home: string;
/** A directory with stand-ins for `uvx` and `docker` (never run: `add` only looks them up). */
let fakeBin: string;
let emptyBin: string;
const SECRET_KEY = "registry-test-passphrase";
/**
 * `add` marks stdio servers `sandbox: true` once the config reader knows the key (the sandbox
 * is built beside this, issue 27); until then it writes no key `config check` would refuse.
 */
const SANDBOX = MCPLEX_SERVER_KEYS.includes("sandbox") ? true : undefined;

beforeAll(async () => {
  registry = await startTestRegistry(ENTRIES);
  dir = await mkdtemp(join(tmpdir(), "mcplex-registry-"));
  home = join(dir, "home");
  fakeBin = join(dir, "bin");
  emptyBin = join(dir, "empty");
  await mkdir(fakeBin);
  await mkdir(emptyBin);
  for (const name of ["uvx", "docker"]) {
    await writeFile(join(fakeBin, name), "#!/bin/sh\nexit 0\n");
    await chmod(join(fakeBin, name), 0o755);
  }
});
afterAll(async () => {
  await registry?.close();
  await rm(dir, { recursive: true, force: true });
});

/** The CLI with the test registry, a private secret store, and `PATH` as given. */
function mcplex(args: string[], path = process.env.PATH ?? "") {
  return runCli([...args, ...(["add", "search"].includes(args[0]!) ? ["--registry", registry.url] : [])], {
    env: { MCPLEX_HOME: home, MCPLEX_SECRET_KEY: SECRET_KEY, PATH: path, npm_config_offline: "true" },
  });
}

async function configCheck(file: string): Promise<void> {
  const check = await mcplex(["config", "check", "--config", file, "--json"]);
  expect(check.stdout + check.stderr).toContain('"ok":true');
  expect(check.code).toBe(0);
}

describe("mcplex search", () => {
  it("follows the cursor through every page of the latest versions, leaving deleted servers out", async () => {
    registry.requests.length = 0;
    const result = await mcplex(["search", "io.github", "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const names = (JSON.parse(result.stdout) as Array<{ name: string; version: string }>).map((s) => s.name);
    expect(names).toEqual([
      "io.github.modelcontextprotocol/memory",
      "io.github.example/weather",
      "io.github.example/postgres",
      "io.github.alice/notes",
      "io.github.bob/notes",
    ]);
    expect(registry.requests.length).toBe(3);
    expect(
      registry.requests.every((q) => q.get("version") === "latest" && q.get("search") === "io.github"),
    ).toBe(true);
    expect(registry.requests[1]!.get("cursor")).toBeTruthy();
  });

  it("lists names, versions and how each installs", async () => {
    const result = await mcplex(["search", "analytics"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("com.example/analytics  2.0.0  remote");
    expect(result.stdout).toContain("Business analytics, hosted");
  });
});

describe("mcplex add", () => {
  it("writes an npm server as npx pkg@version that config check accepts and that starts", async () => {
    const file = join(dir, "memory.yaml");
    await writeFile(file, "# my servers\nservers: {}\n");
    const add = await mcplex([
      "add",
      "memory",
      "--config",
      file,
      "--env",
      `MEMORY_FILE_PATH=${join(dir, "graph.jsonl")}`,
    ]);
    expect(add.code, add.stderr).toBe(0);
    const text = await readFile(file, "utf8");
    expect(text).toContain("# my servers");
    expect(text).toContain(
      `# io.github.modelcontextprotocol/memory ${MEMORY_VERSION}, from the MCP Registry`,
    );
    const entry = parse(text).servers.memory;
    expect(entry.command).toBe("npx");
    expect(entry.args).toEqual(["-y", `@modelcontextprotocol/server-memory@${MEMORY_VERSION}`]);
    expect(entry.env).toEqual({ MEMORY_FILE_PATH: join(dir, "graph.jsonl") });
    expect(entry.sandbox).toBe(SANDBOX);
    await configCheck(file);
    // npx finds the package installed in this repository (the CLI runs here), offline.
    const list = await mcplex(["list", "--config", file, "--json"]);
    expect(list.code, list.stderr).toBe(0);
    const [server] = JSON.parse(list.stdout).servers;
    expect(server.state).toBe("ready");
    expect(server.tools.map((t: { originalName: string }) => t.originalName)).toContain("create_entities");
  }, 60_000);

  it("writes a PyPI server as uvx pkg==version with its secret in the secret store", async () => {
    const file = join(dir, "weather.yaml");
    const add = await mcplex(
      ["add", "io.github.example/weather", "--config", file, "--env", "WEATHER_API_KEY=wk-123456"],
      `${fakeBin}:${process.env.PATH}`,
    );
    expect(add.code, add.stderr).toBe(0);
    const text = await readFile(file, "utf8");
    expect(text).not.toContain("wk-123456");
    const entry = parse(text).servers.weather;
    expect(entry.command).toBe("uvx");
    expect(entry.args).toEqual(["mcp-weather==1.4.0", "--units", "metric"]);
    expect(entry.env).toEqual({ WEATHER_API_KEY: "${secret:weather.WEATHER_API_KEY}" });
    const store = new SecretStore({ env: { MCPLEX_HOME: home, MCPLEX_SECRET_KEY: SECRET_KEY } });
    expect(await store.get("weather.WEATHER_API_KEY")).toBe("wk-123456");
    await configCheck(file);
  });

  it("writes an OCI server as docker run with the tag and its variables passed in", async () => {
    const file = join(dir, "postgres.yaml");
    const add = await mcplex(
      [
        "add",
        "postgres",
        "--config",
        file,
        "--env",
        "DATABASE_URL=postgres://u:pw@db/x",
        "--env",
        "dump_dir=/tmp/d",
      ],
      `${fakeBin}:${process.env.PATH}`,
    );
    expect(add.code, add.stderr).toBe(0);
    const entry = parse(await readFile(file, "utf8")).servers.postgres;
    expect(entry.command).toMatch(/docker$/);
    expect(entry.args).toEqual([
      "run",
      "--rm",
      "-i",
      "--mount",
      "type=bind,src=/tmp/d,dst=/dumps",
      "-e",
      "DATABASE_URL",
      "-e",
      "PGAPPNAME",
      "docker.io/example/postgres-mcp:0.9.2",
    ]);
    expect(entry.env).toEqual({ DATABASE_URL: "${secret:postgres.DATABASE_URL}", PGAPPNAME: "mcp-mcplex" });
    expect(entry.sandbox).toBe(SANDBOX);
    await configCheck(file);
  });

  it("writes a remote as its url with URL variables filled and secret headers referenced", async () => {
    const file = join(dir, "analytics.yaml");
    const add = await mcplex([
      "add",
      "analytics",
      "--config",
      file,
      "--env",
      "tenant=acme",
      "--env",
      "X-Api-Key=k-9",
      "--env",
      "api_token=t-1",
    ]);
    expect(add.code, add.stderr).toBe(0);
    const entry = parse(await readFile(file, "utf8")).servers.analytics;
    expect(entry).toEqual({
      url: "https://acme.analytics.example.com/mcp",
      headers: {
        "X-Api-Key": "${secret:analytics.X-Api-Key}",
        Authorization: "Bearer ${secret:analytics.api_token}",
      },
    });
    const store = new SecretStore({ env: { MCPLEX_HOME: home, MCPLEX_SECRET_KEY: SECRET_KEY } });
    expect(await store.get("analytics.api_token")).toBe("t-1");
    await configCheck(file);
  });

  it("adds into a JSON mcpServers file with comments, keeping them", async () => {
    const file = join(dir, "claude.json");
    await writeFile(
      file,
      '{\n  // my desktop servers\n  "mcpServers": {\n    "other": { "command": "true" }, // keep\n  }\n}\n',
    );
    const add = await mcplex(["add", "memory", "--config", file]);
    expect(add.code, add.stderr).toBe(0);
    const text = await readFile(file, "utf8");
    expect(text).toContain("// my desktop servers");
    expect(text).toContain("// keep");
    expect(text).toContain(`"@modelcontextprotocol/server-memory@${MEMORY_VERSION}"`);
    await configCheck(file);
  });

  it("lands every one of four adds run at once on the same file", async () => {
    const file = join(dir, "together.yaml");
    const names = ["one", "two", "three", "four"];
    const results = await Promise.all(
      names.map((name) => mcplex(["add", "memory", "--name", name, "--config", file])),
    );
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    expect(Object.keys(parse(await readFile(file, "utf8")).servers).sort()).toEqual([...names].sort());
  });

  it("refuses a name the config already has", async () => {
    const file = join(dir, "twice.yaml");
    expect((await mcplex(["add", "memory", "--config", file])).code).toBe(0);
    const again = await mcplex(["add", "memory", "--config", file]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('already has a server named "memory"');
    expect(again.stderr).toContain("--name");
  });

  it("says a name is not in the registry", async () => {
    const result = await mcplex(["add", "no-such-server", "--config", join(dir, "none.yaml")]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('no server named "no-such-server"');
    expect(result.stderr).toContain("REGISTRY_NOT_FOUND");
  });

  it("says when the registry URL does not answer the registry's API", async () => {
    const result = await runCli(["search", "x", "--registry", `${registry.url}/not-here`]);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain("answered 404");
    expect(result.stderr).toContain("REGISTRY_UNAVAILABLE");
    const bad = await runCli(["add", "x", "--registry", "ftp://registry.example"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("is not http(s)");
  });

  it("lists the servers a name matches and asks for the exact one", async () => {
    const result = await mcplex(["add", "notes", "--config", join(dir, "none.yaml")]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("io.github.alice/notes");
    expect(result.stderr).toContain("io.github.bob/notes");
    expect(result.stderr).toContain("exact name");
  });

  it("says what to install when this machine cannot run the package", async () => {
    const result = await mcplex(
      ["add", "weather", "--config", join(dir, "none.yaml"), "--env", "WEATHER_API_KEY=x"],
      emptyBin,
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("RUNTIME_MISSING");
    expect(result.stderr).toContain("install uv");
    const oci = await mcplex(["add", "postgres", "--config", join(dir, "none.yaml")], emptyBin);
    expect(oci.stderr).toContain("install Docker or Podman");
  });

  it("names the values a server needs when they are not given", async () => {
    const result = await mcplex(
      ["add", "weather", "--config", join(dir, "none.yaml")],
      `${fakeBin}:${process.env.PATH}`,
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--env WEATHER_API_KEY=...");
  });
});

describe("mcplex add on a terminal", () => {
  it("asks for the values it needs, without echoing a secret", async () => {
    const file = join(dir, "asked.yaml");
    const command = [process.execPath, CLI, "add", "weather", "--config", file, "--registry", registry.url]
      .map((arg) => `'${arg.replaceAll("'", "'\\''")}'`)
      .join(" ");
    // script(1) gives the CLI a pseudo-terminal for stdin and stderr, as a person's shell does.
    const child = spawn("script", ["-qec", command, "/dev/null"], {
      env: {
        ...process.env,
        MCPLEX_HOME: home,
        MCPLEX_SECRET_KEY: SECRET_KEY,
        PATH: `${fakeBin}:${process.env.PATH}`,
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let output = "";
    const prompted = new Promise<void>((done) => {
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        output += chunk;
        if (output.includes("WEATHER_API_KEY (API key) [secret]: ")) done();
      });
    });
    const exited = new Promise<number | null>((done) => child.on("close", done));
    await prompted;
    child.stdin.write("typed-secret-42\r");
    expect(await exited, output).toBe(0);
    expect(output).not.toContain("typed-secret-42");
    expect(parse(await readFile(file, "utf8")).servers.weather.env).toEqual({
      WEATHER_API_KEY: "${secret:weather.WEATHER_API_KEY}",
    });
    const store = new SecretStore({ env: { MCPLEX_HOME: home, MCPLEX_SECRET_KEY: SECRET_KEY } });
    expect(await store.get("weather.WEATHER_API_KEY")).toBe("typed-secret-42");
  }, 30_000);
});
