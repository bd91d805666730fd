import type { HttpFrontOptions } from "../../fronts/http-front.js";

/** The HTTP front's limits a user may set on `mcplex serve`, by flag, with what help says of each. */
export const LIMITS = {
  "max-in-flight": {
    option: "maxConcurrent",
    kind: "count",
    description: "requests in flight per client (per connection on /ws)",
    defaultText: "256",
  },
  "max-streams": {
    option: "maxStreams",
    kind: "count",
    description: "long-lived streams (subscriptions/listen) open per client",
    defaultText: "64",
  },
  "body-timeout": {
    option: "bodyTimeoutMs",
    kind: "duration",
    description: "time a request body has to arrive in full before a 408",
    defaultText: "30s",
  },
  "max-sessions": {
    option: "maxSessions",
    kind: "count",
    description: "2025 sessions open at once, all clients together",
    defaultText: "10000",
  },
  "max-sessions-per-client": {
    option: "maxSessionsPerClient",
    kind: "count",
    description: "2025 sessions open at once per client; past it the longest idle one is closed",
    defaultText: "1000",
  },
  "idle-timeout": {
    option: "idleTimeoutMs",
    kind: "duration",
    description: "time a connection has to send a complete request head before a 408",
    defaultText: "30s",
  },
  "max-connections": {
    option: "maxConnections",
    kind: "count",
    description: "open connections, all clients together; past it only /healthz and /readyz are served",
    defaultText: "10000, or 3/4 of the file descriptors when fewer",
  },
  "max-connections-per-client": {
    option: "maxConnectionsPerClient",
    kind: "count",
    description: "open connections from one client address",
    defaultText: "2000",
  },
  "memory-budget": {
    option: "memoryBudget",
    kind: "size",
    description: "memory for request bodies and answers in flight; past it a large request gets 503",
    defaultText: "32MiB",
  },
} as const satisfies Record<
  string,
  {
    option: keyof HttpFrontOptions;
    kind: "count" | "duration" | "size";
    description: string;
    defaultText?: string;
  }
>;

/** What each kind of value must look like, for the usage error. */
export const FORMS = {
  count: "a whole number of at least 1",
  duration: "a duration such as 30s or 500ms",
  size: "a size such as 64MiB, 512KiB or a number of bytes",
} as const;

export type LimitFlag = keyof typeof LIMITS;

/** What each kind of value is called in help. */
const PLACEHOLDERS = { count: "N", duration: "T", size: "SIZE" } as const;

/** The limit flags, to spread into `serve`'s own. */
export const LIMIT_FLAGS = Object.fromEntries(
  Object.entries(LIMITS).map(([flag, limit]) => [
    flag,
    {
      type: "string" as const,
      value: PLACEHOLDERS[limit.kind],
      description: `${limit.description} (${FORMS[limit.kind]})`,
      ...("defaultText" in limit ? { defaultText: limit.defaultText } : {}),
    },
  ]),
) as Record<LimitFlag, { type: "string"; value: string; description: string; defaultText?: string }>;
