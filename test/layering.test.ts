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

// The layering of docs/design/layers.md is the linter's: these imports fail `npm run lint`.
describe("layering", () => {
  it.each([
    ["src/gateway/front.ts", "../upstream/upstream.js", "src/gateway/ may import only"],
    ["src/gateway/deep/front.ts", "../../upstream/connect.js", "src/gateway/ may import only"],
    ["src/upstream/transport.ts", "../gateway/gateway.js", "src/upstream/"],
    ["src/upstream/transport.ts", "../hub/hub.js", "src/upstream/"],
    ["src/protocol/framing.ts", "../upstream/upstream.js", "src/protocol/ may import only errors.ts"],
    ["src/protocol/framing.ts", "../hub/hub.js", "src/protocol/ may import only errors.ts"],
    ["src/hub/part.ts", "../gateway/dispatcher.js", "src/hub/ may import only"],
    ["src/catalog/part.ts", "../cli/main.js", "src/catalog/ may import only"],
    ["src/recording/book.ts", "../hub/hub.js", "src/recording/ may import only"],
    ["src/recording/book.ts", "../upstream/upstream.js", "src/recording/ may import only"],
    ["src/agent/loop.ts", "../testing/mock-llm-server.js", "runtime code never imports it"],
    ["src/gateway/front.ts", "../testing/index.js", "runtime code never imports it"],
    ["src/gateway/front.ts", "../cluster/cluster.js", "src/gateway/ may import only"],
    ["src/gateway/front.ts", "@redis/client", "src/cluster/ is the only folder that talks to Redis"],
    ["src/assembly/serve.ts", "redis", "src/cluster/ is the only folder that talks to Redis"],
    ["src/hub/part.ts", "ioredis", "src/cluster/ is the only folder that talks to Redis"],
    ["src/cluster/part.ts", "../upstream/upstream.js", "src/cluster/ may import only"],
    ["src/fronts/http-front.ts", "../dashboard/dashboard.js", "src/fronts/ may import only"],
    ["src/fronts/ws-front.ts", "../upstream/upstream.js", "src/fronts/ may import only"],
    ["src/fronts/ws-front.ts", "../cluster/cluster.js", "src/fronts/ may import only"],
    ["src/gateway/gateway.ts", "../fronts/http-front.js", "src/gateway/ may import only"],
    ["src/gateway/metrics.ts", "../fronts/http-front.js", "src/gateway/ may import only"],
    ["src/gateway/call-watch.ts", "../dashboard/call-feed.js", "src/gateway/ may import only"],
    // An extension sits two levels deep: its rules count one more `../`.
    ["src/ext/tasks/task-store.ts", "../../gateway/gateway.js", "src/ext/tasks/ may import only"],
    ["src/ext/tasks/deep/part.ts", "../../../gateway/gateway.js", "src/ext/tasks/ may import only"],
    ["src/ext/tasks/task-store.ts", "../skills/skill.js", "src/ext/tasks/ may import only"],
    ["src/ext/tasks/deep/part.ts", "../../skills/skill.js", "src/ext/tasks/ may import only"],
    ["src/ext/tasks/task-store.ts", "../../testing/index.js", "runtime code never imports it"],
    ["src/ext/tasks/deep/part.ts", "../../../testing/index.js", "runtime code never imports it"],
    ["src/storage/file-lock.ts", "../config/types.js", "src/storage/ may import only errors.ts"],
    ["src/servers/part.ts", "../hub/hub.js", "src/servers/ may import only"],
    ["src/interceptors/part.ts", "../gateway/gateway.js", "src/interceptors/ may import only"],
    ["src/hub/part.ts", "../assembly/serve.js", "src/hub/ may import only"],
    ["src/protocol/part.ts", "../assembly/entries/index.js", "src/protocol/ may import only"],
    ["src/errors.ts", "./protocol/wire-error.js", "src/errors.ts imports nothing of mcplex"],
    // A file with a known upward arrow may keep that one, and gain no other.
    ["src/credentials/gateway-credentials.ts", "../cli/main.js", "src/credentials/ may import only"],
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
    ["src/assembly/entries/gateway.ts", "../../fronts/http-front.js"],
    ["src/assembly/serve.ts", "../cluster/cluster.js"],
    ["src/ext/tasks/task-store.ts", "../../hub/hub.js"],
    ["src/ext/tasks/deep/part.ts", "../../../catalog/catalog.js"],
    ["src/ext/tasks/deep/part.ts", "../task-store.js"],
    ["src/gateway/methods/part.ts", "../gateway.js"],
    ["src/servers/part.ts", "../upstream/connect.js"],
    ["src/interceptors/part.ts", "../hub/call-pipeline.js"],
    ["src/assembly/part.ts", "../gateway/gateway.js"],
    ["src/assembly/entries/index.ts", "../../hub/hub.js"],
    ["src/hub/hub.ts", "../ext/skills/skill-reader.js"],
  ])("%s may import %s", (path, from) => {
    expect(lint(path, importing(from))).not.toContain("Layering");
  });

  it("counts a type-only import and an import() as imports", () => {
    const typeOnly = 'import type { Gateway } from "../gateway/gateway.js";\n\nexport type Used = Gateway;\n';
    const dynamic = 'export const load = () => import("../gateway/gateway.js");\n';
    expect(lint("src/hub/part.ts", typeOnly)).toContain("src/hub/ may import only");
    expect(lint("src/hub/part.ts", dynamic)).toContain("src/hub/ may import only");
  });
});
