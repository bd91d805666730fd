import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { startMockLlm } from "../support/mock-llm.js";

let dir: string;
let config: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-chat-"));
  config = join(dir, "mcplex.yaml");
  await writeFile(
    config,
    `servers:\n  fx:\n    command: ${resolve("node_modules/.bin/tsx")}\n    args: [${resolve("test/fixtures/servers/fixture-server.ts")}]\n`,
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("mcplex chat", () => {
  it("answers on stdout and reports tool activity on stderr", async () => {
    const llm = await startMockLlm({
      turns: [
        {
          toolCalls: [
            { name: "fx__echo", arguments: { message: "one" } },
            { name: "fx__pid", arguments: {} },
          ],
        },
        (request) => {
          const results = request.body.messages
            .filter((m) => m.role === "tool")
            .map((m) => String(m.content));
          return { text: `The echo said "${results[0]}".` };
        },
      ],
    });
    try {
      const { code, stdout, stderr } = await runCli(
        ["chat", "--config", config, "--base-url", llm.url, "--model", "mock", "-p", "Echo one, please."],
        { env: { MCPLEX_LLM_API_KEY: "" } },
      );
      expect(code, stderr).toBe(0);
      expect(stdout.trim()).toBe('The echo said "echo: one".');
      expect(stderr).toContain("[tool] fx__echo");
      expect(stderr).toContain("[tool] fx__pid");
      const sent = llm.requests[0]!.body;
      expect(sent.model).toBe("mock");
      expect((sent.tools ?? []).map((t) => t.function.name)).toContain("fx__echo");
    } finally {
      await llm.close();
    }
  });

  it("prints one JSON event per line with --json", async () => {
    const llm = await startMockLlm({ turns: [{ text: "Hello there." }] });
    try {
      const { code, stdout } = await runCli([
        "chat",
        "--config",
        config,
        "--base-url",
        llm.url,
        "--model",
        "m",
        "-p",
        "hi",
        "--json",
      ]);
      expect(code).toBe(0);
      const events = stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { type: string });
      expect(events.at(-1)).toMatchObject({ type: "done", outcome: "stop", text: "Hello there." });
      expect(events.some((e) => e.type === "text-delta")).toBe(true);
    } finally {
      await llm.close();
    }
  });

  it("keeps the conversation across prompts read from stdin", async () => {
    const llm = await startMockLlm({ turns: [{ text: "First answer." }, { text: "Second answer." }] });
    try {
      const { code, stdout } = await runCli(
        ["chat", "--config", config, "--base-url", llm.url, "--model", "m"],
        {
          input: "first question\nsecond question\n",
        },
      );
      expect(code).toBe(0);
      expect(stdout).toContain("First answer.");
      expect(stdout).toContain("Second answer.");
      const second = llm.requests[1]!.body.messages.map((m) => `${m.role}:${String(m.content)}`);
      expect(second).toEqual(["user:first question", "assistant:First answer.", "user:second question"]);
    } finally {
      await llm.close();
    }
  });

  it("says what is missing when no model is configured", async () => {
    const { code, stderr } = await runCli(["chat", "--config", config, "-p", "hi"], {
      env: { MCPLEX_LLM_BASE_URL: "", MCPLEX_LLM_MODEL: "" },
    });
    expect(code).toBe(2);
    expect(stderr).toMatch(/base-url|baseUrl|model/i);
  });
});

