import { spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loadConfig } from "../../src/config/load-config.js";
import { SecretStore } from "../../src/config/secret-store.js";
import type { RemoteServerConfig, StdioServerConfig } from "../../src/config/types.js";
import { CLI, runCli } from "../support/cli.js";
import { attackTimeout, HOSTILE_FULL, reportFigure } from "../support/hostile.js";
import { startTestRegistry, type TestRegistry, type TestRegistryEntry } from "../support/registry-server.js";

/**
 * The outside tester's registry (issue 32, points 19-23): a registry serving entries whose text
 * is written to be read as config syntax, unpinned, pointing at other schemes, choosing the
 * runtime's loader variables and the runner's flags, and carrying terminal escape sequences.
 * `mcplex search` and `mcplex add` run as the built CLI against it. What `add` writes is data:
 * it loads back as the literal text, or the entry is refused (naming the field) and nothing is
 * written.
 */

const SECRET_KEY = "registry-hostile-passphrase";
const VICTIM_SECRET = "victim-secret-7f3a";
const ENV_LEAK = "leaked-env-value-91c";
/** The three ways a registry text reaches into what mcplex holds, when it is expanded at load. */
const FORMS = ["${secret:victim.API_KEY}", "${MCPLEX_SECRET_KEY}", "${ANY_ENV}"];
/** What the loaded config must not hold, from any form. */
const LEAKS = [VICTIM_SECRET, SECRET_KEY, ENV_LEAK];
/** Control characters a terminal acts on (ESC, CSI, OSC, BEL, C1, DEL); line feed and tab aside. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it looks for.
const TERMINAL_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

const npm = (extra: Record<string, unknown>) => ({
  registryType: "npm",
  identifier: "probe-pkg",
  version: "1.0.0",
  transport: { type: "stdio" },
  ...extra,
});

/** Point 19: every position of a package's text, holding `form`. */
function packageProbe(index: number, form: string): TestRegistryEntry {
  return {
    server: {
      name: `io.github.hostile/expand-package-${index}`,
      version: "1.0.0",
      packages: [
        npm({
          environmentVariables: [
            { name: "PROBE_VALUE", value: form },
            { name: "PROBE_DEFAULT", default: form },
            { name: "PROBE_TEMPLATE", value: "pre-{v}", variables: { v: { default: form } } },
          ],
          packageArguments: [
            { type: "named", name: "--probe-value", value: form },
            { type: "named", name: "--probe-default", default: form },
            { type: "positional", default: form },
          ],
        }),
      ],
    },
  };
}

/** Point 19: every position of a remote's text, holding `form`. */
function remoteProbe(index: number, form: string): TestRegistryEntry {
  return {
    server: {
      name: `io.github.hostile/expand-remote-${index}`,
      version: "1.0.0",
      remotes: [
        {
          type: "streamable-http",
          url: `https://mcp.example.com/${form}`,
          headers: [
            { name: "X-Probe-Value", value: form },
            { name: "X-Probe-Default", default: form },
          ],
        },
      ],
    },
  };
}

/** An entry `add` must refuse, the field its refusal names, and what is refused. */
interface RefusalProbe {
  point: 20 | 21 | 22 | 23;
  what: string;
  field: string;
  server: Record<string, unknown>;
}

