import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditSinkEvent } from "../../src/audit/audit-sink.js";
import { openAuditSink } from "../../src/audit/open-audit-sink.js";
import { RotatingFile } from "../../src/audit/rotating-file.js";
import { StreamSink } from "../../src/audit/stream-sink.js";
import { McplexError } from "../../src/errors.js";

// The audit trail's sinks on real files and a real stream: rotation keeps every line whole and
// once, the oldest file goes, the file is private; a full backlog holds calls, then refuses them.

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-audit-sink-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** A line of about `size` bytes naming `n`. */
const line = (n: number, size = 100) => `${JSON.stringify({ n, pad: "x".repeat(size - 20) })}\n`;

/** Every line of `base` and its rotated files, oldest file first. */
async function allLines(base: string): Promise<{ files: string[]; lines: string[] }> {
  const names = (await readdir(join(base, ".."))).filter((f) => f.startsWith(base.split("/").pop()!));
  const order = (f: string) => Number(/\.(\d+)$/.exec(f)?.[1] ?? 0);
  const files = names.sort((a, b) => order(b) - order(a)).map((f) => join(base, "..", f));
  const lines: string[] = [];
  for (const file of files) lines.push(...(await readFile(file, "utf8")).split("\n").filter(Boolean));
  return { files, lines };
}

describe("RotatingFile", () => {
  it("rotates before a line would pass maxSize, never splitting one, and keeps every line once", async () => {
    const path = join(dir, "once", "audit.log");
    await mkdir(join(dir, "once"));
    const file = await RotatingFile.open(path, { maxSize: 1024, keep: 100 });
    for (let n = 0; n < 500; n++) file.write(line(n));
    await file.close();
    const { files, lines } = await allLines(path);
    expect(files.length).toBeGreaterThan(40);
    expect(lines.map((l) => (JSON.parse(l) as { n: number }).n)).toEqual([...Array(500).keys()]);
    for (const f of files) {
      const info = await stat(f);
      expect(info.size, f).toBeLessThanOrEqual(1024);
      expect(info.mode & 0o777, f).toBe(0o600);
    }
  });

  it("keeps `keep` rotated files and drops the oldest", async () => {
    const path = join(dir, "keep", "audit.log");
    await mkdir(join(dir, "keep"));
    const file = await RotatingFile.open(path, { maxSize: 1024, keep: 2 });
    for (let n = 0; n < 100; n++) file.write(line(n));
    await file.close();
    const { files, lines } = await allLines(path);
    expect(files.map((f) => f.split("/").pop())).toEqual(["audit.log.2", "audit.log.1", "audit.log"]);
    const kept = lines.map((l) => (JSON.parse(l) as { n: number }).n);
    // The newest lines, in order, with nothing missing between them.
    expect(kept.at(-1)).toBe(99);
    expect(kept).toEqual([...Array(kept.length).keys()].map((i) => 100 - kept.length + i));
  });

  it("appends to a file that is there, counting what it holds towards maxSize, and shifts older rotations", async () => {
    const path = join(dir, "append.log");
    await writeFile(path, "x".repeat(1000));
    await writeFile(`${path}.1`, "older\n");
    const file = await RotatingFile.open(path, { maxSize: 1024, keep: 2 });
    file.write(line(1));
    await file.close();
    expect(await readFile(`${path}.2`, "utf8")).toBe("older\n");
    expect((await readFile(`${path}.1`, "utf8")).length).toBe(1000);
    expect(await readFile(path, "utf8")).toBe(line(1));
  });

  it("refuses a file it cannot open, naming the path and the reason", async () => {
    const missing = join(dir, "no-such-dir", "audit.log");
    const error = await RotatingFile.open(missing, { maxSize: 1024, keep: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McplexError);
    expect(error).toMatchObject({ code: "AUDIT_OPEN_FAILED", path: "audit.to" });
    expect((error as Error).message).toContain(`cannot open the audit file ${missing}: ENOENT`);
    const notFile = await RotatingFile.open(dir, { maxSize: 1024, keep: 1 }).catch((e: Error) => e);
    expect((notFile as Error).message).toBe(`cannot open the audit file ${dir}: it is not a regular file`);
  });

  it("holds a call while its backlog is full, and lets it go once the lines are written", async () => {
    const file = await RotatingFile.open(join(dir, "backlog.log"), {
      maxSize: 1 << 20,
      keep: 1,
      backlogBytes: 1,
    });
    file.write(line(1));
    const wait = file.room(new AbortController().signal);
    expect(wait).toBeInstanceOf(Promise);
    await wait;
    expect(file.room(new AbortController().signal)).toBeUndefined();
    await file.close();
  });
});

describe("StreamSink", () => {
  it("writes one line per write, refuses a call when nothing drains within waitMs, and lets calls go when it does", async () => {
    // A pipe nobody reads: its buffer is the backlog.
    const stream = new PassThrough({ highWaterMark: 64 });
    const events: AuditSinkEvent[] = [];
    const sink = new StreamSink(stream, "a pipe", {
      backlogBytes: 150,
      waitMs: 50,
      onEvent: (e) => events.push(e),
    });
    expect(sink.room(new AbortController().signal)).toBeUndefined();
    sink.write(line(1));
    sink.write(line(2));
    const refused = await sink.room(new AbortController().signal)?.catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "AUDIT_BEHIND", retryable: true });
    expect((refused as Error).message).toContain("the call was not run");
    expect(events).toEqual([{ type: "audit-calls-refused", to: "a pipe", count: 1 }]);
    const held = sink.room(new AbortController().signal);
    expect(held).toBeInstanceOf(Promise);
    const read: string[] = [];
    stream.on("data", (chunk: Buffer) => read.push(chunk.toString()));
    await held;
    expect(read.join("")).toBe(line(1) + line(2));
    await sink.close();
  });

  it("refuses every call at once after its stream failed", async () => {
    const stream = new PassThrough();
    const events: AuditSinkEvent[] = [];
    const sink = new StreamSink(stream, "stderr", { onEvent: (e) => events.push(e) });
    stream.destroy(new Error("EPIPE: broken pipe"));
    await new Promise((resolve) => stream.once("close", resolve));
    await expect(sink.room(new AbortController().signal)).rejects.toMatchObject({ code: "AUDIT_BEHIND" });
    expect(events[0]).toMatchObject({
      type: "audit-write-failed",
      to: "stderr",
      error: "EPIPE: broken pipe",
    });
    await sink.close();
  });

  it("is what to: stderr opens", async () => {
    const stderr = new PassThrough();
    const sink = await openAuditSink({ to: "stderr", maxSize: 1024, keep: 1, content: false }, { stderr });
    sink.write("one line\n");
    await sink.close();
    expect(stderr.read()?.toString()).toBe("one line\n");
  });
});
