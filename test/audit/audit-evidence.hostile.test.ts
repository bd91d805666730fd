import { createHash } from "node:crypto";
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServeEvent, serve } from "../../src/assembly/serve.js";
import type { AuditSinkEvent } from "../../src/audit/audit-sink.js";
import { RotatingFile } from "../../src/audit/rotating-file.js";
import { DEFAULT_AUDIT_MAX_LINE } from "../../src/config/read-audit.js";
import { configOf, fixture } from "../support/config.js";
import { connectHttp } from "../support/gateway.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";

// The outside tester's attacks on the audit trail as evidence: a trail that cannot be written
// must not leave calls hanging, a flood must not push an earlier call's line out of every file,
// and the file must not be written through a link someone else put at its path.

/** A full collection of the heap, as a loaded gateway has every few seconds. */
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-audit-evidence-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("an audit trail that cannot be written", () => {
  const CALLS = attackSize(7, 40);
  /** Under the HTTP front's 4 MiB body limit. */
  const MESSAGE = "x".repeat(3 << 20);

  it(
    `answers each of ${CALLS} large calls (run, or refused with AUDIT_BEHIND, none left waiting) when the audit directory is gone`,
    async () => {
      const trail = join(dir, "gone");
      await mkdir(trail);
      const running = await serve({
        config: configOf([fixture("fx")], {
          audit: { to: join(trail, "audit.log"), maxSize: 1024, keep: 5, content: true },
          serve: { readyWait: 60_000 },
        }),
        transport: "http",
        http: { host: "127.0.0.1", port: 0, dashboard: false },
        watch: false,
      });
      try {
        await running.started;
        const client = await connectHttp(running.http!.url, { name: "unwritable" });
        try {
          // One line in the file; then the directory goes, and the next rotation cannot reopen it.
          await client.callTool({ name: "fx__echo", arguments: { message: "before" } });
          await rm(trail, { recursive: true, force: true });
          // Two large lines fill the backlog that waits for the disk; the calls after them wait.
          const call = (n: number) =>
            client.callTool({ name: "fx__echo", arguments: { message: `${n} ${MESSAGE}` } }).then(
              () => "ran",
              (error: Error) =>
                /audit line cannot be written/.test(error.message)
                  ? "refused"
                  : // The front's memory budget turns away what does not fit: answered too.
                    /memory budget/.test(error.message)
                    ? "shed"
                    : error.message,
            );
          const first = [await call(-1), await call(-2)];
          // Other clients' traffic goes on meanwhile (lists are not audited, so never wait), and
          // the heap is collected as a busy gateway's is: nothing a waiting call needs may go.
          let waiting = true;
          const traffic = (async () => {
            for (let round = 1; waiting; round++) {
              await client.listTools();
              if (round % 10 === 0) collectGarbage();
            }
          })();
          const answers = await Promise.all(Array.from({ length: CALLS }, (_, n) => call(n)));
          waiting = false;
          await traffic;
          answers.push(...first);
          const ran = answers.filter((a) => a === "ran").length;
          const refused = answers.filter((a) => a === "refused").length;
          const shed = answers.filter((a) => a === "shed").length;
          reportFigure(
            "unwritable audit trail",
            `${answers.length} large calls: ${ran} ran, ${refused} refused (AUDIT_BEHIND), ${shed} shed by the memory budget, ${answers.length - ran - refused - shed} unanswered or other`,
          );
          // "Request timed out" is the client giving up on a call never answered.
          expect(answers.filter((a) => a !== "ran" && a !== "refused" && a !== "shed")).toEqual([]);
          expect(refused).toBeGreaterThan(0);
        } finally {
          await client.close();
        }
      } finally {
        await running.close(0);
      }
    },
    attackTimeout(90_000, 300_000),
  );
});

