/** The parts of the transport contract that depend only on the fixture server, whatever carries it. */
import type { TransportContract } from "./transport-contract.case.js";

/** What the fixture server (test/fixtures/servers/fixture-tools.ts) answers, on any transport. */
export const FIXTURE_CALLS: Pick<TransportContract, "echo" | "toolError" | "slow" | "resource" | "prompt"> = {
  echo: { tool: "echo", args: (tag) => ({ message: tag }), text: (tag) => `echo: ${tag}` },
  toolError: { tool: "fail", args: {} },
  slow: { tool: "slow", args: (ms, step, tag) => ({ ms, step, tag }), observesCancellation: true },
  resource: { uri: "fixture://readme", text: "fixture readme" },
  prompt: { name: "greet", args: { who: "Ada" }, text: "Say hello to Ada" },
};

/** Common fields of a server entry, as the loader would fill them. */
export const SERVER_DEFAULTS = {
  enabled: true,
  timeout: 10_000,
  startTimeout: 20_000,
  lazy: false,
  tools: {},
};
