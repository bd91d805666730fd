/**
 * What a caller sends is data to a policy, never part of a rule: arguments and claims made to
 * look like CEL, JSON's `__proto__`, values of every type where a rule expects a string. Each
 * decision is checked against the same rule written in JavaScript here: a string argument is
 * compared, anything else fails closed (denied), and no input reaches the rule's text.
 */
import { describe, expect, it } from "vitest";
import { Policies, type PolicyCaller } from "../../src/access/policies.js";
import type { PolicyRuleConfig } from "../../src/config/types.js";
import type { RequestTarget } from "../../src/hub/call-pipeline.js";
import { attackSize, reportFigure } from "../support/hostile.js";
import { rng } from "../support/rng.js";

const RULES: PolicyRuleConfig[] = [
  {
    name: "etc",
    when: 'has(request.arguments.path) && request.arguments.path.startsWith("/etc")',
    effect: "deny",
    phase: "request",
  },
  { name: "admins", when: '"admins" in caller.groups', effect: "allow", phase: "request" },
  { name: "rest", when: 'request.tool.endsWith("__write")', effect: "deny", phase: "request" },
];
const TARGET: RequestTarget = { kind: "tool", name: "fs__write", server: "fs" };
const CALLER: PolicyCaller = { signedIn: true, scopes: [] };

/** Pieces of text that would change a rule if they were ever pasted into it. */
const CEL_LIKE = [
  '" || true || "',
  "') || true || ('",
  '/etc" || true',
  "admins",
  '"admins" in caller.groups',
  "\\u0022 || true",
  "${TOOL}",
  "/etc/passwd",
  "/ETC/passwd",
  " /etc",
  "/etc\u0000",
  "\u202e/cte/",
];

/** A value of any JSON type, often text that looks like CEL. */
function value(next: () => number, depth = 0): unknown {
  const kind = Math.floor(next() * 8);
  switch (kind) {
    case 0:
      return Math.floor(next() * 1e6) - 5e5;
    case 1:
      return next() < 0.5;
    case 2:
      return null;
    case 3:
      return depth > 2 ? "[]" : [value(next, depth + 1), value(next, depth + 1)];
    case 4:
      return depth > 2 ? "{}" : { path: value(next, depth + 1), ["__proto__"]: { admins: true } };
    default: {
      const piece = CEL_LIKE[Math.floor(next() * CEL_LIKE.length)]!;
      return next() < 0.5 ? piece : `/etc/${piece}`;
    }
  }
}

/** The same rules in JavaScript: what the decision must be. */
function expected(args: Record<string, unknown>, groups: unknown[]): string {
  if (Object.hasOwn(args, "path")) {
    const path = args.path;
    if (typeof path !== "string") return "deny:etc"; // cannot be evaluated: fails closed
    if (path.startsWith("/etc")) return "deny:etc";
  }
  if (groups.includes("admins")) return "allow";
  return "deny:rest";
}

describe("policies: what a caller sends stays data", () => {
  it("decides hostile arguments and groups exactly as the rules say", () => {
    const policies = new Policies(RULES);
    const next = rng(34);
    const runs = attackSize(2000, 50_000);
    let denied = 0;
    for (let i = 0; i < runs; i++) {
      // Parsed from JSON, as a client's arguments are: `__proto__` is an own key then.
      const args = JSON.parse(
        JSON.stringify(next() < 0.8 ? { path: value(next) } : { other: value(next) }),
      ) as Record<string, unknown>;
      const groups = [value(next), next() < 0.2 ? "admins" : "staff"].filter((g) => typeof g === "string");
      const verdict = policies.decideRequest(
        {
          caller: { groups, subject: String(value(next)), claims: { groups: value(next) } },
          request: { method: "tools/call", tool: "fs__write", server: "fs", arguments: args },
          response: {},
          now: new Date(),
        },
        TARGET,
        CALLER,
      );
      const got = verdict.outcome === "deny" ? `deny:${verdict.denied?.rule}` : verdict.outcome;
      expect(got, JSON.stringify({ args, groups })).toBe(expected(args, groups));
      if (got !== "allow") denied++;
    }
    reportFigure("hostile policy inputs", `${runs} decisions, ${denied} denied, every one as the rules say`);
  });
});
