import { describe, expect, it } from "vitest";
import { convertConfig, parseConfig } from "../../src/config/index.js";
import { issuesOf as configIssuesOf } from "../support/config-errors.js";

const issuesOf = (text: string) => configIssuesOf(text, { source: "/project/mcplex.yaml" });

const read = (text: string) => parseConfig(text, { source: "/project/mcplex.yaml", env: {} }).servers[0];

describe("recording and replay in the config", () => {
  it("reads record as a directory, as true (recordings/ beside the config) or as a block", () => {
    expect(read("servers:\n  a:\n    command: x\n    record: rec\n")).toMatchObject({
      record: { dir: "/project/rec", redact: [] },
    });
    expect(read("servers:\n  a:\n    command: x\n    record: true\n")).toMatchObject({
      record: { dir: "/project/recordings", redact: [] },
    });
    expect(
      read(
        "servers:\n  a:\n    command: x\n    record:\n      dir: /tmp/r\n      redact: [password, token]\n      maxBytes: 4096\n      maxFiles: 3\n",
      ),
    ).toMatchObject({
      record: { dir: "/tmp/r", redact: ["password", "token"], maxBytes: 4096, maxFiles: 3 },
    });
    expect(read("servers:\n  a:\n    command: x\n    simulate: true\n")).toMatchObject({ simulate: true });
  });

  it("reads a replay server with its recording, mode and speed", () => {
    expect(
      read(
        "servers:\n  a:\n    transport: replay\n    recording: rec/a.jsonl\n    mode: match\n    speed: 0\n",
      ),
    ).toMatchObject({ transport: "replay", recording: ["/project/rec/a.jsonl"], mode: "match", speed: 0 });
    expect(read("servers:\n  a:\n    transport: replay\n    recording: a.jsonl\n")).toMatchObject({
      mode: "sequential",
      speed: 1,
    });
  });

  it("names each mistake with its path and what to write", () => {
    const issues = issuesOf(
      [
        "servers:",
        "  a:",
        "    transport: replay",
        "    mode: shuffle",
        "    speed: -1",
        "    command: x",
        "  b:",
        "    command: x",
        "    recording: b.jsonl",
        "    record:",
        "      redact: ['']",
        "      maxBytes: 10",
        "      rotate: yes",
      ].join("\n"),
    );
    const at = (path: string) => issues.find((i) => i.path === path)?.message;
    expect(at("servers.a")).toContain('transport "replay" needs "recording"');
    expect(at("servers.a.mode")).toContain("use one of: sequential, match");
    expect(at("servers.a.speed")).toContain("must be a number of 0 or more");
    expect(at("servers.a.command")).toContain("does not apply to replay servers");
    expect(at("servers.b.recording")).toContain('applies to "transport: replay" servers only');
    expect(at("servers.b.record.redact[0]")).toContain("an empty key hides nothing");
    expect(at("servers.b.record.maxBytes")).toContain("at least 1024");
    expect(at("servers.b.record.rotate")).toContain('unknown key "rotate"');
  });
});

describe("config convert", () => {
  it("writes replay servers and record/simulate settings so that they load the same", () => {
    const text = [
      "servers:",
      "  a:",
      "    transport: replay",
      "    recording: /rec/a.jsonl",
      "    mode: match",
      "    speed: 0",
      "  b:",
      "    command: x",
      "    simulate: true",
      "    record:",
      "      dir: /rec",
      "      redact: [password]",
      "      maxBytes: 4096",
      "",
    ].join("\n");
    const options = { source: "/project/mcplex.yaml", env: {} };
    const converted = convertConfig(text, options);
    expect(parseConfig(converted.yaml, options).servers).toEqual(parseConfig(text, options).servers);
  });
});

describe("a replay server whose recording is missing", () => {
  it("fails to start naming the file and how to make one", async () => {
    const { Hub } = await import("../../src/hub/hub.js");
    const config = parseConfig(
      "servers:\n  a:\n    transport: replay\n    recording: /nonexistent/a.jsonl\n",
      {
        source: "/project/mcplex.yaml",
        env: {},
      },
    );
    const hub = new Hub({ config });
    try {
      await hub.start();
      const [status] = hub.servers();
      expect(status).toMatchObject({ state: "failed", simulated: "recording" });
      expect(status!.error).toContain("cannot read the recording /nonexistent/a.jsonl");
      expect(status!.hint).toContain("mcplex serve --record DIR");
    } finally {
      await hub.close();
    }
  });
});
