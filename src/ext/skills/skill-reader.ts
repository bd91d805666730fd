import type { ReadResourceResult } from "@modelcontextprotocol/client";
import { McplexError } from "../../errors.js";
import type { SkillEntry, SkillFile } from "./skill-entry.js";

/** A skill the hub can load: where it comes from and its entry as the catalog shows it. */
export interface HubSkill {
  /** The server that serves it (the origin a model is told about). */
  server: string;
  /** Its `frontmatter.name`. */
  name: string;
  /** Its `frontmatter.description`. */
  description: string;
  /** The URI of its `SKILL.md`, as the catalog shows it (`skill://<server>/...`). */
  uri: string;
  /** The entry its server listed (`skills/list` or `skills/get`), URIs as the catalog shows them. */
  entry: SkillEntry;
}

/**
 * A skill whose `SKILL.md` was read and verified: its files may be read with
 * {@link readSkillFile}, each checked against the same entry.
 */
export interface LoadedSkill extends HubSkill {
  /** `SKILL.md` as text. */
  text: string;
}

/**
 * What the skills read of the options of a call: the profile a name is resolved through, and
 * the signal that stops it. The hub's own options (`CallOptions`) go through as they are.
 */
export interface SkillCallOptions {
  profile?: string;
  signal?: AbortSignal;
}

/** What reading a skill needs of the hub; `O` is the hub's options of a call. */
export interface SkillReaderHost<O extends SkillCallOptions> {
  readResource(uri: string, options: O): Promise<ReadResourceResult>;
}

/** What {@link loadSkill} takes beside the options of a call (the hub's `LoadSkillOptions`). */
export interface SkillLoadSettings {
  /**
   * Load a skill whose entry says `"resources": "dynamic"` (no digests to check). Default
   * `false`: such a skill cannot be verified, and is refused.
   */
  allowDynamic?: boolean;
}

/** Limits of one skill a host must accept (SEP-2640); larger ones are refused before any read. */
export const SKILL_LIMITS = { files: 512, bytes: 16 * 1024 * 1024 } as const;

// The checks (node:crypto, yaml) load with the first skill read, not when the hub starts.
const checks = () => import("./skill-entry.js");

/**
 * Loads a skill as a host does (SEP-2640): the entry is checked, then `SKILL.md` alone is read
 * (never a file ahead of need), its size and digest checked against the entry, and its
 * frontmatter compared field by field with the entry's. Any difference refuses the skill.
 *
 * @throws McplexError `SKILL_VERIFICATION_FAILED` (the entry, the bytes or the frontmatter).
 */
export async function loadSkill<O extends SkillCallOptions>(
  host: SkillReaderHost<O>,
  skill: HubSkill,
  options: O & SkillLoadSettings,
): Promise<LoadedSkill> {
  const { skillEntryProblem, verifyFrontmatter } = await checks();
  const problem = skillEntryProblem(skill.entry);
  if (problem !== undefined) throw refused(skill, `its entry is not valid: ${problem}`);
  const { entry } = skill;
  if (entry.resources === "dynamic") {
    if (options.allowDynamic !== true)
      throw refused(skill, 'its entry says "resources": "dynamic", so nothing it serves can be verified');
  } else {
    const bytes = entry.resources.reduce((sum, f) => sum + f.size, 0);
    if (entry.resources.length > SKILL_LIMITS.files || bytes > SKILL_LIMITS.bytes)
      throw refused(skill, `${entry.resources.length} files of ${bytes} bytes exceed the limits of a skill`);
  }
  const { allowDynamic: _, ...callOptions } = options;
  const text = new TextDecoder().decode(await readVerified(host, skill, entry.uri, callOptions as O));
  verifyFrontmatter(text, entry, skill.server);
  return { ...skill, text };
}

/**
 * Reads one file of a loaded skill: `path` relative to the skill's root
 * (`references/GUIDE.md`) or the file's full URI. Only files the entry lists are read, and each
 * is checked against its size and digest there.
 *
 * @throws McplexError `SKILL_VERIFICATION_FAILED` for a file the entry does not list or whose
 *   bytes differ from it.
 */
export async function readSkillFile<O extends SkillCallOptions>(
  host: SkillReaderHost<O>,
  skill: LoadedSkill,
  path: string,
  options: O,
): Promise<Uint8Array> {
  const root = skill.entry.uri.slice(0, skill.entry.uri.lastIndexOf("/"));
  const uri = path.includes("://") ? path : `${root}/${path.replace(/^\.?\//, "")}`;
  return await readVerified(host, skill, uri, options);
}

/** Reads `uri` and checks it against the file the skill's entry lists for it. */
async function readVerified<O extends SkillCallOptions>(
  host: SkillReaderHost<O>,
  skill: HubSkill,
  uri: string,
  options: O,
): Promise<Uint8Array> {
  const { verifySkillFile } = await checks();
  const files = skill.entry.resources;
  const file: SkillFile | undefined = files === "dynamic" ? undefined : files.find((f) => f.uri === uri);
  if (files !== "dynamic" && file === undefined) throw refused(skill, `${uri} is not a file its entry lists`);
  const result = await host.readResource(uri, options);
  const bytes = contentBytes(result, uri);
  if (file !== undefined) verifySkillFile(bytes, file, skill.server);
  return bytes;
}

/** The raw bytes of a resource read: its text as UTF-8, or its blob decoded. */
function contentBytes(result: ReadResourceResult, uri: string): Uint8Array {
  const contents = result.contents ?? [];
  const item = contents.find((c) => c.uri === uri) ?? contents[0];
  if (item !== undefined && "text" in item && typeof item.text === "string")
    return new TextEncoder().encode(item.text);
  if (item !== undefined && "blob" in item && typeof item.blob === "string")
    return Buffer.from(item.blob, "base64");
  return new Uint8Array();
}

function refused(skill: HubSkill, why: string): McplexError {
  return new McplexError("SKILL_VERIFICATION_FAILED", `skill "${skill.name}" of ${skill.server}: ${why}`, {
    server: skill.server,
    hint: "List the skills again (its server may have changed it) and load it from the new entry.",
  });
}
