import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
import { type PostedStream, postStream } from "../support/sse-stream.js";

// notifications/tasks through the gateway: a 2026 client's subscriptions/listen names tasks by
// their handles; the gateway asks the server that holds them on a listen of its own and relays
// what the server says with the handles in place of the server's ids. Only the caller's own
// tasks are acknowledged, and a client without the extension is refused (-32021).

const TOKENS = { alice: "alice-token-0123456789", bob: "bob-token-0123456789" };
const WITH_TASKS = { extensions: { [TASKS_EXTENSION]: {} } };
const SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId";

let gw: InProcessGateway;

beforeAll(async () => {
  gw = await startGateway(
    configOf([stdio("jobs", COMMANDS.tasks.command, COMMANDS.tasks.args)], {
      tokens: [{ token: TOKENS.alice }, { token: TOKENS.bob }],
    }),
  );
}, 60_000);

afterAll(() => gw?.stop());

let ids = 0;

function headers(token: string, message: { method: string; params: Record<string, unknown> }) {
  const h: Record<string, string> = { ...rev2026Headers(message), authorization: `Bearer ${token}` };
  if (typeof message.params.taskId === "string") h["mcp-name"] = message.params.taskId;
  return h;
}

async function rpc(
  token: string,
  method: string,
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const message = rev2026Request(++ids, method, params, WITH_TASKS);
  const answer = (await postRev2026(gw.url, message, headers(token, message))).json as {
    result?: Record<string, unknown>;
    error?: unknown;
  };
  if (answer.result === undefined) throw new Error(JSON.stringify(answer));
  return answer.result;
}

async function listen(token: string, taskIds: string[], capabilities = WITH_TASKS): Promise<PostedStream> {
  const message = rev2026Request(++ids, "subscriptions/listen", { notifications: { taskIds } }, capabilities);
  return postStream(gw.url, message, headers(token, message));
}

/** Notifications of the stream until one says `handle` reached `status`. */
async function until(
  stream: PostedStream,
  handle: string,
  status: string,
): Promise<Record<string, unknown>[]> {
  const seen: Record<string, unknown>[] = [];
  for (;;) {
    const message = await stream.next();
    seen.push(message);
    const params = message.params as { taskId?: string; status?: string } | undefined;
    if (message.method === "notifications/tasks" && params?.taskId === handle && params.status === status)
      return seen;
  }
}

describe("notifications/tasks on a 2026 client's subscriptions/listen", () => {
  it("acknowledge the caller's own tasks and relay their changes with handles", async () => {
    const asking = (
      await rpc(TOKENS.alice, "tools/call", {
        name: "jobs__confirm_delete",
        arguments: { filename: "n.txt" },
      })
    ).taskId as string;
    const running = (
      await rpc(TOKENS.alice, "tools/call", { name: "jobs__slow_compute", arguments: { seconds: 60 } })
    ).taskId as string;
    const bobs = (
      await rpc(TOKENS.bob, "tools/call", { name: "jobs__slow_compute", arguments: { seconds: 60 } })
    ).taskId as string;
    const stream = await listen(TOKENS.alice, [asking, running, bobs, "mcplex-task.forged.AAAA"]);
    try {
      expect(stream.status).toBe(200);
      const ack = await stream.next();
      expect(ack.method).toBe("notifications/subscriptions/acknowledged");
      const listenId = ids;
      expect(ack.params).toEqual({
        _meta: { [SUBSCRIPTION]: listenId },
        notifications: { taskIds: [asking, running] },
      });

      // The task asks; its answer and a cancel are told as they happen, always by handle.
      let asked: Record<string, unknown> | undefined;
      for (;;) {
        asked = (await rpc(TOKENS.alice, "tasks/get", { taskId: asking })) as Record<string, unknown>;
        if (asked.status === "input_required") break;
      }
      const [key] = Object.keys(asked.inputRequests as object);
      await rpc(TOKENS.alice, "tasks/update", {
        taskId: asking,
        inputResponses: { [key!]: { action: "accept", content: { confirm: true } } },
      });
      const seen = await until(stream, asking, "completed");
      await rpc(TOKENS.alice, "tasks/cancel", { taskId: running });
      seen.push(...(await until(stream, running, "cancelled")));

      const told = seen
        .filter((m) => m.method === "notifications/tasks")
        .map((m) => m.params as Record<string, unknown>);
      expect(told.every((t) => t.taskId === asking || t.taskId === running)).toBe(true);
      expect(told.every((t) => (t._meta as Record<string, unknown>)[SUBSCRIPTION] === listenId)).toBe(true);
      const completed = told.find((t) => t.taskId === asking && t.status === "completed");
      expect(completed?.result).toEqual({ content: [{ type: "text", text: "deleted n.txt" }] });
      // Bob's task was not acknowledged, and nothing of it reached Alice's stream.
      await rpc(TOKENS.bob, "tasks/cancel", { taskId: bobs });
      expect(told.some((t) => t.taskId === bobs)).toBe(false);
    } finally {
      stream.close();
    }
  });

  it("refuse a listen for tasks without the extension (-32021)", async () => {
    const running = (
      await rpc(TOKENS.alice, "tools/call", { name: "jobs__slow_compute", arguments: { seconds: 60 } })
    ).taskId as string;
    const stream = await listen(TOKENS.alice, [running], {} as typeof WITH_TASKS);
    expect(stream.status).toBe(400);
    const answer = JSON.parse(await stream.body) as { error: { code: number; data: unknown } };
    expect(answer.error.code).toBe(-32021);
    expect(answer.error.data).toEqual({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
    await rpc(TOKENS.alice, "tasks/cancel", { taskId: running });
  });
});
