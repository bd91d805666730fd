import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMMANDS, resultText, type ServeProcess, serveHttp, yamlConfig } from "../support/gateway.js";

let dir: string;
let config: string;
let gw: ServeProcess;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-reload-"));
  config = join(dir, "mcplex.yaml");
  await writeFile(config, yamlConfig({ fx: COMMANDS.fixture }));
  gw = await serveHttp(["--config", config]);
});
afterAll(async () => {
  await gw?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("mcplex serve with a config file that changes", () => {
  it("adds and removes servers while clients stay connected, and tells them", async () => {
    const client = new Client(
      { name: "reload-test", version: "1" },
      { versionNegotiation: { mode: "legacy" } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
    try {
      const names = async () => (await client.listTools()).tools.map((t) => t.name);
      expect(await names()).toContain("fx__echo");
      const changed = (predicate: (tools: string[]) => boolean) =>
        new Promise<void>((done) =>
          client.setNotificationHandler("notifications/tools/list_changed", async () => {
            if (predicate(await names())) done();
          }),
        );

      const added = changed((tools) => tools.includes("memory__read_graph"));
      await writeFile(config, yamlConfig({ fx: COMMANDS.fixture, memory: COMMANDS.memory }));
      await added;
      const graph = await client.callTool({ name: "memory__read_graph", arguments: {} });
      expect(graph.isError).not.toBe(true);

      const removed = changed((tools) => !tools.includes("fx__echo"));
      await writeFile(config, yamlConfig({ memory: COMMANDS.memory }));
      await removed;
      expect(await names()).toContain("memory__read_graph");

      // A file that does not load changes nothing, and says why (bounded wait for the log line).
      await writeFile(config, "servers:\n  memory: {comand: oops}\n");
      for (let i = 0; i < 200 && !gw.stderr().includes("config not reloaded"); i++) {
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(gw.stderr()).toMatch(/config not reloaded:[\s\S]*unknown key "comand"/);
      const still = await client.callTool({ name: "memory__read_graph", arguments: {} });
      expect(still.isError).not.toBe(true);
    } finally {
      await client.close();
    }
  });
});

/** Resolves once the serve process has logged `pattern` `times` times in all (waits on its stderr). */
function logged(gw: ServeProcess, pattern: RegExp, times: number): Promise<void> {
  const global = new RegExp(pattern.source, "g");
  const enough = () => (gw.stderr().match(global)?.length ?? 0) >= times;
  return new Promise((done) => {
    if (enough()) return done();
    const onData = () => {
      if (!enough()) return;
      gw.child.stderr?.off("data", onData);
      done();
    };
    gw.child.stderr?.on("data", onData);
  });
}

describe("mcplex serve reloading profiles and tokens", () => {
  let dir2: string;
  let file: string;
  let served: ServeProcess;
  const write = (profileServers: string[], tokens: string[]) =>
    writeFile(
      file,
      yamlConfig(
        { fx: COMMANDS.fixture, memory: COMMANDS.memory },
        [
          "profiles:",
          `  narrow: { servers: ${JSON.stringify(profileServers)} }`,
          "tokens:",
          ...tokens.map((t) =>
            t === "alpha"
              ? "  - { token: alpha-token-0123456789, profile: narrow }"
              : `  - { token: ${t}-token-0123456789 }`,
          ),
          "",
        ].join("\n"),
      ),
    );
  const connect = async (token: string) => {
    const client = new Client(
      { name: "reload-auth", version: "1" },
      { versionNegotiation: { mode: "legacy" } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(served.url), {
        requestInit: { headers: { authorization: `Bearer ${token}-token-0123456789` } },
      }),
    );
    return client;
  };
  beforeAll(async () => {
    dir2 = await mkdtemp(join(tmpdir(), "mcplex-reload-auth-"));
    file = join(dir2, "mcplex.yaml");
    await write(["fx"], ["alpha"]);
    served = await serveHttp(["--config", file]);
  });
  afterAll(async () => {
    await served?.stop();
    await rm(dir2, { recursive: true, force: true });
  });

  it("applies new profiles and tokens to clients already connected", async () => {
    const alpha = await connect("alpha");
    try {
      const names = async () => (await alpha.listTools()).tools.map((t) => t.name);
      expect(await names()).toContain("fx__echo");
      expect(await names()).not.toContain("memory__read_graph");
      await expect(connect("beta")).rejects.toThrow(/401|Unauthorized/);

      // The profile grows and a second token appears: alpha's session hears of the new
      // tools without reconnecting, and beta gets in.
      const widened = new Promise<void>((done) =>
        alpha.setNotificationHandler("notifications/tools/list_changed", async () => {
          if ((await names()).includes("memory__read_graph")) done();
        }),
      );
      await write(["fx", "memory"], ["alpha", "beta"]);
      await widened;
      await logged(served, /profiles updated; tokens updated/, 1);
      const beta = await connect("beta");
      expect((await beta.listTools()).tools.map((t) => t.name)).toContain("memory__read_graph");

      // alpha's token is withdrawn: its open session is refused from its next request on.
      await write(["fx", "memory"], ["beta"]);
      await logged(served, /tokens updated/, 2);
      await expect(alpha.listTools()).rejects.toThrow(/401|Unauthorized/);
      expect((await beta.listTools()).tools.length).toBeGreaterThan(0);
      await beta.close();
    } finally {
      await alpha.close().catch(() => {});
    }
  });
});

describe("mcplex serve reloading catalog modes", () => {
  it("switches a profile's clients to the mode the reloaded file gives it, and tells them", async () => {
    const home = await mkdtemp(join(tmpdir(), "mcplex-reload-modes-"));
    const file = join(home, "mcplex.yaml");
    const write = (mode: string) =>
      writeFile(
        file,
        yamlConfig(
          { fx: COMMANDS.fixture },
          [
            "profiles:",
            `  agent: { mode: ${mode} }`,
            "tokens:",
            "  - { token: agent-token-0123456789, profile: agent }",
            "",
          ].join("\n"),
        ),
      );
    await write("all");
    const served = await serveHttp(["--config", file]);
    const client = new Client(
      { name: "reload-modes", version: "1" },
      { versionNegotiation: { mode: "legacy" } },
    );
    try {
      await client.connect(
        new StreamableHTTPClientTransport(new URL(served.url), {
          requestInit: { headers: { authorization: "Bearer agent-token-0123456789" } },
        }),
      );
      const names = async () => (await client.listTools()).tools.map((t) => t.name);
      expect(await names()).toContain("fx__echo");
      const switched = new Promise<void>((done) =>
        client.setNotificationHandler("notifications/tools/list_changed", async () => {
          if ((await names()).includes("run_code")) done();
        }),
      );
      await write("code");
      await switched;
      expect(await names()).toEqual(["search_tools", "describe_tools", "run_code"]);
    } finally {
      await client.close();
      await served.stop();
      await rm(home, { recursive: true, force: true });
    }
  });
});

describe("mcplex serve reloading its default mode", () => {
  it("switches every client without a mode of its own, and tells them", async () => {
    const home = await mkdtemp(join(tmpdir(), "mcplex-reload-default-"));
    const file = join(home, "mcplex.yaml");
    const write = (mode: string) =>
      writeFile(file, yamlConfig({ fx: COMMANDS.fixture }, `serve:\n  readyWait: 1m\n  mode: ${mode}\n`));
    await write("all");
    const served = await serveHttp(["--config", file]);
    const client = new Client(
      { name: "reload-default", version: "1" },
      { versionNegotiation: { mode: "legacy" } },
    );
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(served.url)));
      const names = async () => (await client.listTools()).tools.map((t) => t.name);
      expect(await names()).toContain("fx__echo");
      const switched = new Promise<void>((done) =>
        client.setNotificationHandler("notifications/tools/list_changed", async () => {
          if ((await names()).includes("call_tool")) done();
        }),
      );
      await write("search");
      await switched;
      expect(await names()).toEqual(["search_tools", "describe_tools", "call_tool"]);
    } finally {
      await client.close();
      await served.stop();
      await rm(home, { recursive: true, force: true });
    }
  });
});

describe("mcplex serve reloading policies", () => {
  let dir3: string;
  let file: string;
  let served: ServeProcess;
  const write = (policies: string) => writeFile(file, `${yamlConfig({ fx: COMMANDS.fixture })}${policies}`);
  beforeAll(async () => {
    dir3 = await mkdtemp(join(tmpdir(), "mcplex-reload-policies-"));
    file = join(dir3, "mcplex.yaml");
    await write("");
    served = await serveHttp(["--config", file]);
  });
  afterAll(async () => {
    await served?.stop();
    await rm(dir3, { recursive: true, force: true });
  });

  it("puts the first policy to work on a reload, changes it on the next, and takes it away", async () => {
    const client = new Client({ name: "reload-policies", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(served.url)));
    const echo = (message: string) =>
      client.callTool({ name: "fx__echo", arguments: { message } }).then(
        (result) => resultText(result),
        (error: Error) => error.message,
      );
    const rule = (word: string) =>
      `policies:\n  - name: no-${word}\n    when: 'request.arguments.message == "${word}"'\n    effect: deny\n    message: ${word} is not echoed\n`;
    try {
      expect(await echo("red")).toBe("echo: red");
      await write(rule("red"));
      await logged(served, /config reloaded: policies and guardrails updated/, 1);
      expect(await echo("red")).toContain("red is not echoed");
      await write(rule("blue"));
      await logged(served, /config reloaded: policies and guardrails updated/, 2);
      expect(await echo("red")).toBe("echo: red");
      expect(await echo("blue")).toContain("blue is not echoed");
      await write("");
      await logged(served, /config reloaded: policies and guardrails updated/, 3);
      expect(await echo("blue")).toBe("echo: blue");
    } finally {
      await client.close();
    }
  });
});
