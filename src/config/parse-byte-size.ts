const UNIT_BYTES: Record<string, number> = {
  "": 1,
  b: 1,
  k: 1024,
  kb: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
};

/**
 * Parses a size into bytes: a number or digit string (bytes), or a number with a unit, `KiB`,
 * `MiB` or `GiB` (also written `k`, `KB`, `m`, `MB`, `g`, `GB`: always powers of 1024), such
 * as `"64MiB"` or `"1.5 GiB"`. Returns `undefined` when the value is not a size, is not more
 * than zero, or is past `Number.MAX_SAFE_INTEGER`.
 *
 * @example
 * parseByteSize("64MiB") // 67108864
 */
export function parseByteSize(value: unknown): number | undefined {
  let bytes: number | undefined;
  if (typeof value === "number") bytes = value;
  else if (typeof value === "string") {
    const match = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/.exec(value.trim().toLowerCase());
    const unit = match === null ? undefined : UNIT_BYTES[match[2]!];
    if (match !== null && unit !== undefined) bytes = Math.round(Number(match[1]) * unit);
  }
  if (bytes === undefined || !Number.isSafeInteger(bytes) || bytes <= 0) return undefined;
  return bytes;
}
