import type { McplexConfig } from "../config/types.js";

/** What decides and shapes calls now, as the dashboard lists it (see {@link rulesInForce}). */
export interface RulesInForce {
  policies: Array<{ name: string; effect: string; phase: string; when: string; scopes?: string[] }>;
  /** `auth.require`: the scopes what it selects needs, decided with the policies. */
  requires: Array<{ selects: string; scopes: string[] }>;
  guardrails: Array<{
    guardrail: string;
    mode: string;
    phase: string;
    failOpen: boolean;
    servers?: string[];
    tools?: string[];
    profiles?: string[];
  }>;
  quotas: Array<{
    name: string;
    per: string;
    limit: string;
    servers?: string[];
    tools?: string[];
    profiles?: string[];
  }>;
  /** Servers with `overrides:`, and how many entries each has. */
  overrides: Array<{ server: string; entries: number }>;
}

/** The config's `policies:`, `auth.require`, `guardrails:`, `quotas:` and servers' `overrides:`. */
export type RulesSource = Pick<McplexConfig, "policies" | "guardrails" | "quotas" | "auth" | "servers">;

/**
 * The rules of a config as the operator's dashboard shows them: each policy's condition as
 * written, each guardrail's and quota's selectors and limits. Only the operator sees them (a
 * condition may name groups and subjects).
 */
export function rulesInForce(config: RulesSource): RulesInForce {
  const selectors = (entry: { servers?: string[]; tools?: string[]; profiles?: string[] }) => ({
    ...(entry.servers === undefined ? {} : { servers: [...entry.servers] }),
    ...(entry.tools === undefined ? {} : { tools: [...entry.tools] }),
    ...(entry.profiles === undefined ? {} : { profiles: [...entry.profiles] }),
  });
  return {
    policies: (config.policies ?? []).map((rule) => ({
      name: rule.name,
      effect: rule.effect,
      phase: rule.phase,
      when: rule.when,
      ...(rule.scopes === undefined ? {} : { scopes: [...rule.scopes] }),
    })),
    requires: (config.auth?.require ?? []).map((rule) => ({
      selects: (["tools", "resources", "prompts", "servers"] as const)
        .filter((key) => rule[key] !== undefined)
        .map((key) => `${key}: ${rule[key]!.join(", ")}`)
        .join("; "),
      scopes: [...rule.scopes],
    })),
    guardrails: (config.guardrails ?? []).map((entry) => ({
      guardrail: entry.guardrail,
      mode: entry.mode,
      phase: entry.phase,
      failOpen: entry.failOpen,
      ...selectors(entry),
    })),
    quotas: (config.quotas ?? []).map((quota) => ({
      name: quota.name,
      per: quota.per,
      limit: [
        ...(quota.calls === undefined ? [] : [`${quota.calls} per ${quota.window! / 1000} s`]),
        ...(quota.concurrent === undefined ? [] : [`${quota.concurrent} at once`]),
      ].join(", "),
      ...selectors(quota),
    })),
    overrides: config.servers
      .filter((server) => server.overrides !== undefined)
      .map((server) => ({ server: server.name, entries: Object.keys(server.overrides!).length })),
  };
}
