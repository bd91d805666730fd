import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as HttpTransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configOf, EVERYTHING, stdio } from "../support/config.js";
import { type InProcessGateway, startGateway } from "../support/gateway.js";

// The experimental tasks of 2025-11-25 through the gateway, between two independent peers: the
// npm server-everything (SDK v1, whose simulate-research-query must run as a task) and the
// SDK v1 client's experimental task API. Task ids are handles both ways, the server's questions
// reach the client on tasks/result, and tasks/list shows each caller its own tasks only.

const TOKENS = { alice: "alice-token-0123456789", bob: "bob-token-0123456789" };
const TOOL = "everything__simulate-research-query";
let gw: InProcessGateway;

beforeAll(async () => {
  gw = await startGateway(
    configOf([stdio("everything", EVERYTHING, ["stdio"])], {
      tokens: [{ token: TOKENS.alice }, { token: TOKENS.bob }],
    }),
  );
}, 60_000);

afterAll(() => gw?.stop());

/** An SDK v1 client (2025-11-25) of `token`, answering elicitations with `interpretation`. */
async function connect(
  token: string,
  interpretation?: string,
): Promise<{ client: ClientV1; asked: string[]; related: unknown[] }> {
  const client = new ClientV1(
    { name: "rev2025-tasks", version: "1.0.0" },
    { capabilities: { elicitation: {} } },
  );
  const asked: string[] = [];
  const related: unknown[] = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message);
    related.push(request.params._meta?.["io.modelcontextprotocol/related-task"]);
    return { action: "accept", content: { interpretation: interpretation ?? "" } };
  });
  await client.connect(
    new HttpTransportV1(new URL(gw.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  return { client, asked, related };
}

/** Runs the research tool as a task; the stream's messages by type. */
async function research(client: ClientV1, args: Record<string, unknown>) {
  const messages: Array<{ type: string; [key: string]: unknown }> = [];
  for await (const message of client.experimental.tasks.callToolStream(
    { name: TOOL, arguments: args },
    undefined,
    {
      // Kept long enough for a loaded CI machine: an expired task would answer with an error.
      task: { ttl: 300_000 },
    },
  ))
    messages.push(message as { type: string });
  return messages;
}

describe("2025-11-25 experimental tasks through the gateway", () => {
  it("declares the tasks capability to a 2025-11-25 client, and lists the tool as a task", async () => {
    const { client } = await connect(TOKENS.alice);
    try {
      expect(client.getServerCapabilities()?.tasks).toEqual({
        list: {},
        cancel: {},
        requests: { tools: { call: {} } },
      });
      const tool = (await client.listTools()).tools.find((t) => t.name === TOOL);
      expect(tool?.execution?.taskSupport).toBe("required");
    } finally {
      await client.close();
    }
  });

  it("runs a task to its result, with handles for its id everywhere", async () => {
    const { client } = await connect(TOKENS.alice);
    try {
      const messages = await research(client, { topic: "gateways" });
      const created = messages.find((m) => m.type === "taskCreated") as
        | { task: { taskId: string } }
        | undefined;
      const handle = created?.task.taskId;
      expect(handle).toMatch(/^mcplex-task\./);
      const statuses = messages.filter((m) => m.type === "taskStatus") as unknown as Array<{
        task: { taskId: string };
      }>;
      expect(statuses.every((m) => m.task.taskId === handle)).toBe(true);
      const result = messages.at(-1) as {
        type: string;
        result: { content: Array<{ text: string }>; _meta?: object };
      };
      expect(result.type, JSON.stringify(result).slice(0, 500)).toBe("result");
      expect(result.result.content[0]?.text).toContain("# Research Report: gateways");
      expect(result.result._meta).toMatchObject({
        "io.modelcontextprotocol/related-task": { taskId: handle },
      });
      const got = await client.experimental.tasks.getTask(handle!);
      expect(got).toMatchObject({ taskId: handle, status: "completed" });
    } finally {
      await client.close();
    }
  });

  it("asks the client the task's question on tasks/result, and the answer reaches the task", async () => {
    const { client, asked, related } = await connect(TOKENS.alice, "distributed systems");
    try {
      const messages = await research(client, { topic: "consensus", ambiguous: true });
      expect(asked).toHaveLength(1);
      expect(asked[0]).toContain('"consensus"');
      // The question names its task by the handle the client knows.
      const created = messages.find((m) => m.type === "taskCreated") as { task?: { taskId?: string } };
      const handle = created.task?.taskId;
      expect(related).toEqual([{ taskId: handle }]);
      const result = messages.at(-1) as { type: string; result: { content: Array<{ text: string }> } };
      expect(result.type, JSON.stringify(result).slice(0, 500)).toBe("result");
      expect(result.result.content[0]?.text).toContain("consensus (distributed systems)");
    } finally {
      await client.close();
    }
  });

  it("lists each caller's own tasks only, and cancels by handle", async () => {
    const alice = await connect(TOKENS.alice);
    const bob = await connect(TOKENS.bob);
    try {
      const stream = bob.client.experimental.tasks.callToolStream(
        { name: TOOL, arguments: { topic: "bob's" } },
        undefined,
        { task: { ttl: 60_000 } },
      );
      const first = (await stream.next()).value as { type: string; task: { taskId: string } };
      expect(first.type).toBe("taskCreated");
      const bobs = first.task.taskId;
      const listed = (await bob.client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);
      expect(listed).toEqual([bobs]);
      const alices = (await alice.client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);
      expect(alices.length).toBeGreaterThan(0);
      expect(alices).not.toContain(bobs);
      // Alice cannot reach Bob's task by its handle.
      await expect(alice.client.experimental.tasks.getTask(bobs)).rejects.toMatchObject({ code: -32602 });
      await expect(alice.client.experimental.tasks.cancelTask(bobs)).rejects.toMatchObject({ code: -32602 });
      const cancelled = await bob.client.experimental.tasks.cancelTask(bobs);
      expect(cancelled).toMatchObject({ taskId: bobs, status: "cancelled" });
      await stream.return(undefined);
    } finally {
      await alice.client.close();
      await bob.client.close();
    }
  });
});
