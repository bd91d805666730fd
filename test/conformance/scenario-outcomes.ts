/**
 * What mcplex does with each scenario of the official conformance suite where that is not a plain
 * pass, and why: the one hand-kept list behind both the tests that run the suite and the table in
 * docs/reference/conformance.md (scripts/conformance-table.ts). Every scenario the runner lists
 * and this file does not name passes, and a test says so: gateway-draft-conformance.test.ts for
 * the server scenarios (the runner's `--suite all` through the gateway), the client tests for
 * the client ones (see {@link clientScenarioTest}). A listed exception that starts passing
 * fails its test, so the list stays true.
 */
import { type ScenarioOutcome, type ServerSuiteRun, scenarioOutcome } from "./run-server-suite.js";

/** What a scenario adds up to when it is not a pass, as the tests classify its checks. */
export type ExceptionKind =
  /** The scenario skips itself (every check SKIPPED): nothing for anyone to pass. */
  | "skipped"
  /** No check succeeded and none failed: the scenario found nothing it could test. */
  | "not-exercised"
  /** A check fails. */
  | "fails";

export interface ScenarioException {
  kind: ExceptionKind;
  /** Why, in one sentence the table shows. */
  reason: string;
  /** For `fails`: the checks that fail, and no other may. */
  checks?: string[];
}

/**
 * Server scenarios that do not pass through `mcplex serve --http` in front of the conformance
 * fixtures (the "everything" fixture, the tasks fixture, the skills fixture).
 */
export const SERVER_EXCEPTIONS: Readonly<Record<string, ScenarioException>> = {
  "tasks-status-notifications": {
    kind: "skipped",
    reason:
      "its harness reads the tools/call POST stream, while SEP-2663 sends " +
      "`notifications/tasks` on `subscriptions/listen` (test/gateway/tasks.test.ts covers that stream)",
  },
  "server-sse-polling": {
    kind: "not-exercised",
    reason:
      "the gateway answers the scenario's tools/call with JSON, which the scenario takes as not " +
      "applicable: SEP-1699 polling (a priming event, closing the stream mid-call, resuming with " +
      "Last-Event-ID) needs SSE event ids and an event store the gateway does not have; 2025-11-25 " +
      "only, pending in the suite",
  },
};

/**
 * What else does not pass when the fixtures behind the gateway are 2025 servers (the everything
 * fixture with `--legacy-only`, the skills fixture with `--legacy`; the tasks fixture stays 2026,
 * tasks being a 2026 extension). The table shows these as notes.
 */
export const SERVER_EXCEPTIONS_BEHIND_2025: Readonly<Record<string, ScenarioException>> = {
  "input-required-result-basic-elicitation": {
    kind: "fails",
    reason:
      "the keys of `inputRequests` are minted by the gateway (`input_1`), a 2025 server's " +
      "requests to the client being anonymous, while the scenario expects the server's `user_name`",
    checks: ["sep-2322-elicitation-incomplete"],
  },
};

/**
 * The runner's pending server scenarios (`server --suite pending`), which `list` does not mark:
 * gateway-draft-conformance.test.ts checks this list against what the runner runs.
 */
export const PENDING_SERVER_SCENARIOS: readonly string[] = [
  "json-schema-2020-12",
  "server-sse-polling",
  "http-header-validation",
  "http-custom-header-server-validation",
  "tasks-lifecycle",
  "tasks-capability-negotiation",
  "tasks-wire-fields",
  "tasks-request-state-removal",
  "tasks-mrtr-input",
  "tasks-request-headers",
  "tasks-dispatch-and-envelope",
  "tasks-status-notifications",
  "tasks-required-task-error",
  "tasks-mrtr-composition",
  "sep-2640-skills-directory",
  "sep-2640-skills-enumeration",
  "sep-2640-skills-manifest",
];

/**
 * Client scenarios the hub (test/conformance/client.ts) does not pass; they fail on the client's
 * side, so `checks` is not given (a failing scenario may stop before some of its checks). None
 * now: client-conformance.test.ts runs the runner's `--suite all`, and every scenario passes.
 */
export const CLIENT_EXCEPTIONS: Readonly<Record<string, ScenarioException>> = {};

/** Why the authorization server scenarios (`list`'s third section) are not for mcplex. */
export const AUTHORIZATION_SERVER_REASON =
  "not applicable: mcplex is no authorization server (it signs users in with one and checks its tokens)";

/** Client scenarios client-conformance.test.ts runs beyond the requirement sets' lists. */
export const CLIENT_EXTRAS: readonly string[] = [
  "auth/client-credentials-basic",
  "auth/client-credentials-jwt",
  "auth/wif-jwt-bearer",
  "auth/dpop",
  "auth/dpop-nonce",
  "auth/enterprise-managed-authorization",
  "json-schema-2020-12-preservation",
];

/**
 * The test that runs a client scenario: `scored` is every client scenario of a requirement set.
 * The skills scenarios have a test of their own; client-conformance.test.ts runs the rest (each
 * requirement set with the extras, and the runner's `--suite all`, which takes in every other).
 */
export function clientScenarioTest(scenario: string): string {
  if (scenario.startsWith("sep-2640-client-")) return "skills-client-conformance.test.ts";
  return "client-conformance.test.ts";
}

/**
 * The scenarios of a run that did not come out as expected, one message each: a scenario not
 * named in `exceptions` must pass; a named one must come out as its kind says (with exactly its
 * failing `checks`, where given), so one that starts passing is reported too.
 */
export function unexpectedOutcomes(
  run: Pick<ServerSuiteRun, "required" | "results">,
  exceptions: Readonly<Record<string, ScenarioException>>,
): string[] {
  return run.required.flatMap((scenario) => {
    const exception = exceptions[scenario];
    const expected: ScenarioOutcome = exception?.kind ?? "pass";
    const result = run.results.get(scenario);
    const got = scenarioOutcome(result);
    const failing = (result?.checks ?? []).filter((c) => c.status === "FAILURE").map((c) => c.id);
    const checksAsListed =
      exception?.checks === undefined || JSON.stringify(failing) === JSON.stringify(exception.checks);
    if (got === expected && checksAsListed) return [];
    const bad = (result?.checks ?? [])
      .filter((c) => c.status === "FAILURE" || c.status === "WARNING")
      .map((c) => `${c.status} ${c.id}: ${c.errorMessage ?? c.description ?? ""}`);
    return [`${scenario}: expected ${expected}, got ${got}${bad.map((b) => `\n  ${b}`).join("")}`];
  });
}
