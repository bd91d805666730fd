import { describe, expect, it } from "vitest";
import type { Check, CheckStatus, ScenarioResult } from "./run-server-suite.js";
import { type ScenarioException, unexpectedOutcomes } from "./scenario-outcomes.js";

function result(scenario: string, ...statuses: Array<[string, CheckStatus]>): ScenarioResult {
  const checks: Check[] = statuses.map(([id, status]) => ({ id, name: id, status }));
  const count = (s: CheckStatus) => checks.filter((c) => c.status === s).length;
  return { scenario, passed: count("SUCCESS"), failed: count("FAILURE"), warnings: count("WARNING"), checks };
}

function run(...results: ScenarioResult[]) {
  return { required: results.map((r) => r.scenario), results: new Map(results.map((r) => [r.scenario, r])) };
}

const listed: Record<string, ScenarioException> = {
  skips: { kind: "skipped", reason: "the suite skips it" },
  idle: { kind: "not-exercised", reason: "nothing to test" },
  breaks: { kind: "fails", reason: "known", checks: ["known-check"] },
};

describe("unexpectedOutcomes, which keeps the exception lists true", () => {
  it("accepts passes and the listed exceptions as listed", () => {
    const ok = run(
      result("plain", ["a", "SUCCESS"], ["b", "INFO"]),
      result("skips", ["s", "SKIPPED"]),
      result("idle", ["i", "INFO"]),
      result("breaks", ["known-check", "FAILURE"], ["other", "SUCCESS"]),
    );
    expect(unexpectedOutcomes(ok, listed)).toEqual([]);
  });

  it("reports a listed exception that starts passing", () => {
    const now = run(
      result("skips", ["s", "SUCCESS"]),
      result("idle", ["i", "SUCCESS"]),
      result("breaks", ["known-check", "SUCCESS"]),
    );
    expect(unexpectedOutcomes(now, listed)).toEqual([
      "skips: expected skipped, got pass",
      "idle: expected not-exercised, got pass",
      "breaks: expected fails, got pass",
    ]);
  });

  it("reports an unlisted failure, warning, empty or missing scenario, and a listed one failing otherwise", () => {
    const bad = run(
      result("fails", ["x", "FAILURE"]),
      result("warns", ["y", "SUCCESS"], ["z", "WARNING"]),
      result("empty"),
      result("breaks", ["known-check", "FAILURE"], ["new-check", "FAILURE"]),
    );
    bad.required.push("missing");
    expect(unexpectedOutcomes(bad, listed)).toEqual([
      "fails: expected pass, got fails\n  FAILURE x: ",
      "warns: expected pass, got warns\n  WARNING z: ",
      "empty: expected pass, got not-exercised",
      "breaks: expected fails, got fails\n  FAILURE known-check: \n  FAILURE new-check: ",
      "missing: expected pass, got no-result",
    ]);
  });
});
