/**
 * The shapes of what decides and shapes calls in a loaded config: `policies:`, `guardrails:`,
 * `quotas:`, `composites:`, and the `overrides:` of servers and profiles. `types.ts` holds the
 * rest of the config and re-exports these.
 */

/**
 * One entry of `overrides:` (a server's, over its own tool names; a profile's, over exposed
 * names). Entries whose glob matches a tool apply in the order written, the later over the earlier.
 */
export interface ToolOverrideConfig {
  /**
   * The tool's new name: on a server, in place of its own name (the server's prefix still goes
   * before it); on a profile, the exposed name that profile's clients see. Only on an entry that
   * names one tool (no glob).
   */
  name?: string;
  title?: string;
  /** A new description, or text added after the tool's own (`{ append }`). */
  description?: string | { append: string };
  /** Annotations over the tool's own (`readOnlyHint`, `destructiveHint`, ...), key by key. */
  annotations?: Record<string, unknown>;
  /**
   * Arguments by name: `{ value }` is fixed, hidden from the client's schema and always sent;
   * `{ default }` is shown as the schema's `default`, made optional, and sent when absent.
   */
  arguments?: Record<string, ArgumentOverride>;
}

/** A fixed (`value`) or default (`default`) argument of a {@link ToolOverrideConfig}. */
export type ArgumentOverride = { value: unknown } | { default: unknown };

/**
 * One rule of `policies:`. Its `when` is a CEL expression over `caller`, `request` and `now` (and
 * `response` in the response phase) that yields a bool; the rules are read in order for every
 * request: `audit` rules that hold are recorded, `require` rules that hold add their scopes, and
 * the first `allow` or `deny` that holds decides. See docs/guide/policies.md.
 */
export interface PolicyRuleConfig {
  /** Unique among the rules: the audit trail, the span and refusals name it. */
  name: string;
  /** The CEL condition, as written. */
  when: string;
  effect: PolicyEffect;
  /** `request` (the default): before the request reaches a server; `response`: on its result. */
  phase: "request" | "response";
  /** What a `deny` answers (default: a sentence naming the rule). */
  message?: string;
  /** The scopes a `require` rule asks of a signed-in caller. */
  scopes?: string[];
}

/** What a policy rule does when its condition holds. */
export type PolicyEffect = "allow" | "deny" | "require" | "audit";

/** The guardrails mcplex ships. */
export type GuardrailKind = "size" | "schema" | "pii" | "secrets" | "injection" | "webhook";

/** The kinds of personal data the `pii` guardrail finds. */
export type PiiKind = "email" | "phone" | "card" | "iban";

/**
 * One entry of `guardrails:`, in the vocabulary of the MCP interceptors extension (SEP-2624): a
 * validator (`schema`) refuses, a mutator (`size`, `pii`, `secrets`) rewrites; on the request, the response
 * or both; `enforce` acts, `audit` records what it would have done; a guardrail that fails
 * refuses the call unless `failOpen`. It applies to the tool calls its selectors pick (each
 * absent selector picks all): `servers` by name, `tools` by globs over exposed names, `profiles`
 * by the caller's profile. See docs/guide/guardrails.md.
 */
export interface GuardrailConfig {
  guardrail: GuardrailKind;
  servers?: string[];
  tools?: string[];
  profiles?: string[];
  phase: "request" | "response" | "both";
  mode: "enforce" | "audit";
  failOpen: boolean;
  /** `size`: the most bytes of a result (its JSON). */
  maxBytes?: number;
  /** `size`: the most tokens of a result's text, estimated as one per four characters. */
  maxTokens?: number;
  /** `size`: what becomes of `structuredContent` in a result that is cut: dropped (default) or refused. */
  structured?: "drop" | "refuse";
  /** `pii`: what to do with each kind found (default: every kind redacted). */
  types?: Partial<Record<PiiKind, "redact" | "audit">>;
  /** `secrets`: refuse what holds a credential (`block`) or redact it (`redact`, the default). */
  action?: "block" | "redact";
  /** `webhook`: where the call or result is posted (https, or http on a loopback address). */
  url?: string;
  /** `webhook`: how long the service may take (ms; default 2000); past it the guardrail fails. */
  timeout?: number;
  /** `webhook`: what the service is, `validator` (the default: it may refuse) or `mutator` (it may rewrite). */
  type?: "validator" | "mutator";
  /** `webhook`: headers sent with each post (an `Authorization` for the service, say). */
  headers?: Record<string, string>;
}

/**
 * One entry of `quotas:`: how many tool calls the calls its selectors pick may make (each absent
 * selector picks all: `servers` by name, `tools` by globs over exposed names, `profiles` by the
 * caller's profile), counted per caller (`per: caller`, the default: issuer and subject of a
 * sign-in, a static token, a client address) or for everyone together (`per: all`). With
 * `cluster:`, the counts are shared by every replica through Redis. See docs/guide/quotas.md.
 */
export interface QuotaConfig {
  /** Names the quota in errors, metrics, the audit trail and the dashboard. */
  name: string;
  servers?: string[];
  tools?: string[];
  profiles?: string[];
  per: "caller" | "all";
  /** Calls allowed in each {@link window}. */
  calls?: number;
  /** The window `calls` are counted in (ms); windows start at multiples of it since the epoch. */
  window?: number;
  /** Calls allowed to run at once. */
  concurrent?: number;
}

/**
 * A composite tool (`composites.NAME`): listed and called like any tool (under its own name, as
 * server `composite`), its call runs `script` in code mode's sandbox with the call's arguments as
 * `args` and the caller's tools as `tools.<server>.<name>`; each inner call is the caller's own
 * call (profile, policies, guardrails, quotas, audit, tracing). See docs/guide/composite-tools.md.
 */
export interface CompositeToolConfig {
  title?: string;
  description: string;
  /** A JSON Schema of `type: object`, as any tool's. */
  inputSchema: Record<string, unknown>;
  /** When given, the script's value is the result's `structuredContent`. */
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  /** JavaScript or TypeScript; its `return` (or last expression) is the result. */
  script: string;
}