describe("mcplex chat with policies", () => {
  it("offers the model no tool a rule denies, and refuses a call a rule denies by its arguments", async () => {
    const file = join(dir, "policies.yaml");
    await writeFile(
      file,
      `servers:\n  fx:\n    command: ${resolve("node_modules/.bin/tsx")}\n    args: [${resolve("test/fixtures/servers/fixture-server.ts")}]\n` +
        `policies:\n  - name: no-pid\n    when: 'request.tool == "fx__pid"'\n    effect: deny\n` +
        `  - name: quiet\n    when: 'request.tool == "fx__echo" && request.arguments.message == "LOUD"'\n    effect: deny\n    message: no shouting\n`,
    );
    const llm = await startMockLlm({
      turns: [
        { toolCalls: [{ name: "fx__echo", arguments: { message: "LOUD" } }] },
        (request) => ({
          text: String(request.body.messages.filter((m) => m.role === "tool").at(-1)?.content),
        }),
      ],
    });
    try {
      const { code, stdout, stderr } = await runCli(
        ["chat", "--config", file, "--base-url", llm.url, "--model", "mock", "-p", "Shout."],
        { env: { MCPLEX_LLM_API_KEY: "" } },
      );
      expect(code, stderr).toBe(0);
      expect(stdout.trim()).toBe('Error: the tool "fx__echo" could not be called: no shouting');
      const offered = (llm.requests[0]!.body.tools ?? []).map((t) => t.function.name);
      expect(offered).toContain("fx__echo");
      expect(offered).not.toContain("fx__pid");
    } finally {
      await llm.close();
    }
  });
});

