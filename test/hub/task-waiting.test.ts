import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAgent } from "../../src/agent/run-agent.js";
import { AbortedError, McplexError, RpcError } from "../../src/errors.js";
import { Hub } from "../../src/hub/hub.js";
import { CLI, runCli } from "../support/cli.js";
import { configOf, stdio } from "../support/config.js";
import { COMMANDS, eventually, resultText } from "../support/gateway.js";
import { collect, ofType, startMockLlm, toolMessages } from "../support/mock-llm.js";

// The library's own callers (hub.callTool, and through it `mcplex call`, runAgent and `mcplex
// chat`) see a tool whose 2026 server answers with a task as one call: the hub declares the
// tasks extension, polls as the task says, answers its questions with the call's handler,
// and cancels it at the server when the call is aborted.

let dir: string;
let log: string;
let hub: Hub;
/** What the hub's handler was asked, and answers with. */
const asked: string[] = [];

const jobs = () =>
  stdio("jobs", COMMANDS.tasks.command, [...COMMANDS.tasks.args, "--poll-ms", "20", "--tasks-only"], {
    env: { TASKS_SERVER_LOG: log },
  });

/** Lines of the server's request log for `method`. */
const logged = (method: string) =>
  readFileSync(log, "utf8")
    .split("\n")
    .filter((line) => line.startsWith(`${method} `));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcplex-hub-tasks-"));
  log = join(dir, "jobs.log");
  writeFileSync(log, "");
  hub = new Hub({
    config: configOf([jobs()]),
    onServerRequest: async (request) => {
      asked.push(String(request.params.message));
      return { action: "accept", content: { confirm: true, name: `answer${asked.length}` } };
    },
  });
  await hub.start();
}, 60_000);

