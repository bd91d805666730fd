import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";
import { rng } from "../support/rng.js";

// A caller probes task handles: other callers' handles as they are, and handles altered every
// way a byte can be (one character changed, cut, lengthened, payloads and MACs swapped between
// handles, another server or replica written into the payload, the server's own ids, noise).
// Every probe must be the same "Task not found" (-32602) as a task that never existed, none
// may reach the server, and the tasks probed must go on untouched.

const TOKENS = { alice: "alice-token-0123456789", bob: "bob-token-0123456789" };
const WITH_TASKS = { extensions: { [TASKS_EXTENSION]: {} } };
const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

let gw: InProcessGateway;
let dir: string;
let log: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcplex-handles-hostile-"));
  log = join(dir, "jobs.log");
  writeFileSync(log, "");
  gw = await startGateway(
    configOf(
      [
        stdio("jobs", COMMANDS.tasks.command, COMMANDS.tasks.args, { env: { TASKS_SERVER_LOG: log } }),
        stdio("other", COMMANDS.tasks.command, COMMANDS.tasks.args),
      ],
      { tokens: [{ token: TOKENS.alice }, { token: TOKENS.bob }] },
    ),
  );
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  rmSync(dir, { recursive: true, force: true });
});

let ids = 0;

async function rpc(
  token: string,
  method: string,
  params: Record<string, unknown>,
): Promise<{ result?: Record<string, unknown>; error?: { code: number; message: string } }> {
  const message = rev2026Request(++ids, method, params, WITH_TASKS);
  const headers: Record<string, string> = { ...rev2026Headers(message), authorization: `Bearer ${token}` };
  if (typeof params.taskId === "string") headers["mcp-name"] = params.taskId;
  return (await postRev2026(gw.url, message, headers)).json as {
    result?: Record<string, unknown>;
    error?: { code: number; message: string };
  };
}

/** Task requests the server has seen so far. */
const serverSaw = () =>
  readFileSync(log, "utf8")
    .split("\n")
    .filter((line) => line.startsWith("tasks/")).length;

/** Probes made from `handles`, as the random source `next` picks them. */
function probes(handles: string[], count: number, next: () => number): string[] {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const parts = handles.map((h) => h.split(".") as [string, string, string]);
  const made: string[] = [];
  for (let i = 0; i < count; i++) {
    const [prefix, payload, mac] = pick(parts);
    const whole = `${prefix}.${payload}.${mac}`;
    const named = JSON.parse(Buffer.from(payload, "base64url").toString()) as string[];
    switch (i % 8) {
      case 0: {
        // One character changed anywhere after the prefix.
        const at = prefix.length + 1 + Math.floor(next() * (whole.length - prefix.length - 1));
        const swapped = pick([...BASE64URL].filter((c) => c !== whole[at]));
        made.push(`${whole.slice(0, at)}${swapped}${whole.slice(at + 1)}`);
        break;
      }
      case 1:
        made.push(whole.slice(0, Math.floor(next() * whole.length))); // cut
        break;
      case 2:
        made.push(`${whole}${pick([...BASE64URL])}`); // lengthened
        break;
      case 3:
        made.push(`${prefix}.${payload}.${pick(parts.filter((p) => p[2] !== mac))[2]}`); // another handle's MAC
        break;
      case 4: {
        const server = pick(["other", "nope"]);
        const moved = Buffer.from(JSON.stringify([server, named[1], ...named.slice(2)])).toString(
          "base64url",
        );
        made.push(`${prefix}.${moved}.${mac}`); // another server under the same MAC
        break;
      }
      case 5:
        made.push(named[1]!); // the server's own id
        break;
      case 6: {
        const replica = Buffer.from(JSON.stringify([...named.slice(0, 2), "r9"])).toString("base64url");
        made.push(`${prefix}.${replica}.${mac}`); // a replica named
        break;
      }
      default:
        made.push(`${prefix}.${Buffer.from(String(next())).toString("base64url")}.${"A".repeat(22)}`);
    }
  }
  return made;
}

describe("task handles under attack", () => {
  it(
    "every altered handle, and every other caller's, is an unknown task that reaches no server",
    async () => {
      const handles: string[] = [];
      for (let i = 0; i < 3; i++) {
        const created = await rpc(TOKENS.alice, "tools/call", {
          name: "jobs__slow_compute",
          arguments: { seconds: 600, label: `target ${i}` },
        });
        handles.push(created.result?.taskId as string);
      }
      const before = serverSaw();
      const count = attackSize(160, 8000);
      const attempts: Array<[token: string, method: string, taskId: string]> = [];
      for (const handle of handles)
        for (const method of ["tasks/get", "tasks/update", "tasks/cancel"])
          attempts.push([TOKENS.bob, method, handle]);
      const next = rng(25);
      for (const probe of probes(handles, count, next))
        attempts.push([
          pick2(next, TOKENS.alice, TOKENS.bob),
          pick2(next, "tasks/get", "tasks/cancel"),
          probe,
        ]);

      const started = Date.now();
      const answers: Array<{ taskId: string; code?: number; message?: string }> = [];
      for (let i = 0; i < attempts.length; i += 16) {
        answers.push(
          ...(await Promise.all(
            attempts.slice(i, i + 16).map(async ([token, method, taskId]) => {
              const params = method === "tasks/update" ? { taskId, inputResponses: {} } : { taskId };
              const answer = await rpc(token, method, params);
              return { taskId, code: answer.error?.code, message: answer.error?.message };
            }),
          )),
        );
      }
      const seconds = (Date.now() - started) / 1000;

      const wrong = answers.filter(
        (a) => a.code !== -32602 || a.message !== `Failed to retrieve task: Task not found (${a.taskId})`,
      );
      expect(wrong.slice(0, 5)).toEqual([]);
      expect(serverSaw()).toBe(before);
      for (const handle of handles) {
        expect((await rpc(TOKENS.alice, "tasks/get", { taskId: handle })).result?.status).toBe("working");
        await rpc(TOKENS.alice, "tasks/cancel", { taskId: handle });
      }
      reportFigure(
        "task handles",
        `${answers.length} probes in ${seconds.toFixed(1)} s (${Math.round(answers.length / seconds)}/s), all unknown, none reached the server`,
      );
    },
    attackTimeout(60_000, 600_000),
  );
});

function pick2<T>(next: () => number, a: T, b: T): T {
  return next() < 0.5 ? a : b;
}
