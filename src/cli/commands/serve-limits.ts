import { parseByteSize } from "../../config/parse-byte-size.js";
import { parseDuration } from "../../config/parse-duration.js";
import type { HttpFrontOptions } from "../../fronts/http-front.js";
import { UsageError } from "../output.js";

/** The HTTP front's limits a user may set on `mcplex serve`, by flag. */
const LIMITS = {
  "max-in-flight": { option: "maxConcurrent", kind: "count" },
  "max-streams": { option: "maxStreams", kind: "count" },
  "body-timeout": { option: "bodyTimeoutMs", kind: "duration" },
  "max-sessions": { option: "maxSessions", kind: "count" },
  "max-sessions-per-client": { option: "maxSessionsPerClient", kind: "count" },
  "idle-timeout": { option: "idleTimeoutMs", kind: "duration" },
  "max-connections": { option: "maxConnections", kind: "count" },
  "max-connections-per-client": { option: "maxConnectionsPerClient", kind: "count" },
  "memory-budget": { option: "memoryBudget", kind: "size" },
} as const satisfies Record<string, { option: keyof HttpFrontOptions; kind: "count" | "duration" | "size" }>;

/** What each kind of value must look like, for the usage error. */
const FORMS = {
  count: "a whole number of at least 1",
  duration: "a duration such as 30s or 500ms",
  size: "a size such as 64MiB, 512KiB or a number of bytes",
} as const;

type LimitFlag = keyof typeof LIMITS;

/** `parseArgs` options of the limit flags, to spread into `serve`'s own. */
export const LIMIT_FLAGS = Object.fromEntries(
  Object.keys(LIMITS).map((flag) => [flag, { type: "string" as const }]),
) as Record<LimitFlag, { type: "string" }>;

/**
 * The limits given as flags, as {@link HttpFrontOptions}; a value that is not a positive
 * whole number (for a time, a duration such as `30s`; for a size, `64MiB` or bytes) is a
 * usage error naming the flag.
 */
export function readLimitFlags(
  values: Partial<Record<LimitFlag, string>>,
): Omit<Partial<HttpFrontOptions>, "dashboard"> {
  const limits: Record<string, number> = {};
  for (const [flag, { option, kind }] of Object.entries(LIMITS)) {
    const text = values[flag as LimitFlag];
    if (text === undefined) continue;
    const value =
      kind === "duration"
        ? parseDuration(text)
        : kind === "size"
          ? parseByteSize(text)
          : /^\d+$/.test(text)
            ? Number(text)
            : Number.NaN;
    if (value === undefined || !Number.isSafeInteger(value) || value < 1)
      throw new UsageError(`--${flag} must be ${FORMS[kind]}, not ${JSON.stringify(text)}`);
    limits[option] = value;
  }
  return limits as Omit<Partial<HttpFrontOptions>, "dashboard">;
}