describe("mcplex chat, list and call with tool overrides", () => {
  let file: string;
  beforeAll(async () => {
    file = join(dir, "overrides.yaml");
    await writeFile(
      file,
      `servers:\n  fx:\n    command: ${resolve("node_modules/.bin/tsx")}\n    args: [${resolve("test/fixtures/servers/fixture-server.ts")}]\n` +
        `    overrides:\n      echo:\n        name: say\n        description: { append: "Says the house phrase." }\n` +
        `        arguments: { message: { value: "house phrase" } }\n`,
    );
  });

  it("offers the model the renamed tool without its fixed argument, and the server gets the value", async () => {
    const llm = await startMockLlm({
      turns: [
        { toolCalls: [{ name: "fx__say", arguments: {} }] },
        (request) => ({
          text: String(request.body.messages.filter((m) => m.role === "tool").at(-1)?.content),
        }),
      ],
    });
    try {
      const { code, stdout, stderr } = await runCli(
        ["chat", "--config", file, "--base-url", llm.url, "--model", "mock", "-p", "Say it."],
        { env: { MCPLEX_LLM_API_KEY: "" } },
      );
      expect(code, stderr).toBe(0);
      expect(stdout.trim()).toBe("echo: house phrase");
      const offered = llm.requests[0]!.body.tools ?? [];
      expect(offered.map((t) => t.function.name)).not.toContain("fx__echo");
      const say = offered.find((t) => t.function.name === "fx__say")!;
      expect(say.function.description).toMatch(/Says the house phrase\.$/);
      expect(JSON.stringify(say.function.parameters)).not.toContain("message");
    } finally {
      await llm.close();
    }
  });

  it("mcplex list shows the new name beside the server's own, and mcplex call sends the fixed value", async () => {
    const listed = await runCli(["list", "--config", file]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^ {2}fx__say +\(renamed from fx's echo\) Echoes its message/m);
    expect(listed.stdout).not.toMatch(/fx__echo/);
    const called = await runCli(["call", "fx__say", "{}", "--config", file]);
    expect(called.code, called.stderr).toBe(0);
    expect(called.stdout).toContain("echo: house phrase");
  });
});

describe("mcplex chat with quotas", () => {
  it("lets the model's first call in and answers the one over the quota with when to retry", async () => {
    const file = join(dir, "quotas.yaml");
    await writeFile(
      file,
      `servers:\n  fx:\n    command: ${resolve("node_modules/.bin/tsx")}\n    args: [${resolve("test/fixtures/servers/fixture-server.ts")}]\n` +
        "quotas:\n  - { name: echoes, tools: [fx__echo], calls: 1, window: 1h }\n",
    );
    const llm = await startMockLlm({
      turns: [
        { toolCalls: [{ name: "fx__echo", arguments: { message: "one" } }] },
        { toolCalls: [{ name: "fx__echo", arguments: { message: "two" } }] },
        (request) => ({
          text: request.body.messages
            .filter((m) => m.role === "tool")
            .map((m) => String(m.content))
            .join(" | "),
        }),
      ],
    });
    try {
      const { code, stdout, stderr } = await runCli(
        ["chat", "--config", file, "--base-url", llm.url, "--model", "mock", "-p", "Echo twice."],
        { env: { MCPLEX_LLM_API_KEY: "" } },
      );
      expect(code, stderr).toBe(0);
      expect(stdout.trim()).toMatch(
        /^echo: one \| Error: the tool "fx__echo" could not be called: quota "echoes" allows 1 call per 1h per caller; try again in \d+ s/,
      );
    } finally {
      await llm.close();
    }
  });
});

describe("mcplex chat and call with a composite tool", () => {
  let file: string;
  beforeAll(async () => {
    file = join(dir, "composites.yaml");
    await writeFile(
      file,
      `servers:\n  fx:\n    command: ${resolve("node_modules/.bin/tsx")}\n    args: [${resolve("test/fixtures/servers/fixture-server.ts")}]\n` +
        "composites:\n  echo_twice:\n    description: Echoes a word twice.\n" +
        "    inputSchema: { type: object, properties: { word: { type: string } }, required: [word] }\n" +
        "    script: |\n      const one = await tools.fx.echo({ message: args.word });\n" +
        "      const two = await tools.fx.echo({ message: args.word });\n      return `${one} / ${two}`;\n",
    );
  });

  it("offers the model the composite, and its call runs the script through the hub", async () => {
    const llm = await startMockLlm({
      turns: [
        { toolCalls: [{ name: "echo_twice", arguments: { word: "hey" } }] },
        (request) => ({
          text: String(request.body.messages.filter((m) => m.role === "tool").at(-1)?.content),
        }),
      ],
    });
    try {
      const { code, stdout, stderr } = await runCli(
        ["chat", "--config", file, "--base-url", llm.url, "--model", "mock", "-p", "Twice."],
        { env: { MCPLEX_LLM_API_KEY: "" } },
      );
      expect(code, stderr).toBe(0);
      expect(stdout.trim()).toBe("echo: hey / echo: hey");
      const offered = (llm.requests[0]!.body.tools ?? []).map((t) => t.function.name);
      expect(offered).toContain("echo_twice");
    } finally {
      await llm.close();
    }
  });

  it("mcplex call runs it too, and mcplex list lists it", async () => {
    const called = await runCli(["call", "echo_twice", '{"word":"yo"}', "--config", file]);
    expect(called.code, called.stderr).toBe(0);
    expect(called.stdout).toContain("echo: yo / echo: yo");
    const listed = await runCli(["list", "--config", file]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^composites: {2}1 tools/m);
    expect(listed.stdout).toMatch(/^ {2}echo_twice {2}Echoes a word twice\.$/m);
    const json = JSON.parse((await runCli(["list", "--config", file, "--json"])).stdout);
    expect(json.composites).toEqual([{ name: "echo_twice", description: "Echoes a word twice." }]);
  });
});

describe("mcplex chat with guardrails", () => {
  it("gives the model a result with the personal data the pii guardrail redacts taken out", async () => {
    const file = join(dir, "guardrails.yaml");
    await writeFile(
      file,
      `servers:\n  fx:\n    command: ${resolve("node_modules/.bin/tsx")}\n    args: [${resolve("test/fixtures/servers/fixture-server.ts")}]\n` +
        'guardrails:\n  - { guardrail: pii, tools: ["fx__echo"] }\n',
    );
    const llm = await startMockLlm({
      turns: [
        { toolCalls: [{ name: "fx__echo", arguments: { message: "write to ada@example.com" } }] },
        (request) => ({
          text: String(request.body.messages.filter((m) => m.role === "tool").at(-1)?.content),
        }),
      ],
    });
    try {
      const { code, stdout, stderr } = await runCli(
        ["chat", "--config", file, "--base-url", llm.url, "--model", "mock", "-p", "Echo."],
        { env: { MCPLEX_LLM_API_KEY: "" } },
      );
      expect(code, stderr).toBe(0);
      expect(stdout.trim()).toBe("echo: write to [email redacted]");
    } finally {
      await llm.close();
    }
  });
});