afterAll(async () => {
  await hub?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("hub.callTool on a tool whose server answers with a task", () => {
  it("resolves with the task's result, with progress while it runs", async () => {
    const progress: Array<{ progress: number; message?: string }> = [];
    const result = await hub.callTool(
      "jobs__slow_compute",
      { seconds: 0.2, label: "library" },
      { onProgress: (p) => progress.push(p) },
    );
    expect(resultText(result)).toBe("computed library in 0.2s");
    expect(progress.length).toBeGreaterThan(0);
    expect(logged("tasks/get").length).toBeGreaterThan(0);
  });

  it("answers the task's questions with the hub's handler, each once", async () => {
    asked.length = 0;
    const one = await hub.callTool("jobs__confirm_delete", { filename: "b.txt" });
    expect(resultText(one)).toBe("deleted b.txt");
    const two = await hub.callTool("jobs__multi_input", {});
    expect(asked.slice(1).sort()).toEqual(["First question?", "Second question?"]);
    expect(resultText(two)).toMatch(/^answers: answer\d, answer\d$/);
  });

  it("gives a tool error as a result and a failed task as its JSON-RPC error", async () => {
    const failing = await hub.callTool("jobs__failing_job", {});
    expect(failing.isError).toBe(true);
    const failed = hub.callTool("jobs__protocol_error_job", {});
    await expect(failed).rejects.toBeInstanceOf(RpcError);
    await expect(failed).rejects.toMatchObject({ code: -32603, server: "jobs" });
  });

  it("cancels the task at its server when the call is aborted", async () => {
    const controller = new AbortController();
    const gets = logged("tasks/get").length;
    const call = hub.callTool(
      "jobs__slow_compute",
      { seconds: 60, label: "aborted" },
      { signal: controller.signal },
    );
    await eventually(async () => (logged("tasks/get").length > gets ? true : undefined));
    const cancels = logged("tasks/cancel").length;
    controller.abort();
    await expect(call).rejects.toBeInstanceOf(AbortedError);
    // Sent before the call rejected.
    expect(logged("tasks/cancel").length).toBe(cancels + 1);
  });

  it("declares the extension to a server stopped when idle, on the call that starts it again", async () => {
    const resting = new Hub({ config: configOf([{ ...jobs(), idleTimeout: 100 }]) });
    await resting.start();
    try {
      expect(resultText(await resting.callTool("jobs__slow_compute", { seconds: 0, label: "first" }))).toBe(
        "computed first in 0s",
      );
      await eventually(async () => (resting.servers()[0]?.state === "idle" ? true : undefined), {
        what: "the server stopped when idle",
      });
      const again = await resting.callTool("jobs__slow_compute", { seconds: 0, label: "again" });
      expect(resultText(again)).toBe("computed again in 0s");
    } finally {
      await resting.close();
    }
  });

  it("fails a task that asks for input when nobody can answer, and cancels it", async () => {
    const alone = new Hub({ config: configOf([jobs()]) });
    await alone.start();
    try {
      const cancels = logged("tasks/cancel").length;
      const call = alone.callTool("jobs__confirm_delete", { filename: "c.txt" });
      await expect(call).rejects.toBeInstanceOf(McplexError);
      await expect(call).rejects.toThrow(/needs input \(elicitation\/create\) but no handler/);
      await eventually(async () => (logged("tasks/cancel").length > cancels ? true : undefined));
    } finally {
      await alone.close();
    }
  });
});

describe("runAgent on a tool whose server answers with a task", () => {
  it("hands the model the task's result as the tool's result", async () => {
    const llm = await startMockLlm({
      turns: [
        { toolCalls: [{ name: "jobs__slow_compute", arguments: { seconds: 0.2, label: "for the model" } }] },
        (request) => ({ text: `The tool said: ${toolMessages(request.body)[0]?.content ?? "nothing"}` }),
      ],
    });
    try {
      const events = await collect(
        runAgent({ hub, llm: llm.llm, messages: [{ role: "user", content: "compute" }] }),
      );
      const results = ofType(events, "tool-result");
      expect(results).toHaveLength(1);
      expect(JSON.stringify(results[0])).toContain("computed for the model in 0.2s");
      expect(ofType(events, "done")[0]?.outcome).toBe("stop");
      expect(
        ofType(events, "text-delta")
          .map((e) => e.text)
          .join(""),
      ).toContain("computed for the model");
    } finally {
      await llm.close();
    }
  });
});

describe("mcplex call on a tool whose server answers with a task", () => {
  let config: string;
  beforeAll(() => {
    config = join(dir, "mcplex.yaml");
    writeFileSync(
      config,
      [
        "servers:",
        "  jobs:",
        `    command: ${JSON.stringify(COMMANDS.tasks.command)}`,
        `    args: ${JSON.stringify([...COMMANDS.tasks.args, "--poll-ms", "20", "--tasks-only"])}`,
        `    env: { TASKS_SERVER_LOG: ${JSON.stringify(log)} }`,
        "",
      ].join("\n"),
    );
  });

  it("prints the task's result", async () => {
    const { code, stdout } = await runCli([
      "call",
      "jobs__slow_compute",
      '{"seconds":0.2,"label":"from the CLI"}',
      "--config",
      config,
    ]);
    expect(code).toBe(0);
    expect(stdout).toContain("computed from the CLI in 0.2s");
  });

  it("cancels the task at its server on Ctrl-C", async () => {
    const gets = logged("tasks/get").length;
    const cancels = logged("tasks/cancel").length;
    const child = spawn(
      process.execPath,
      [CLI, "call", "jobs__slow_compute", '{"seconds":60,"label":"interrupted"}', "--config", config],
      { stdio: "ignore" },
    );
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    try {
      await eventually(async () => (logged("tasks/get").length > gets ? true : undefined), {
        what: "the CLI polling the task",
      });
      child.kill("SIGINT");
      await exited;
      expect(logged("tasks/cancel").length).toBe(cancels + 1);
    } finally {
      child.kill("SIGKILL");
    }
  });
});
