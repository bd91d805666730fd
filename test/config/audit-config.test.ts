// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config texts under test hold ${...} references
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkConfig, parseConfig } from "../../src/config/index.js";
import { runCli } from "../support/cli.js";
import { issuesOf } from "../support/config-errors.js";

// The `audit:` block: `to` required (stderr or a file relative to the config file), maxSize as a
// byte size (default 10 MiB), keep (default 5), content (default false); every mistake named at
// its key with the fix.

const read = (text: string) =>
  parseConfig(`servers: {}\n${text}`, { source: "/etc/mcplex/mcplex.yaml", env: { LOGS: "/var/log" } }).audit;
const issues = (text: string) => issuesOf(`servers: {}\n${text}`);

describe("the audit: block", () => {
  it("reads a file relative to the config file, with the defaults", () => {
    expect(read("audit:\n  to: ./audit.log\n")).toEqual({
      to: "/etc/mcplex/audit.log",
      maxSize: 10 * 1024 * 1024,
      keep: 5,
      content: false,
    });
    expect(read("audit:\n  to: ${LOGS}/mcplex.log\n  maxSize: 64KiB\n  keep: 0\n  content: true\n")).toEqual({
      to: "/var/log/mcplex.log",
      maxSize: 65_536,
      keep: 0,
      content: true,
    });
  });

  it("reads maxLine and keepFor only when given (their defaults apply where the trail is written)", () => {
    expect(read("audit:\n  to: ./audit.log\n  maxLine: 32KiB\n  keepFor: 2h\n")).toMatchObject({
      maxLine: 32_768,
      keepFor: 7_200_000,
    });
    const bad = Object.fromEntries(
      issues("audit:\n  to: a.log\n  maxLine: 1KiB\n  keepFor: soon\n").map((i) => [i.path, i.message]),
    );
    expect(bad["audit.maxLine"]).toBe('must be at least 16384 bytes, such as "64KiB"');
    expect(bad["audit.keepFor"]).toContain('"soon" is not a duration');
  });

  it("reads to: stderr as the process's stderr, and ./stderr as a file", () => {
    expect(read("audit:\n  to: stderr\n")?.to).toBe("stderr");
    expect(read("audit:\n  to: ./stderr\n")?.to).toBe("/etc/mcplex/stderr");
    expect(read("")).toBeUndefined();
  });

  it("names each mistake at its key, with the fix", () => {
    expect(issues("audit:\n  maxSize: 1MiB\n")).toEqual([
      {
        code: "CONFIG_INVALID",
        path: "audit.to",
        message:
          'is required: where the audit lines go, "stderr" or a file such as ./audit.log (relative to this file)',
      },
    ]);
    const bad = issues(
      'audit:\n  to: ""\n  maxSize: lots\n  keep: -1\n  content: yes please\n  rotate: true\n',
    );
    const byPath = Object.fromEntries(bad.map((issue) => [issue.path, issue.message]));
    expect(byPath["audit.to"]).toBe("must not be empty");
    expect(byPath["audit.maxSize"]).toContain(
      '"lots" is not a size; use bytes (67108864) or a string like "64MiB"',
    );
    expect(byPath["audit.keep"]).toContain("must be a whole number of at least 0, not -1");
    expect(byPath["audit.content"]).toContain("must be true or false");
    expect(byPath["audit.rotate"]).toContain('unknown key "rotate"; valid keys: to, maxSize, keep, content');
    expect(issues("audit:\n  to: a.log\n  maxSize: 100\n")).toEqual([
      {
        code: "CONFIG_INVALID",
        path: "audit.maxSize",
        message: 'must be at least 1024 bytes, such as "10MiB"',
      },
    ]);
    expect(issues("audit: ./audit.log\n")[0]).toMatchObject({
      path: "audit",
      message: expect.stringContaining("must be a map"),
    });
  });
});

describe("config check of an audit: block", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mcplex-audit-config-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("shows where the trail goes, and warns when its directory does not exist", async () => {
    await writeFile(join(dir, "mcplex.yaml"), "servers: {}\naudit:\n  to: ./logs/audit.log\n  keep: 2\n");
    const result = await checkConfig({ cwd: dir, env: {} });
    expect(result.ok && result.summary.audit).toEqual({
      to: join(dir, "logs/audit.log"),
      maxSize: 10 * 1024 * 1024,
      keep: 2,
      content: false,
    });
    expect(result.ok && result.summary.warnings).toEqual([
      {
        path: "audit.to",
        message: `directory ${join(dir, "logs")} does not exist, so the audit file cannot be created`,
      },
    ]);
    const cli = await runCli(["config", "check", "--config", join(dir, "mcplex.yaml")]);
    expect(cli.stdout).toContain(`audit: ${join(dir, "logs/audit.log")}, rotated at 10485760 bytes, 2 kept`);
  });

  it("refuses a bad block with the key and the fix, exit code 2", async () => {
    await writeFile(join(dir, "bad.yaml"), "servers: {}\naudit:\n  content: true\n");
    const cli = await runCli(["config", "check", "--config", join(dir, "bad.yaml")]);
    expect(cli.code).toBe(2);
    expect(cli.stderr).toContain("audit.to");
    expect(cli.stderr).toContain('"stderr" or a file such as ./audit.log');
  });
});
