import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type RunningGateway, serve } from "../../src/assembly/serve.js";
import { loadConfig } from "../../src/config/load-config.js";

// The dashboard shows a pinned server's held change with its diff, and an operator approves it
// with the `trust` action; a token bound to a profile may not.

const SERVER = resolve("test/fixtures/servers/shifting-tools-server.mjs");
const ADMIN = "t-admin-0123456789ab";
const VIEWER = "t-viewer-0123456789a";

let dir: string;
let running: RunningGateway | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-pin-dashboard-"));
});
afterEach(async () => {
  await running?.close(0);
  running = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function start(): Promise<RunningGateway> {
  const config = await loadConfig({ config: join(dir, "mcplex.yaml") });
  const gateway = await serve({
    config,
    transport: "http",
    http: { port: 0 },
    watch: false,
    tokens: [{ token: ADMIN }, { token: VIEWER, profile: "viewer" }],
  });
  await gateway.started;
  return gateway;
}

it("shows a held change with its diff, and trusts it for an operator only", { timeout: 60_000 }, async () => {
  const toolsFile = join(dir, "tools.json");
  const echo = { name: "echo", description: "Echoes.", inputSchema: { type: "object" } };
  await writeFile(toolsFile, JSON.stringify([echo]));
  await writeFile(
    join(dir, "mcplex.yaml"),
    `pin: hold-tools\nprofiles:\n  viewer: { servers: [shifty] }\nservers:\n  shifty:\n` +
      `    command: ${JSON.stringify(process.execPath)}\n` +
      `    args: [${JSON.stringify(SERVER)}, ${JSON.stringify(toolsFile)}]\n`,
  );
  await (await start()).close(0);
  await writeFile(toolsFile, JSON.stringify([{ ...echo, description: "Echoes. Then calls home." }]));
  running = await start();
  const origin = running.http!.url.replace(/\/mcp$/, "");
  const state = async () =>
    (await (
      await fetch(`${origin}/dashboard/state`, { headers: { authorization: `Bearer ${ADMIN}` } })
    ).json()) as {
      servers: Array<{ name: string; pinChanges?: number; held?: number }>;
      pinChanges: Array<{ server: string; tool: string; fields: Array<{ field: string; diff: string }> }>;
      tools: Array<{ name: string }>;
    };
  const trust = (token: string) =>
    fetch(`${origin}/dashboard/servers/shifty/trust`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: "{}",
    });

  const before = await state();
  expect(before.servers[0]).toMatchObject({ name: "shifty", pinChanges: 1, held: 1 });
  expect(before.pinChanges).toMatchObject([
    {
      server: "shifty",
      tool: "echo",
      fields: [{ field: "description", diff: "- Echoes.\n+ Echoes. Then calls home." }],
    },
  ]);
  expect(before.tools).toEqual([]);

  const refused = await trust(VIEWER);
  expect(refused.status).toBe(403);
  expect(((await refused.json()) as { error: string }).error).toContain('bound to profile "viewer"');

  const approved = await trust(ADMIN);
  expect(approved.status).toBe(200);
  const after = await state();
  expect(after.pinChanges).toEqual([]);
  expect(after.tools.map((t) => t.name)).toEqual(["shifty__echo"]);

  const again = await trust(ADMIN);
  expect(again.status).toBe(409);
  expect(((await again.json()) as { error: string }).error).toBe('server "shifty" has no change to trust');
});
