import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { viewEngines } from "../../src/catalog-modes/view-engines.js";
import { viewResolver } from "../../src/catalog-modes/view-resolver.js";
import { TASKS_EXTENSION } from "../../src/protocol/tasks.js";
import { configOf, stdio } from "../support/config.js";
import {
  COMMANDS,
  eventually,
  type InProcessGateway,
  postRev2026,
  resultText,
  rev2026Headers,
  rev2026Request,
  startGateway,
} from "../support/gateway.js";

// A client that does not take tasks itself still calls tools whose 2026 server answers with a
// task: a 2025 client gets an ordinary call that waits (with progress while it runs, the task's
// questions asked on its session), and the calls of a code-mode script wait too, whatever the
// client that runs the script declared.

const TOKENS = { plain: "plain-token-0123456789", coder: "coder-token-0123456789" };
let gw: InProcessGateway;
let dir: string;
let log: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcplex-task-wait-"));
  log = join(dir, "jobs.log");
  const config = configOf(
    [
      stdio("jobs", COMMANDS.tasks.command, [...COMMANDS.tasks.args, "--poll-ms", "20", "--tasks-only"], {
        env: { TASKS_SERVER_LOG: log },
      }),
    ],
    { tokens: [{ token: TOKENS.plain }, { token: TOKENS.coder, mode: "code" }] },
  );
  gw = await startGateway(config, {}, { views: viewResolver({ profiles: {} }, viewEngines()) });
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** An SDK v2 client speaking 2025-11-25 that answers elicitations with `answer`. */
async function rev2025Client(
  answer: Record<string, string | number | boolean> = {},
): Promise<{ client: Client; asked: string[] }> {
  const client = new Client(
    { name: "task-wait-test", version: "1.0.0" },
    { versionNegotiation: { mode: "legacy" }, capabilities: { elicitation: {} } },
  );
  const asked: string[] = [];
  client.setRequestHandler("elicitation/create", async (request) => {
    asked.push(String(request.params.message));
    return { action: "accept", content: answer };
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(gw.url), {
      requestInit: { headers: { authorization: `Bearer ${TOKENS.plain}` } },
    }),
  );
  return { client, asked };
}

describe("a 2025 client calling a tool whose server answers with a task", () => {
  it("gets the result as an ordinary call, with progress while the task runs", async () => {
    const { client } = await rev2025Client();
    try {
      const progress: Array<{ progress: number; message?: string }> = [];
      const result = await client.callTool(
        { name: "jobs__slow_compute", arguments: { seconds: 0.3, label: "for 2025" } },
        { onprogress: (p) => progress.push(p) },
      );
      expect(resultText(result)).toBe("computed for 2025 in 0.3s");
      expect(result).not.toHaveProperty("taskId");
      expect(progress.length).toBeGreaterThan(0);
      expect(progress.map((p) => p.progress)).toEqual([...progress.keys()].map((i) => i + 1));
      expect(progress[0]?.message).toMatch(/working/);
      // The server was polled: the call was a task at the server, not a call that blocked.
      expect(readFileSync(log, "utf8")).toMatch(/^tasks\/get /m);
    } finally {
      await client.close();
    }
  });

  it("gets the task's questions on its session, and the answer goes back to the task", async () => {
    const { client, asked } = await rev2025Client({ confirm: true });
    try {
      const result = await client.callTool({
        name: "jobs__confirm_delete",
        arguments: { filename: "a.txt" },
      });
      expect(asked).toEqual(["Delete a.txt?"]);
      expect(resultText(result)).toBe("deleted a.txt");
    } finally {
      await client.close();
    }
  });

  it("gets what the call would have given: a tool error, or the task's JSON-RPC error", async () => {
    const { client } = await rev2025Client();
    try {
      // A tool whose task is required still runs: the gateway declared the extension for the client.
      const failing = await client.callTool({ name: "jobs__failing_job", arguments: {} });
      expect(failing.isError).toBe(true);
      expect(resultText(failing)).toBe("failing_job: the job failed");
      await expect(
        client.callTool({ name: "jobs__protocol_error_job", arguments: {} }),
      ).rejects.toMatchObject({
        code: -32603,
        message: expect.stringMatching(/internal failure/),
      });
    } finally {
      await client.close();
    }
  });

  it("fails the call and cancels the task when the client cannot answer the task's question", async () => {
    // No elicitation capability declared: the session cannot be asked.
    const client = new Client(
      { name: "no-elicitation", version: "1.0.0" },
      { versionNegotiation: { mode: "legacy" } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(gw.url), {
        requestInit: { headers: { authorization: `Bearer ${TOKENS.plain}` } },
      }),
    );
    try {
      const cancels = readFileSync(log, "utf8")
        .split("\n")
        .filter((l) => l.startsWith("tasks/cancel ")).length;
      await expect(
        client.callTool({ name: "jobs__confirm_delete", arguments: { filename: "kept.txt" } }),
      ).rejects.toThrow(/did not declare the elicitation capability/);
      const after = readFileSync(log, "utf8")
        .split("\n")
        .filter((l) => l.startsWith("tasks/cancel ")).length;
      expect(after).toBe(cancels + 1);
    } finally {
      await client.close();
    }
  });

  it("cancels the task at the server when the client cancels the call", async () => {
    const { client } = await rev2025Client();
    try {
      const controller = new AbortController();
      const call = client.callTool(
        { name: "jobs__slow_compute", arguments: { seconds: 60, label: "cancelled by 2025" } },
        { signal: controller.signal },
      );
      const before = readFileSync(log, "utf8").split("\n").length;
      // Waits for the gateway's first poll of this task: the task exists at the server.
      await eventually(async () =>
        readFileSync(log, "utf8").split("\n").length > before + 1 ? true : undefined,
      );
      controller.abort();
      await expect(call).rejects.toThrow();
      await eventually(async () => (/^tasks\/cancel /m.test(readFileSync(log, "utf8")) ? true : undefined), {
        what: "tasks/cancel at the server",
      });
    } finally {
      await client.close();
    }
  });
});

describe("a code-mode script calling a tool whose server answers with a task", () => {
  it("waits for the result, though its 2026 client takes tasks itself", async () => {
    const message = rev2026Request(
      1,
      "tools/call",
      {
        name: "run_code",
        arguments: { code: 'return await tools.jobs.slow_compute({ seconds: 0.2, label: "in a script" })' },
      },
      { extensions: { [TASKS_EXTENSION]: {} } },
    );
    const res = await postRev2026(gw.url, message, {
      ...rev2026Headers(message),
      authorization: `Bearer ${TOKENS.coder}`,
    });
    const result = (res.json as { result: { resultType: string; content: Array<{ text: string }> } }).result;
    expect(result.resultType).toBe("complete");
    expect(result.content[0]?.text).toContain("computed in a script in 0.2s");
  });
});
