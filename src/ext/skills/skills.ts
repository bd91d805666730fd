import type { ResourceTarget } from "../../catalog/types.js";
import { notFound } from "../../servers/lookup-errors.js";
import type { SkillEntry } from "./skill-entry.js";
import { listSkills, type SkillListingHost, type SkillsPage } from "./skill-listing.js";
import {
  type HubSkill,
  type LoadedSkill,
  loadSkill,
  readSkillFile,
  type SkillCallOptions,
  type SkillLoadSettings,
  type SkillReaderHost,
} from "./skill-reader.js";

/** Most pages {@link Skills.all} reads (the bound of every list the hub reads whole). */
const MAX_SKILL_PAGES = 1000;

/**
 * What {@link Skills} needs of the hub: its catalog and its call path. `O` is the hub's options
 * of a call, passed through as they are (the profile and the signal alone are read here).
 */
export interface SkillsHost<O extends SkillCallOptions> extends SkillListingHost<O>, SkillReaderHost<O> {
  /**
   * Sends `method` to the server behind the resource `params.uri` (`target`, when it is already
   * resolved), through the call path.
   */
  aboutResource(
    method: string,
    params: Record<string, unknown>,
    options: O,
    target?: ResourceTarget,
  ): Promise<Record<string, unknown>>;
}

/**
 * The skills of the hub's servers (SEP-2640, the skills extension): their merged listing, and
 * each skill read and verified as a host must. The hub's skill members delegate here.
 */
export class Skills<O extends SkillCallOptions> {
  readonly #host: SkillsHost<O>;

  constructor(host: SkillsHost<O>) {
    this.#host = host;
  }

  /** One page of the merged listing, as a gateway's `skills/list` answers it: see {@link listSkills}. */
  list(options: O & { cursor?: string }): Promise<SkillsPage> {
    return listSkills(this.#host, options);
  }

  /** Every skill of every server that declares the extension: the listing only, no file is read. */
  async all(options: O): Promise<HubSkill[]> {
    const skills: HubSkill[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    // A server that hands out cursors forever gets a thousand pages, as its other lists do.
    for (let pages = 0; pages < MAX_SKILL_PAGES; pages++) {
      const page = await this.list(cursor === undefined ? options : { ...options, cursor });
      page.skills.forEach((entry, i) => {
        const skill = hubSkill(page.servers[i]!, entry);
        if (skill !== undefined) skills.push(skill);
      });
      cursor = page.nextCursor;
      if (cursor === undefined || seen.has(cursor)) break;
      seen.add(cursor);
    }
    return skills;
  }

  /** The entry of the skill whose `SKILL.md` is `uri` (`skills/get` to its server). */
  async get(uri: string, options: O): Promise<HubSkill> {
    const target = this.#host.catalog.resolveResource(uri, options.profile);
    if (target === undefined) throw notFound("resource", uri, options.profile);
    const result = await this.#host.aboutResource("skills/get", { uri }, options, target);
    const skill = hubSkill(target.server, result.skill);
    if (skill === undefined) throw notFound("resource", uri, options.profile);
    return skill;
  }

  /** Loads a skill for a model, verified against its entry: see {@link loadSkill}. */
  load(skill: HubSkill, options: O & SkillLoadSettings): Promise<LoadedSkill> {
    return loadSkill(this.#host, skill, options);
  }

  /** Reads a file of a loaded skill, verified against its entry: see {@link readSkillFile}. */
  readFile(skill: LoadedSkill, path: string, options: O): Promise<Uint8Array> {
    return readSkillFile(this.#host, skill, path, options);
  }
}

/** A listed entry as a {@link HubSkill}, or `undefined` when it lacks its uri or frontmatter. */
function hubSkill(server: string, entry: unknown): HubSkill | undefined {
  const e = entry as Partial<SkillEntry> | undefined;
  const fm = e?.frontmatter as { name?: unknown; description?: unknown } | undefined;
  if (typeof e?.uri !== "string" || typeof fm?.name !== "string") return undefined;
  return {
    server,
    name: fm.name,
    description: typeof fm.description === "string" ? fm.description : "",
    uri: e.uri,
    entry: e as SkillEntry,
  };
}
