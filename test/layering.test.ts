import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const biome = resolve("node_modules/.bin/biome");
const dir = mkdtempSync(join(tmpdir(), "mcplex-layers-"));
copyFileSync("biome.json", join(dir, "biome.json"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Lints one file placed at `path` (under a copy of the project's lint config); the diagnostics. */
function lint(path: string, source: string): string {
  const file = join(dir, path);
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, source);
  try {
    execFileSync(biome, ["lint", "--max-diagnostics=50", path], {
      cwd: dir,
      encoding: "utf8",
      stdio: "pipe",
    });
    return "";
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    return `${e.stdout ?? ""}${e.stderr ?? ""}`;
  } finally {
    rmSync(file);
  }
}

const importing = (from: string) => `import { thing } from "${from}";\n\nexport const used = thing;\n`;

// The layering rule of docs/DESIGN.md is the linter's: these imports fail `npm run lint`.
describe("layering", () => {
  it.each([
    ["src/gateway/front.ts", "../upstream/upstream.js", "src/gateway/ reaches servers only through the hub"],
    [
      "src/gateway/deep/front.ts",
      "../../upstream/connect.js",
      "src/gateway/ reaches servers only through the hub",
    ],
    ["src/upstream/transport.ts", "../gateway/gateway.js", "src/upstream/"],
    ["src/upstream/transport.ts", "../hub/hub.js", "src/upstream/"],
    ["src/protocol/framing.ts", "../upstream/upstream.js", "src/protocol/ is the wire"],
    ["src/protocol/framing.ts", "../hub/hub.js", "src/protocol/ is the wire"],
    ["src/hub/part.ts", "../gateway/dispatcher.js", "the hub, catalog and config know nothing of the fronts"],
    ["src/catalog/part.ts", "../cli/main.js", "the hub, catalog and config know nothing of the fronts"],
    ["src/recording/book.ts", "../hub/hub.js", "src/recording/ (the recording format"],
    ["src/recording/book.ts", "../upstream/upstream.js", "src/recording/ (the recording format"],
    ["src/agent/loop.ts", "../testing/mock-llm-server.js", "runtime code never imports it"],
    ["src/gateway/front.ts", "../testing/index.js", "runtime code never imports it"],
    ["src/gateway/front.ts", "../cluster/cluster.js", "src/gateway/ reaches servers only through the hub"],
    ["src/gateway/front.ts", "@redis/client", "src/cluster/ is the only folder that talks to Redis"],
    ["src/serve/serve.ts", "redis", "src/cluster/ is the only folder that talks to Redis"],
    ["src/hub/part.ts", "ioredis", "src/cluster/ is the only folder that talks to Redis"],
    ["src/cluster/part.ts", "../upstream/upstream.js", "src/cluster/ joins gateways through Redis"],
    ["src/fronts/http-front.ts", "../dashboard/dashboard.js", "a front never imports the dashboard"],
    ["src/fronts/ws-front.ts", "../upstream/upstream.js", "src/fronts/ (HTTP, SSE, WebSocket, stdio)"],
    ["src/fronts/ws-front.ts", "../cluster/cluster.js", "src/fronts/ (HTTP, SSE, WebSocket, stdio)"],
    ["src/gateway/gateway.ts", "../fronts/http-front.js", "know nothing of the fronts"],
    ["src/gateway/layers/metrics.ts", "../../fronts/http-front.js", "know nothing of the fronts"],
    ["src/gateway/layers/call-watch.ts", "../../dashboard/call-feed.js", "know nothing of the fronts"],
  ])("%s may not import %s", (path, from, message) => {
    expect(lint(path, importing(from))).toContain(message);
  });

  it.each([
    ["src/gateway/front.ts", "../protocol/rev2026.js"],
    ["src/gateway/front.ts", "../hub/hub.js"],
    ["src/upstream/transport.ts", "../protocol/rpc-connection.js"],
    ["src/hub/part.ts", "../upstream/upstream.js"],
    ["src/upstream/transport.ts", "../recording/replay-book.js"],
    ["src/recording/book.ts", "../config/redact.js"],
    ["src/protocol/framing.ts", "../errors.js"],
    ["src/cluster/redis-link.ts", "@redis/client"],
    ["src/cluster/cluster.ts", "../fronts/cluster-link.js"],
    ["src/fronts/http-front.ts", "../gateway/gateway.js"],
    ["src/dashboard/dashboard.ts", "../fronts/front-page.js"],
    ["src/gateway/index.ts", "../fronts/http-front.js"],
    ["src/serve/serve.ts", "../cluster/cluster.js"],
  ])("%s may import %s", (path, from) => {
    expect(lint(path, importing(from))).not.toContain("Layering");
  });
});