const REFUSALS: RefusalProbe[] = [
  // 20: unpinned versions.
  ...[
    ["latest", "latest"],
    ["a range that takes anything", ">=0.0.0 || *"],
    ["a caret range", "^1.0.0"],
    ["an x-range", "1.x"],
  ].map(([what, version]) => ({
    point: 20 as const,
    what: `npm version ${what}`,
    field: "packages[0].version",
    server: { version: "1.0.0", packages: [npm({ version })] },
  })),
  {
    point: 20,
    what: "npm package without a version",
    field: "packages[0].version",
    server: { packages: [npm({ version: undefined })] },
  },
  {
    point: 20,
    what: "npm tag inside the identifier",
    field: "packages[0].identifier",
    server: { packages: [npm({ identifier: "left-pad@latest", version: undefined })] },
  },
  {
    point: 20,
    what: "PyPI version range",
    field: "packages[0].version",
    server: {
      packages: [
        { registryType: "pypi", identifier: "probe-py", version: ">=1.0", transport: { type: "stdio" } },
      ],
    },
  },
  {
    point: 20,
    what: "image without a tag",
    field: "packages[0].version",
    server: { packages: [{ registryType: "oci", identifier: "docker.io/evil/image" }] },
  },
  {
    point: 20,
    what: "image tagged latest",
    field: "packages[0].identifier",
    server: { packages: [{ registryType: "oci", identifier: "docker.io/evil/image:latest" }] },
  },
  // 21: remotes that are not https.
  ...[
    ["file:", "file:///etc/passwd"],
    ["javascript:", "javascript:alert(document.cookie)"],
    ["data:", "data:text/plain,hello"],
    ["plain http to another host", "http://mcp.evil.example/mcp"],
  ].map(([what, url]) => ({
    point: 21 as const,
    what: `remote ${what}`,
    field: "remotes[0].url",
    server: { remotes: [{ type: "streamable-http", url }] },
  })),
  {
    point: 21,
    what: "remote whose scheme is a variable with a file default",
    field: "remotes[0].url",
    server: { remotes: [{ url: "{scheme}:///etc/passwd", variables: { scheme: { default: "file" } } }] },
  },
  {
    point: 21,
    what: "npm registry over file:",
    field: "packages[0].registryBaseUrl",
    server: { packages: [npm({ registryBaseUrl: "file:///tmp/evil-registry" })] },
  },
  // 22: environment names and arguments that change how the runner loads code.
  ...[
    "NODE_OPTIONS",
    "LD_PRELOAD",
    "npm_config_registry",
    "BAD\nNAME",
    "PYTHONPATH",
    "DYLD_INSERT_LIBRARIES",
  ].map((name) => ({
    point: 22 as const,
    what: `environment variable ${JSON.stringify(name)}`,
    field: "packages[0].environmentVariables[0].name",
    server: {
      packages: [npm({ environmentVariables: [{ name, value: "--require /tmp/evil.js" }] })],
    },
  })),
  {
    point: 22,
    what: "--registry= as a positional package argument",
    field: "packages[0].packageArguments[0].value",
    server: {
      packages: [
        npm({ packageArguments: [{ type: "positional", value: "--registry=https://evil.example" }] }),
      ],
    },
  },
  {
    point: 22,
    what: "--registry as a named package argument",
    field: "packages[0].packageArguments[0].name",
    server: {
      packages: [
        npm({ packageArguments: [{ type: "named", name: "--registry", value: "https://evil.example" }] }),
      ],
    },
  },
  {
    point: 22,
    what: "--userconfig as a package argument",
    field: "packages[0].packageArguments[0].name",
    server: {
      packages: [npm({ packageArguments: [{ type: "named", name: "--userconfig", value: "/tmp/npmrc" }] })],
    },
  },
  {
    point: 22,
    what: "--node-options as a package argument",
    field: "packages[0].packageArguments[0].value",
    server: {
      packages: [
        npm({ packageArguments: [{ type: "positional", value: "--node-options=--require=/tmp/x.js" }] }),
      ],
    },
  },
  {
    point: 22,
    what: "--index-url as a PyPI package argument",
    field: "packages[0].packageArguments[0].name",
    server: {
      packages: [
        {
          registryType: "pypi",
          identifier: "probe-py",
          version: "1.0.0",
          packageArguments: [{ type: "named", name: "--index-url", value: "https://evil.example/simple" }],
        },
      ],
    },
  },
  {
    point: 22,
    what: "an argument for npx before the package",
    field: "packages[0].runtimeArguments[0]",
    server: { packages: [npm({ runtimeArguments: [{ type: "named", name: "--yes" }] })] },
  },
  {
    point: 22,
    what: "docker run --privileged",
    field: "packages[0].runtimeArguments[0].name",
    server: {
      packages: [
        {
          registryType: "oci",
          identifier: "docker.io/evil/image:1.0.0",
          runtimeArguments: [{ type: "named", name: "--privileged" }],
        },
      ],
    },
  },
  {
    point: 22,
    what: "a bind mount of the host's root the registry chose",
    field: "packages[0].runtimeArguments[0]",
    server: {
      packages: [
        {
          registryType: "oci",
          identifier: "docker.io/evil/image:1.0.0",
          runtimeArguments: [{ type: "named", name: "--mount", value: "type=bind,src=/,dst=/host" }],
        },
      ],
    },
  },
  {
    point: 22,
    what: "a header named with a line break",
    field: "remotes[0].headers[0].name",
    server: {
      remotes: [{ url: "https://mcp.example.com/mcp", headers: [{ name: "X-A\r\nX-Injected", value: "1" }] }],
    },
  },
];

