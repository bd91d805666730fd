import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serve } from "../../src/assembly/serve.js";
import type { AuditRecord } from "../../src/interceptors/audit-log.js";
import { configOf, fixture } from "../support/config.js";
import { connectHttp } from "../support/gateway.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";

// The attack: many clients call at once while the audit file rotates every few lines. Every call
// must leave exactly one whole line, in one of the files, and no file may pass maxSize: a
// rotation that loses, splits or repeats a line under load is an audit trail that lies.

const CALLS = attackSize(400, 6000);
const CLIENTS = attackSize(8, 32);
/** Small enough to rotate every dozen lines or so. */
const MAX_SIZE = 4096;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-audit-rotation-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("audit file rotation under concurrent calls", () => {
  it(
    `keeps each of ${CALLS} calls' lines whole and exactly once across the rotated files`,
    async () => {
      const file = join(dir, "audit.log");
      const running = await serve({
        config: configOf([fixture("fx")], {
          // Enough rotated files to keep them all: the count below sees every line.
          audit: { to: file, maxSize: MAX_SIZE, keep: 10_000, content: false },
          serve: { readyWait: 60_000 },
        }),
        transport: "http",
        http: { host: "127.0.0.1", port: 0, dashboard: false },
        watch: false,
      });
      const started = performance.now();
      try {
        await running.started;
        const clients = await Promise.all(
          Array.from({ length: CLIENTS }, (_, i) =>
            connectHttp(running.http!.url, { name: `rotation-${i}` }),
          ),
        );
        try {
          await Promise.all(
            clients.map(async (client, i) => {
              for (let n = i; n < CALLS; n += CLIENTS)
                await client.callTool({ name: "fx__echo", arguments: { message: `call ${n}` } });
            }),
          );
        } finally {
          await Promise.all(clients.map((client) => client.close()));
        }
      } finally {
        await running.close(0); // flushes what is queued
      }
      const seconds = (performance.now() - started) / 1000;

      const files = (await readdir(dir)).filter((name) => name.startsWith("audit.log"));
      const seen = new Set<string>();
      let lines = 0;
      for (const name of files) {
        const path = join(dir, name);
        const info = await stat(path);
        expect(info.size, name).toBeLessThanOrEqual(MAX_SIZE);
        expect(info.mode & 0o777, name).toBe(0o600);
        const text = await readFile(path, "utf8");
        expect(text.endsWith("\n") || text === "", name).toBe(true);
        for (const line of text.split("\n").filter(Boolean)) {
          const record = JSON.parse(line) as AuditRecord; // a split line is not JSON
          if (record.method !== "tools/call") continue;
          lines++;
          seen.add(`${record.sessionId} ${record.requestId}`);
        }
      }
      expect(files.length).toBeGreaterThan(CALLS / 20);
      expect(lines).toBe(CALLS);
      expect(seen.size).toBe(CALLS);
      reportFigure(
        "audit rotation",
        `${CALLS} calls from ${CLIENTS} clients in ${seconds.toFixed(1)} s, ${files.length} files of at most ${MAX_SIZE} bytes, every line once`,
      );
    },
    attackTimeout(120_000, 600_000),
  );
});
