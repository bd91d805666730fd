import { parseByteSize } from "../../config/parse-byte-size.js";
import { parseDuration } from "../../config/parse-duration.js";
import type { HttpFrontOptions } from "../../fronts/http-front.js";
import { FORMS, LIMITS, type LimitFlag } from "../definitions/limit-flags.js";
import { UsageError } from "../output.js";

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