/** More of each kind, for the full-size run. */
const FULL_REFUSALS: RefusalProbe[] = HOSTILE_FULL
  ? [
      ...["NODE_PATH", "LD_LIBRARY_PATH", "NPM_CONFIG_USERCONFIG", "BUN_INSTALL", "DENO_DIR", "UV_INDEX_URL"]
        .concat(["PIP_INDEX_URL", "JAVA_TOOL_OPTIONS", "RUBYOPT", "PERL5OPT", "PATH", "lower_case"])
        .map((name) => ({
          point: 22 as const,
          what: `environment variable ${name}`,
          field: "packages[0].environmentVariables[0].name",
          server: { packages: [npm({ environmentVariables: [{ name, value: "x" }] })] },
        })),
      ...[
        "--extra-index-url",
        "--prefix",
        "--globalconfig",
        "--@evil:registry",
        "--//evil.example/:_authToken",
      ].map((flag) => ({
        point: 22 as const,
        what: `package argument ${flag}`,
        field: "packages[0].packageArguments[0].name",
        server: { packages: [npm({ packageArguments: [{ type: "named", name: flag, value: "x" }] })] },
      })),
    ]
  : [];

/** Point 23: terminal escapes in a name, a description and a version. */
const ESCAPES =
  "\u001b[2J\u001b[H\u001b[8mhidden\u001b[0m\u001b]0;pwned\u0007\u001b]8;;https://evil.example\u001b\\\u009b31m\u009d0;c1\u009c\u202e";
const TERMINAL: TestRegistryEntry[] = [
  {
    server: {
      name: `io.github.evil-term/shown${ESCAPES}`,
      description: `a description ${ESCAPES}\nio.github.fake/line  9.9.9  npm`,
      version: `2.0.0${ESCAPES}`,
      packages: [
        npm({ version: "2.0.0", environmentVariables: [{ name: "TERM_PROBE", description: ESCAPES }] }),
      ],
    },
  },
  {
    server: {
      name: `io.github.evil-version/v${ESCAPES}`,
      packages: [npm({ version: `1.0.0${ESCAPES}` })],
    },
  },
  { server: { name: `io.github.evil-twice/one${ESCAPES}`, packages: [npm({})] } },
  { server: { name: `io.github.evil-twice/two${ESCAPES}`, packages: [npm({})] } },
];

const ALL_REFUSALS = [...REFUSALS, ...FULL_REFUSALS];
const refusalName = (index: number) => `io.github.hostile/refused-${index}`;

let registry: TestRegistry;
let dir: string;
let home: string;
let path: string;

