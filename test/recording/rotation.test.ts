import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerConfig } from "../../src/config/types.js";
import { Hub } from "../../src/hub/hub.js";
import { TrafficRecorder } from "../../src/interceptors/traffic-recorder.js";
import { ReplayBook } from "../../src/recording/replay-book.js";
import { recordingParts } from "../../src/recording/simulated-servers.js";
import { configOf, MEMORY, stdio } from "../support/config.js";

const dir = mkdtempSync(join(tmpdir(), "mcplex-rotate-"));
const recordings = join(dir, "recordings");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const MAX_BYTES = 32 * 1024;
const CALLS = 40;

beforeAll(async () => {
  const record = { dir: recordings, redact: [], maxBytes: MAX_BYTES, maxFiles: 2 };
  const server = stdio("memory", MEMORY, [], {
    env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") },
    record,
  } as Partial<ServerConfig>);
  const config = configOf([server]);
  const recorder = new TrafficRecorder({ recordOf: () => record, secrets: [] });
  const hub = new Hub({ config, upstreamInterceptors: [recorder.interceptor] });
  recorder.attach(hub);
  try {
    await hub.start();
    // Each search answers with the graph so far: the answers grow until the file has to turn.
    for (let i = 0; i < CALLS; i++) {
      await hub.callTool("memory__create_entities", {
        entities: [{ name: `entity-${i}`, entityType: "thing", observations: ["x".repeat(400)] }],
      });
      await hub.callTool("memory__search_nodes", { query: `entity-${i}` });
    }
  } finally {
    await hub.close();
    recorder.close();
  }
}, 60_000);

describe("rotating a recording by size", () => {
  it("keeps the current file and maxFiles numbered ones, each within maxBytes", () => {
    const files = ["memory.jsonl", "memory.1.jsonl", "memory.2.jsonl"].map((f) => join(recordings, f));
    for (const file of files) {
      expect(existsSync(file)).toBe(true);
      expect(statSync(file).size).toBeLessThanOrEqual(MAX_BYTES);
    }
    expect(existsSync(join(recordings, "memory.3.jsonl"))).toBe(false);
    expect(recordingParts(recordings, "memory")).toEqual([files[2], files[1], files[0]]);
  });

  it("starts every file with the header, the handshake and the lists, so each replays on its own", () => {
    for (const part of recordingParts(recordings, "memory")) {
      const types = readFileSync(part, "utf8")
        .trim()
        .split("\n")
        .slice(0, 3)
        .map((line) => JSON.parse(line).type);
      expect(types).toEqual(["header", "server", "lists"]);
      const book = ReplayBook.read([part]);
      expect(book.lists.tools.map((t) => t.name)).toContain("search_nodes");
      expect(book.exchanges.length).toBeGreaterThan(0);
    }
  });

  it("replays the last call from the newest file", () => {
    const book = ReplayBook.read([join(recordings, "memory.jsonl")]);
    const last = book.lookup("tools/call", {
      name: "search_nodes",
      arguments: { query: `entity-${CALLS - 1}` },
    });
    expect(last.found).toBe(true);
  });
});
