import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI } from "../support/cli.js";
import { COMMANDS, resultText, type ServeProcess, serveHttp } from "../support/gateway.js";

// One upstream that answers nothing until the test releases it, beside one that starts at once.
// A client's first list must not wait for the slow one (Claude Code gives tools/list about 5 s,
// and a first `npx -y` download can take longer): it gets what is ready, is told when the rest
// arrives, and a call to the slow server's tool waits for it instead of failing as unknown.
// The slow server's startTimeout is ten minutes: a list that waited for it would time the test out.

let dir: string;
let release: string;
let config: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-ready-wait-"));
  release = join(dir, "release");
  config = join(dir, "mcplex.yaml");
  await writeFile(
    config,
    [
      "serve:",
      "  readyWait: 300ms",
      "servers:",
      "  fast:",
      `    command: ${JSON.stringify(COMMANDS.fixture.command)}`,
      `    args: ${JSON.stringify(COMMANDS.fixture.args)}`,
      "  slow:",
      `    command: ${JSON.stringify(COMMANDS.fixture.command)}`,
      `    args: ${JSON.stringify([resolve("test/fixtures/servers/held-server.ts")])}`,
      "    startTimeout: 10m",
      `    env: { HOLD_UNTIL: ${JSON.stringify(release)} }`,
      "",
    ].join("\n"),
  );
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const names = async (client: Client) => (await client.listTools()).tools.map((t) => t.name);

/** Waits for tools/list_changed notifications, one at a time. */
function changes(client: Client): () => Promise<void> {
  let count = 0;
  let waiter: (() => void) | undefined;
  client.setNotificationHandler("notifications/tools/list_changed", () => {
    count++;
    waiter?.();
  });
  return () => {
    if (count > 0) {
      count--;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      waiter = () => {
        waiter = undefined;
        count--;
        resolve();
      };
    });
  };
}

/** Lists until `name` is there, waiting for a list change between lists. */
async function listUntil(client: Client, nextChange: () => Promise<void>, name: string): Promise<string[]> {
  for (;;) {
    const listed = await names(client);
    if (listed.includes(name)) return listed;
    await nextChange();
  }
}

/**
 * What every front must show, for a connected client of either generation: lists answered while
 * the slow server is held (with the fast server's tools, at once or once it is announced), the
 * slow server announced when released, and a call to its tool that waited for it.
 */
async function servesWhatIsReady(client: Client, listen: () => Promise<() => Promise<void>>): Promise<void> {
  const nextChange = changes(client);
  const stopListening = await listen();
  const before = await listUntil(client, nextChange, "fast__echo");
  expect(before.some((name) => name.startsWith("slow__"))).toBe(false);
  // A call to the starting server's tool waits for it rather than failing as unknown.
  const call = client.callTool({ name: "slow__echo", arguments: { message: "late" } });
  await writeFile(release, "");
  await listUntil(client, nextChange, "slow__echo");
  expect(resultText(await call)).toBe("echo: late");
  await stopListening();
}

describe("a slow upstream does not hide the others", () => {
  it("serve --stdio answers a 2025 client with the ready servers, then announces the slow one", async () => {
    const client = new Client(
      { name: "ready-wait-stdio", version: "1.0.0" },
      { versionNegotiation: { mode: "legacy" } },
    );
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, "serve", "--stdio", "--config", config],
        stderr: "ignore",
        env: { ...getDefaultEnvironment(), MCPLEX_CHECK_SIGNALS: process.env.MCPLEX_CHECK_SIGNALS ?? "" },
      }),
    );
    try {
      await servesWhatIsReady(client, async () => async () => {});
    } finally {
      await client.close();
    }
  });

  it("serve --stdio --tools search: call_tool of the starting server's tool waits for it", async () => {
    const client = new Client(
      { name: "ready-wait-search", version: "1.0.0" },
      { versionNegotiation: { mode: "legacy" } },
    );
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, "serve", "--stdio", "--tools", "search", "--config", config],
        stderr: "ignore",
        env: { ...getDefaultEnvironment(), MCPLEX_CHECK_SIGNALS: process.env.MCPLEX_CHECK_SIGNALS ?? "" },
      }),
    );
    try {
      expect(await names(client)).toContain("call_tool");
      // Answered after readyWait (300 ms) while the slow server is held: it must wait, not say unknown.
      const call = client.callTool({
        name: "call_tool",
        arguments: { name: "slow__echo", arguments: { message: "late" } },
      });
      const first = await Promise.race([call.then(() => "answered"), client.ping().then(() => "pinged")]);
      expect(first).toBe("pinged");
      await writeFile(release, "");
      const result = await call;
      expect(result.isError).not.toBe(true);
      expect(resultText(result)).toBe("echo: late");
    } finally {
      await client.close();
    }
  });

  describe("serve --http", () => {
    let gw: ServeProcess | undefined;
    afterEach(async () => {
      await gw?.stop();
      gw = undefined;
    });

    it("answers a 2025 session with the ready servers, then announces the slow one", async () => {
      gw = await serveHttp(["--config", config, "--ready-wait", "300ms"]);
      const client = new Client(
        { name: "ready-wait-2025", version: "1.0.0" },
        { versionNegotiation: { mode: "legacy" } },
      );
      await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
      try {
        await servesWhatIsReady(client, async () => async () => {});
      } finally {
        await client.close();
      }
    });

    it("answers a 2026 client's discover and list with the ready servers, then announces the slow one on its listen", async () => {
      gw = await serveHttp(["--config", config, "--ready-wait", "300ms"]);
      const client = new Client(
        { name: "ready-wait-2026", version: "1.0.0" },
        { versionNegotiation: { mode: "auto" } },
      );
      await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
      try {
        await servesWhatIsReady(client, async () => {
          const subscription = await client.listen({ toolsListChanged: true });
          return () => subscription.close();
        });
      } finally {
        await client.close();
      }
    });
  });
});
