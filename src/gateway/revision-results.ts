import type { JsonObject } from "../hub/call-pipeline.js";
import { RawJson } from "../protocol/raw-json.js";
import { META } from "../protocol/rev2026.js";

/** `_meta`'s key of the server's name and version in a 2026 result, as JSON. */
const SERVER_INFO_KEY = JSON.stringify(META.serverInfo);

/**
 * A result as each revision's client gets it. A 2026 result says `resultType`, carries the
 * gateway's `serverInfo` in `_meta`, and for a cacheable list `ttlMs: 0` and `cacheScope`; a
 * 2025 client never sees those members.
 */
export class RevisionResults {
  readonly #name: string;
  readonly #version: string;
  /** `{name, version}` as JSON, for results shaped as text. */
  readonly #serverInfoJson: string;

  constructor(identity: { name: string; version: string }) {
    this.#name = identity.name;
    this.#version = identity.version;
    this.#serverInfoJson = JSON.stringify({ name: identity.name, version: identity.version });
  }

  /** `raw` as a 2026 client gets it; `cacheable`: the method's row says its answer may be cached. */
  rev2026(raw: JsonObject, cacheable: boolean): JsonObject {
    if (raw instanceof RawJson) return this.#rev2026Raw(raw, cacheable);
    const result = raw;
    const given = result._meta as Record<string, unknown> | undefined;
    // Not `{ ...given, [META.serverInfo]: ... }`: a computed key in a literal is a runtime call
    // per object (about 11k instructions per call, with the spread: callgrind).
    const meta: Record<string, unknown> = given === undefined ? {} : Object.assign({}, given);
    meta[META.serverInfo] = { name: this.#name, version: this.#version };
    // Copied with Object.assign, not a spread: members added to a spread's copy (in its literal
    // or after it) went down V8's slow path on every call (node --log-ic: "LookupForWrite said
    // 'false'"; about 8k instructions per call under callgrind).
    const shaped: JsonObject = Object.assign({}, result);
    shaped.resultType = result.resultType ?? "complete";
    shaped._meta = meta;
    if (cacheable && shaped.resultType === "complete") {
      // The catalog changes whenever an upstream does; clients learn of it through
      // subscriptions/listen, so lists are fresh only as long as nothing is announced.
      shaped.ttlMs = 0;
      shaped.cacheScope = "private";
    }
    return shaped;
  }

  /**
   * {@link rev2026} of a result kept as text, still as text: a RawJson has none of the members
   * shaping reads or sets (see `RAW_MEMBERS`), so they go after its own, in the same order, and
   * it is not parsed only to be written again (a stdio server's answer to a 2026 client: the
   * fronts write its text).
   */
  #rev2026Raw(raw: RawJson, cacheable: boolean): JsonObject {
    const text = raw.text;
    const head = text.slice(0, text.lastIndexOf("}")).trimEnd();
    let members = `"resultType":"complete","_meta":{${SERVER_INFO_KEY}:${this.#serverInfoJson}}`;
    if (cacheable) members += ',"ttlMs":0,"cacheScope":"private"';
    // Only an empty object ends in "{" once its closing brace is cut off.
    const shaped = `${head}${head.endsWith("{") ? "" : ","}${members}}`;
    return new Rev2026RawResult(shaped) as unknown as JsonObject;
  }
}

/**
 * A 2026 result kept as text ({@link RevisionResults}' shaping of a RawJson): the members the
 * shaping wrote read as they are written, so that it still stands for its object (see `RawJson`).
 */
class Rev2026RawResult extends RawJson {
  readonly resultType = "complete";

  get _meta(): unknown {
    return this.value()._meta;
  }

  get ttlMs(): unknown {
    return this.value().ttlMs;
  }

  get cacheScope(): unknown {
    return this.value().cacheScope;
  }
}

/** A result as a 2025 client gets it: without the 2026-only members. */
export function rev2025Result(result: JsonObject): JsonObject {
  if (result.resultType === undefined && result.ttlMs === undefined && result.cacheScope === undefined)
    return result;
  const { resultType: _r, ttlMs: _t, cacheScope: _c, ...rest } = result;
  return rest;
}