describe("a flood of calls with huge names", () => {
  const FLOOD = 14;
  const NAME_CHARS = attackSize(400_000, 3_900_000);
  /** The flood is more than every kept file can hold, as it was for the outside tester. */
  const MAX_SIZE = attackSize(1 << 20, 10 << 20);
  const KEEP = attackSize(2, 5);

  it(
    `keeps an earlier call's line through ${FLOOD} unknown-tool calls with names of ${NAME_CHARS} characters`,
    async () => {
      const trail = join(dir, "flood");
      await mkdir(trail);
      const file = join(trail, "audit.log");
      const events: ServeEvent[] = [];
      const running = await serve({
        config: configOf([fixture("fx")], {
          audit: { to: file, maxSize: MAX_SIZE, keep: KEEP, content: false },
          serve: { readyWait: 60_000 },
        }),
        transport: "http",
        http: { host: "127.0.0.1", port: 0, dashboard: false },
        watch: false,
        onEvent: (event) => events.push(event),
      });
      const names: string[] = [];
      try {
        await running.started;
        const client = await connectHttp(running.http!.url, { name: "flood" });
        try {
          await client.callTool({ name: "fx__echo", arguments: { message: "the evidence" } });
          for (let n = 0; n < FLOOD; n++) {
            const name = `${n}`.padEnd(NAME_CHARS, "x");
            names.push(name);
            await expect(client.callTool({ name, arguments: {} })).rejects.toThrow();
          }
        } finally {
          await client.close();
        }
      } finally {
        await running.close(0);
      }

      const lines: string[] = [];
      for (const name of (await readdir(trail)).filter((n) => n.startsWith("audit.log")))
        lines.push(...(await readFile(join(trail, name), "utf8")).split("\n").filter(Boolean));
      const longest = Math.max(...lines.map((line) => Buffer.byteLength(line) + 1));
      const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
      const evidence = records.filter((r) => r.target === "fx__echo").length;
      const flood = records.filter((r) => typeof r.target === "object");
      reportFigure(
        "audit flood",
        `${FLOOD} names of ${NAME_CHARS} characters: the earlier line kept ${evidence} time(s), longest line ${longest} bytes, ${flood.length} flood lines`,
      );
      expect(evidence).toBe(1);
      expect(longest).toBeLessThanOrEqual(DEFAULT_AUDIT_MAX_LINE);
      // Each flood call is in the trail, its name cut to what identifies it.
      expect(flood.map((r) => r.target)).toEqual(
        names.map((name) => ({
          cut: true,
          length: name.length,
          sha256: createHash("sha256").update(name).digest("hex"),
          head: name.slice(0, 256),
        })),
      );
      expect(events.filter((e) => e.type === "audit-recent-lines-dropped")).toEqual([]);
    },
    attackTimeout(60_000, 300_000),
  );

  it("warns the operator when a flood rotates out lines younger than audit.keepFor", async () => {
    const trail = join(dir, "warned");
    await mkdir(trail);
    const file = join(trail, "audit.log");
    const events: ServeEvent[] = [];
    const running = await serve({
      config: configOf([fixture("fx")], {
        // Two files of 16 KiB: a few dozen lines of cut names fill them.
        audit: { to: file, maxSize: 16 * 1024, keep: 1, content: false },
        serve: { readyWait: 60_000 },
      }),
      transport: "http",
      http: { host: "127.0.0.1", port: 0, dashboard: false },
      watch: false,
      onEvent: (event) => events.push(event),
    });
    try {
      await running.started;
      const client = await connectHttp(running.http!.url, { name: "flood" });
      try {
        await client.callTool({ name: "fx__echo", arguments: { message: "the evidence" } });
        for (let n = 0; n < 60; n++)
          await expect(client.callTool({ name: `${n}`.padEnd(1100, "x"), arguments: {} })).rejects.toThrow();
      } finally {
        await client.close();
      }
    } finally {
      await running.close(0);
    }
    const warnings = events.filter((e) => e.type === "audit-recent-lines-dropped");
    expect(warnings.length).toBeGreaterThan(0);
    expect(warnings[0]).toMatchObject({ to: file, file: `${file}.1`, keepForMs: 24 * 3_600_000 });
    expect((warnings[0] as { lines: number }).lines).toBeGreaterThan(0);
  });
});

describe("the audit file's path", () => {
  it("refuses a symbolic link at the path, and leaves the file it points to as it was", async () => {
    const target = join(dir, "elsewhere.log");
    await writeFile(target, "not the audit trail\n", { mode: 0o644 });
    const link = join(dir, "linked-audit.log");
    await symlink(target, link);
    const started = serve({
      config: configOf([fixture("fx")], {
        audit: { to: link, maxSize: 10 << 20, keep: 5, content: false },
        serve: { readyWait: 60_000 },
      }),
      transport: "http",
      http: { host: "127.0.0.1", port: 0, dashboard: false },
      watch: false,
    });
    await expect(started).rejects.toMatchObject({
      code: "AUDIT_OPEN_FAILED",
      message: expect.stringContaining("symbolic link"),
    });
    expect(await readFile(target, "utf8")).toBe("not the audit trail\n");
    expect((await stat(target)).mode & 0o777).toBe(0o644);
  });

  it("does not follow a symbolic link put at the path while the file is reopened after a failed write", async () => {
    const trail = join(dir, "swapped");
    await mkdir(trail);
    const path = join(trail, "audit.log");
    const target = join(dir, "swap-target.log");
    await writeFile(target, "not the audit trail\n", { mode: 0o600 });
    const events: AuditSinkEvent[] = [];
    let writeFailed: () => void = () => {};
    const failed = new Promise<void>((resolve) => {
      writeFailed = resolve;
    });
    const file = await RotatingFile.open(path, {
      maxSize: 1024,
      keep: 2,
      onEvent: (event) => {
        events.push(event);
        if (event.type === "audit-write-failed") writeFailed();
      },
    });
    const line = (n: number) => `${JSON.stringify({ n, pad: "x".repeat(600) })}\n`;
    file.write(line(1));
    // The directory goes: the rotation before the second line cannot reopen the file...
    await rm(trail, { recursive: true, force: true });
    file.write(line(2));
    await failed;
    // ...and someone else puts it back as a link to a file of theirs; the next tries refuse it.
    await mkdir(trail);
    await symlink(target, path);
    await file.close();
    expect(await readFile(target, "utf8")).toBe("not the audit trail\n");
    expect(events.at(-1)).toMatchObject({
      type: "audit-lines-lost",
      error: expect.stringContaining("symbolic link"),
    });
  });

  it("makes an audit file that was readable by others 0600 before writing to it", async () => {
    const file = join(dir, "shared-audit.log");
    await writeFile(file, "", { mode: 0o644 });
    await chmod(file, 0o644); // past the umask
    const running = await serve({
      config: configOf([fixture("fx")], {
        audit: { to: file, maxSize: 10 << 20, keep: 5, content: false },
        serve: { readyWait: 60_000 },
      }),
      transport: "http",
      http: { host: "127.0.0.1", port: 0, dashboard: false },
      watch: false,
    });
    try {
      expect((await stat(file)).mode & 0o777).toBe(0o600);
    } finally {
      await running.close(0);
    }
  });
});