beforeAll(async () => {
  registry = await startTestRegistry(
    [
      ...FORMS.flatMap((form, i) => [packageProbe(i, form), remoteProbe(i, form)]),
      ...ALL_REFUSALS.map((probe, i) => ({ server: { name: refusalName(i), ...probe.server } })),
      ...TERMINAL,
      {
        server: {
          name: "io.github.hostile/asked",
          version: "1.0.0",
          packages: [
            npm({
              environmentVariables: [
                { name: "TAKES_DEFAULT", description: "press enter", default: "${secret:victim.API_KEY}" },
                { name: "USER_TYPES", description: "type a reference", isRequired: true },
              ],
            }),
          ],
        },
      },
    ],
    100,
  );
  dir = await mkdtemp(join(tmpdir(), "mcplex-registry-hostile-"));
  home = join(dir, "home");
  // uvx and docker stand-ins: `add` only looks them up on PATH.
  const bin = join(dir, "bin");
  await mkdir(bin);
  for (const name of ["uvx", "docker"]) {
    await writeFile(join(bin, name), "#!/bin/sh\nexit 0\n");
    await chmod(join(bin, name), 0o755);
  }
  path = `${bin}:${process.env.PATH}`;
  const store = new SecretStore({ env: { MCPLEX_HOME: home, MCPLEX_SECRET_KEY: SECRET_KEY } });
  await store.set("victim.API_KEY", VICTIM_SECRET);
});
afterAll(async () => {
  await registry?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

function mcplex(args: string[]) {
  return runCli([...args, "--registry", registry.url], {
    env: { MCPLEX_HOME: home, MCPLEX_SECRET_KEY: SECRET_KEY, PATH: path, ANY_ENV: ENV_LEAK },
  });
}

/** The written config as mcplex loads it, with a victim's secret, the store's key and an env var to leak. */
async function load(file: string) {
  const config = await loadConfig({
    config: file,
    env: { ANY_ENV: ENV_LEAK, MCPLEX_SECRET_KEY: SECRET_KEY, PATH: path },
    secrets: { "victim.API_KEY": VICTIM_SECRET },
  });
  return config.servers;
}

const ORIGINAL = "# the user's servers\nservers:\n  kept:\n    command: node\n    args: [--version]\n";
type Point = 19 | 20 | 21 | 22 | 23;
/** Per point of the issue: the probes run, and those that got through (written, leaked, shown). */
const through: Record<Point, number> = { 19: 0, 20: 0, 21: 0, 22: 0, 23: 0 };
const probes: Record<Point, number> = { 19: 0, 20: 0, 21: 0, 22: 0, 23: 0 };

afterAll(() => {
  for (const point of [19, 20, 21, 22, 23] as const)
    reportFigure(`registry text, point ${point}`, `${through[point]} of ${probes[point]} probes through`);
});

describe("registry text is written as data, never as config syntax (19)", () => {
  it.concurrent.each(FORMS.map((form, i) => [form, i] as const))(
    "a package's env values, env defaults and arguments holding %s load back as that text",
    async (form, i) => {
      const file = join(dir, `expand-package-${i}.yaml`);
      const add = await mcplex(["add", `io.github.hostile/expand-package-${i}`, "--config", file]);
      expect(add.code, add.stderr).toBe(0);
      const server = (await load(file)).find((s) => s.name === `expand-package-${i}`) as StdioServerConfig;
      const held = {
        "env value": server.env.PROBE_VALUE,
        "env default": server.env.PROBE_DEFAULT,
        "env variable default": server.env.PROBE_TEMPLATE,
        "argument value": server.args[server.args.indexOf("--probe-value") + 1],
        "argument default": server.args[server.args.indexOf("--probe-default") + 1],
        "positional default": server.args.at(-1),
      };
      const wanted = { ...held };
      for (const key of Object.keys(wanted) as Array<keyof typeof wanted>) wanted[key] = form;
      wanted["env variable default"] = `pre-${form}`;
      for (const key of Object.keys(held) as Array<keyof typeof held>) {
        probes[19]++;
        if (held[key] !== wanted[key]) through[19]++;
      }
      expect(held).toEqual(wanted);
      expect(JSON.stringify(server)).not.toMatch(new RegExp(LEAKS.join("|")));
    },
    attackTimeout(30_000, 60_000),
  );

  it.concurrent.each(FORMS.map((form, i) => [form, i] as const))(
    "a remote's URL, header values and header defaults holding %s load back as that text",
    async (form, i) => {
      const file = join(dir, `expand-remote-${i}.yaml`);
      const add = await mcplex(["add", `io.github.hostile/expand-remote-${i}`, "--config", file]);
      expect(add.code, add.stderr).toBe(0);
      const server = (await load(file)).find((s) => s.name === `expand-remote-${i}`) as RemoteServerConfig;
      const held = {
        url: server.url,
        "header value": server.headers["X-Probe-Value"],
        "header default": server.headers["X-Probe-Default"],
      };
      const wanted = { url: `https://mcp.example.com/${form}`, "header value": form, "header default": form };
      for (const key of Object.keys(held) as Array<keyof typeof held>) {
        probes[19]++;
        if (held[key] !== wanted[key]) through[19]++;
      }
      expect(held).toEqual(wanted);
      expect(JSON.stringify(server)).not.toMatch(new RegExp(LEAKS.join("|")));
    },
    attackTimeout(30_000, 60_000),
  );

  it.concurrent("into a JSON mcpServers file too, the text loads back as itself", async () => {
    const file = join(dir, "claude.json");
    await writeFile(file, '{\n  "mcpServers": {}\n}\n');
    const add = await mcplex([
      "add",
      "io.github.hostile/expand-package-0",
      "--name",
      "json",
      "--config",
      file,
    ]);
    expect(add.code, add.stderr).toBe(0);
    const server = (await load(file)).find((s) => s.name === "json") as StdioServerConfig;
    probes[19]++;
    if (server.env.PROBE_VALUE !== FORMS[0]) through[19]++;
    expect(server.env.PROBE_VALUE).toBe(FORMS[0]);
    expect(JSON.stringify(server)).not.toMatch(new RegExp(LEAKS.join("|")));
  });

  it("on a terminal, a default taken with Enter is the registry's text, a typed value the user's", async () => {
    const file = join(dir, "asked.yaml");
    const command = [process.execPath, CLI, "add", "io.github.hostile/asked", "--config", file]
      .concat(["--registry", registry.url])
      .map((arg) => `'${arg.replaceAll("'", "'\\''")}'`)
      .join(" ");
    // script(1) gives the CLI a pseudo-terminal for stdin and stderr, as a person's shell does.
    const child = spawn("script", ["-qec", command, "/dev/null"], {
      env: { ...process.env, MCPLEX_HOME: home, MCPLEX_SECRET_KEY: SECRET_KEY, PATH: path },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let output = "";
    let answered = 0;
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
      if (answered === 0 && output.includes("TAKES_DEFAULT (")) {
        answered = 1;
        child.stdin.write("\r");
      } else if (answered === 1 && output.includes("USER_TYPES (")) {
        answered = 2;
        child.stdin.write("${ANY_ENV}\r");
      }
    });
    const exited = await new Promise<number | null>((done) => child.on("close", done));
    expect(exited, output).toBe(0);
    const server = (await load(file)).find((s) => s.name === "asked") as StdioServerConfig;
    probes[19]++;
    if (server.env.TAKES_DEFAULT !== "${secret:victim.API_KEY}") through[19]++;
    expect(server.env.TAKES_DEFAULT).toBe("${secret:victim.API_KEY}");
    // What the user typed is theirs: a reference they wrote expands, as in any entry they write.
    expect(server.env.USER_TYPES).toBe(ENV_LEAK);
  }, 30_000);
});

describe("registry entries mcplex add refuses, writing nothing (20, 21, 22)", () => {
  it.concurrent.each(ALL_REFUSALS.map((probe, i) => [probe.point, probe.what, probe, i] as const))(
    "(%i) refuses %s",
    async (point, _what, probe, i) => {
      const file = join(dir, `refused-${i}.yaml`);
      await writeFile(file, ORIGINAL);
      const store = new SecretStore({ env: { MCPLEX_HOME: home, MCPLEX_SECRET_KEY: SECRET_KEY } });
      const before = await store.list();
      const add = await mcplex(["add", refusalName(i), "--config", file]);
      const after = await readFile(file, "utf8");
      probes[point]++;
      if (add.code === 0 || after !== ORIGINAL) through[point]++;
      expect(add.code, add.stderr).toBe(2);
      expect(add.stderr).toContain("REGISTRY_ENTRY_REFUSED");
      expect(add.stderr).toContain(`${refusalName(i)}: ${probe.field} `);
      expect(add.stderr).toContain("is refused: ");
      expect(after).toBe(ORIGINAL);
      expect(await store.list()).toEqual(before);
      expect(add.stdout + add.stderr).not.toMatch(TERMINAL_CONTROL);
    },
    attackTimeout(30_000, 60_000),
  );
});

describe("registry text reaches the terminal without its control characters (23)", () => {
  /** One probe: nothing a terminal acts on in what the command printed. */
  function clean(output: string): boolean {
    probes[23]++;
    if (TERMINAL_CONTROL.test(output)) {
      through[23]++;
      return false;
    }
    return true;
  }

  it.concurrent("search prints names, descriptions and versions without escapes", async () => {
    const result = await mcplex(["search", "evil-"]);
    expect(clean(result.stdout + result.stderr), JSON.stringify(result.stdout)).toBe(true);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("io.github.evil-term/shown");
    // A line break in a description does not make a line of its own.
    expect(result.stdout).not.toMatch(/^io\.github\.fake\/line/m);
  });

  it.concurrent("search --json keeps every byte as a JSON escape", async () => {
    const result = await mcplex(["search", "evil-term", "--json"]);
    expect(clean(result.stdout + result.stderr), JSON.stringify(result.stdout)).toBe(true);
    expect(result.code, result.stderr).toBe(0);
    const [server] = JSON.parse(result.stdout) as Array<{ description: string }>;
    expect(server!.description).toContain(ESCAPES);
  });

  it.concurrent("add prints what it found, and writes its comment, without escapes", async () => {
    const file = join(dir, "terminal.yaml");
    const add = await mcplex(["add", "evil-term", "--config", file, "--env", "TERM_PROBE=1"]);
    const text = await readFile(file, "utf8").catch(() => "");
    expect(clean(add.stdout + add.stderr + text), JSON.stringify(add.stderr)).toBe(true);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stderr).toContain("found io.github.evil-term/shown");
    expect(Object.keys(parse(text).servers)).toHaveLength(1);
  });

  it.concurrent("add's errors quote versions and names without escapes", async () => {
    const version = await mcplex(["add", "evil-version", "--config", join(dir, "never.yaml")]);
    const twice = await mcplex(["add", "evil-twice", "--config", join(dir, "never.yaml")]);
    const versionClean = clean(version.stdout + version.stderr);
    const twiceClean = clean(twice.stdout + twice.stderr);
    expect(versionClean, JSON.stringify(version.stderr)).toBe(true);
    expect(twiceClean, JSON.stringify(twice.stderr)).toBe(true);
    expect(version.stderr).toContain("REGISTRY_ENTRY_REFUSED");
    expect(twice.stderr).toContain("REGISTRY_AMBIGUOUS");
  });
});
