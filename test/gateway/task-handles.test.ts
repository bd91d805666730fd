import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TaskHandles } from "../../src/ext/tasks/task-handles.js";
import { TASKS_EXTENSION } from "../../src/protocol/tasks.js";
import { configOf, stdio } from "../support/config.js";
import {
  COMMANDS,
  type InProcessGateway,
  postRev2026,
  rev2026Headers,
  rev2026Request,
  startGateway,
} from "../support/gateway.js";

// Task handles through a gateway in front of the tasks fixture: a handle is the only way to a
// task, and only for the caller it was issued to. Anything else is an unknown task (-32602),
// never another caller's task, whatever part of the handle was changed.

const TOKENS = { alice: "alice-token-0123456789", bob: "bob-token-0123456789", ops: "ops-token-0123456789" };
const WITH_TASKS = { extensions: { [TASKS_EXTENSION]: {} } };

let gw: InProcessGateway;

beforeAll(async () => {
  gw = await startGateway(
    configOf([stdio("jobs", COMMANDS.tasks.command, COMMANDS.tasks.args)], {
      profiles: { ops: { tools: {} } },
      tokens: [{ token: TOKENS.alice }, { token: TOKENS.bob }, { token: TOKENS.ops, profile: "ops" }],
    }),
  );
}, 60_000);

afterAll(() => gw?.stop());

let ids = 0;

/** A 2026 request of `token`'s caller; its Mcp-Name mirrors `taskId` unless `mcpName` says otherwise. */
async function rpc(
  token: string,
  method: string,
  params: Record<string, unknown>,
  options: { capabilities?: Record<string, unknown>; mcpName?: string } = {},
): Promise<{ result?: Record<string, unknown>; error?: { code: number; message: string } }> {
  const message = rev2026Request(++ids, method, params, options.capabilities ?? WITH_TASKS);
  const headers: Record<string, string> = { ...rev2026Headers(message), authorization: `Bearer ${token}` };
  const name = options.mcpName ?? params.taskId;
  if (typeof name === "string") headers["mcp-name"] = name;
  const res = await postRev2026(gw.url, message, headers);
  return res.json as { result?: Record<string, unknown>; error?: { code: number; message: string } };
}

/** A task of `token`'s caller that runs for a minute: its handle. */
async function longTask(token: string): Promise<string> {
  const created = await rpc(token, "tools/call", {
    name: "jobs__slow_compute",
    arguments: { seconds: 60, label: "handles" },
  });
  expect(created.result?.resultType).toBe("task");
  return created.result!.taskId as string;
}

describe("task handles", () => {
  it("name the task to its caller, and only a handle reaches it", async () => {
    const handle = await longTask(TOKENS.alice);
    expect(handle).toMatch(/^mcplex-task\./);
    const got = await rpc(TOKENS.alice, "tasks/get", { taskId: handle });
    expect(got.result).toMatchObject({ taskId: handle, status: "working", resultType: "complete" });
    // The server's own id (readable in the handle) is not a task id of the gateway.
    const payload = handle.split(".")[1]!;
    const [, upstreamId] = JSON.parse(Buffer.from(payload, "base64url").toString()) as [string, string];
    expect((await rpc(TOKENS.alice, "tasks/get", { taskId: upstreamId })).error?.code).toBe(-32602);
    expect((await rpc(TOKENS.alice, "tasks/cancel", { taskId: handle })).result).toEqual(
      expect.objectContaining({ resultType: "complete" }),
    );
  });

  it("refuse another caller as an unknown task, and leave the task alone", async () => {
    const handle = await longTask(TOKENS.alice);
    for (const [token, who] of [
      [TOKENS.bob, "another token"],
      [TOKENS.ops, "another profile"],
    ] as const) {
      for (const method of ["tasks/get", "tasks/cancel", "tasks/update"]) {
        const params =
          method === "tasks/update" ? { taskId: handle, inputResponses: {} } : { taskId: handle };
        const answer = await rpc(token, method, params);
        expect(answer.error?.code, `${method} by ${who}`).toBe(-32602);
        expect(answer.error?.message).toMatch(/Task not found/);
      }
    }
    // Bob's cancel reached nothing: Alice's task still runs.
    expect((await rpc(TOKENS.alice, "tasks/get", { taskId: handle })).result?.status).toBe("working");
    await rpc(TOKENS.alice, "tasks/cancel", { taskId: handle });
  });

  it("refuse a forged or foreign handle as an unknown task", async () => {
    const handle = await longTask(TOKENS.alice);
    const [prefix, payload, mac] = handle.split(".") as [string, string, string];
    const named = JSON.parse(Buffer.from(payload, "base64url").toString()) as string[];
    const otherPayload = Buffer.from(JSON.stringify(["jobs", `${named[1]}x`])).toString("base64url");
    const flipped = `${mac.slice(0, -2)}${mac.endsWith("AA") ? "BB" : "AA"}`;
    const forged = [
      `${prefix}.${payload}.${flipped}`, // MAC altered
      `${prefix}.${otherPayload}.${mac}`, // another task id under the same MAC
      `${prefix}.${payload}`, // MAC left out
      new TaskHandles().mint(named[0]!, named[1]!, `token#0|`), // minted with another gateway's key
      "mcplex-task.", // nothing
    ];
    for (const taskId of forged) {
      const answer = await rpc(TOKENS.alice, "tasks/get", { taskId });
      expect(answer.error?.code, taskId).toBe(-32602);
    }
    await rpc(TOKENS.alice, "tasks/cancel", { taskId: handle });
  });

  it("answer a request without the extension -32021, before looking at the handle", async () => {
    const handle = await longTask(TOKENS.alice);
    for (const taskId of [handle, "not-a-handle"]) {
      const answer = await rpc(TOKENS.alice, "tasks/get", { taskId }, { capabilities: {} });
      expect(answer.error?.code).toBe(-32021);
    }
    await rpc(TOKENS.alice, "tasks/cancel", { taskId: handle });
  });

  it("refuse a task request whose Mcp-Name disagrees with its body (-32020)", async () => {
    const handle = await longTask(TOKENS.alice);
    for (const method of ["tasks/get", "tasks/cancel", "tasks/update"]) {
      const answer = await rpc(
        TOKENS.alice,
        method,
        { taskId: handle, inputResponses: {} },
        { mcpName: "other" },
      );
      expect(answer.error?.code, method).toBe(-32020);
    }
    expect((await rpc(TOKENS.alice, "tasks/get", { taskId: handle })).result?.status).toBe("working");
    await rpc(TOKENS.alice, "tasks/cancel", { taskId: handle });
  });

  it("declare the extension in server/discover while a server may create tasks", async () => {
    const discovered = await rpc(TOKENS.alice, "server/discover", {});
    expect(discovered.result?.capabilities).toMatchObject({ extensions: { [TASKS_EXTENSION]: {} } });
  });
});
