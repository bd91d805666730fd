/**
 * The skills extension (`io.modelcontextprotocol/skills`, SEP-2640) on the wire: the shape of
 * a skill entry, and the checks a host makes on what it reads (a
 * file's digest and size against the entry it was listed with, `SKILL.md`'s frontmatter against
 * the entry's). Both sides of mcplex use it: the gateway to pass entries on, the hub to verify
 * the files it reads for a model. It loads `node:crypto` and `yaml`: the hub imports it when a
 * skill is first read, not at start.
 */
import { createHash } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { parse } from "yaml";
import { McplexError } from "../../errors.js";

/** One file of a skill as its entry lists it. */
export interface SkillFile {
  uri: string;
  /** `sha256:` and 64 lowercase hex digits of the file's raw bytes. */
  digest: string;
  /** The file's length in bytes. */
  size: number;
}

/** A skill as `skills/list` and `skills/get` describe it. */
export interface SkillEntry {
  /** The URI of the skill's `SKILL.md`. */
  uri: string;
  /** `SKILL.md`'s YAML frontmatter as JSON (`name` and `description` at least). */
  frontmatter: Record<string, unknown> & { name: string; description: string };
  /** Every file of the skill, or `"dynamic"` when the server cannot publish digests. */
  resources: SkillFile[] | "dynamic";
  [key: string]: unknown;
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** Why `value` is not a valid skill entry, or `undefined` when it is one. */
export function skillEntryProblem(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "an entry is not an object";
  const entry = value as Record<string, unknown>;
  if (typeof entry.uri !== "string" || entry.uri === "") return "an entry has no uri";
  const fm = entry.frontmatter as Record<string, unknown> | undefined;
  if (typeof fm !== "object" || fm === null || Array.isArray(fm)) return `${entry.uri} has no frontmatter`;
  if (typeof fm.name !== "string" || typeof fm.description !== "string")
    return `${entry.uri}: frontmatter lacks name or description`;
  if (entry.resources === "dynamic") return undefined;
  if (!Array.isArray(entry.resources))
    return `${entry.uri}: resources is neither a list of files nor "dynamic"`;
  for (const file of entry.resources as unknown[]) {
    const f = file as Partial<SkillFile> | null;
    if (typeof f?.uri !== "string" || typeof f.digest !== "string" || !DIGEST.test(f.digest))
      return `${entry.uri}: a file has no uri or no sha256 digest`;
    if (typeof f.size !== "number" || !Number.isInteger(f.size) || f.size < 0)
      return `${entry.uri}: ${f.uri} has no size`;
  }
  return undefined;
}

/** The skill's name as its URI says it: the segment before `SKILL.md`. */
export function skillNameOf(uri: string): string | undefined {
  const segments = uri.split("/");
  return segments.at(-1) === "SKILL.md" && segments.length >= 2 ? segments.at(-2) : undefined;
}

/** `sha256:` and the hex SHA-256 of `bytes`, as skill entries write digests. */
export function skillDigest(bytes: Uint8Array | string): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

function failure(message: string, server: string | undefined): McplexError {
  return new McplexError("SKILL_VERIFICATION_FAILED", message, {
    ...(server === undefined ? {} : { server }),
    hint: "The skill changed since it was listed, or its server serves other bytes than it lists: list the skills again (skills/get) before reading it.",
  });
}

/**
 * Checks bytes read for `file` against what its entry promised: the size first (a truncated or
 * padded read fails without hashing), then the digest.
 *
 * @throws McplexError `SKILL_VERIFICATION_FAILED` on any difference.
 */
export function verifySkillFile(bytes: Uint8Array, file: SkillFile, server?: string): void {
  if (bytes.byteLength !== file.size)
    throw failure(`${file.uri}: read ${bytes.byteLength} bytes, the skill lists ${file.size}`, server);
  const digest = skillDigest(bytes);
  if (digest !== file.digest)
    throw failure(`${file.uri}: digest ${digest} differs from the listed ${file.digest}`, server);
}

/** The YAML frontmatter at the start of a `SKILL.md`, as JSON; `undefined` when there is none. */
export function parseFrontmatter(text: string): Record<string, unknown> | undefined {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const match = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(body);
  if (match === null) return undefined;
  try {
    const data: unknown = parse(match[1]!);
    return typeof data === "object" && data !== null && !Array.isArray(data)
      ? (data as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Checks a `SKILL.md`'s frontmatter against the entry's, field by field.
 *
 * @throws McplexError `SKILL_VERIFICATION_FAILED` when it has none or any field differs.
 */
export function verifyFrontmatter(text: string, entry: SkillEntry, server?: string): void {
  const read = parseFrontmatter(text);
  if (read === undefined) throw failure(`${entry.uri} has no YAML frontmatter`, server);
  const keys = new Set([...Object.keys(read), ...Object.keys(entry.frontmatter)]);
  for (const key of keys) {
    if (!isDeepStrictEqual(read[key] ?? null, entry.frontmatter[key] ?? null))
      throw failure(`${entry.uri}: frontmatter field "${key}" differs from the skill's entry`, server);
  }
}
