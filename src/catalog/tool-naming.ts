/**
 * Naming policy for exposed tool and prompt names.
 *
 * MCP allows names up to 128 characters with `.` and more; OpenAI-style function names must match
 * `^[A-Za-z0-9_-]{1,64}$`. Every name the catalog exposes matches that, is deterministic, and maps
 * back to `(server, original name)` through the catalog's index (never by parsing the name).
 *
 * The rule, in order:
 * 1. **Plain form**: `prefix__name`, or `name` when the prefix is `""`. Every code point outside
 *    `[A-Za-z0-9_-]` becomes `_`, in the prefix and in the name.
 * 2. **Hashed form**, used when the plain form is empty, longer than 64, or shared with any other
 *    `(server, original)` pair: the plain form truncated to 55 characters, then `_` and the first 8
 *    hex digits of `sha256(server + "\0" + originalName)`. The hash is of the full original, so two
 *    long names sharing their first 55 characters still differ.
 * 3. **Collisions are symmetric**: when two or more pairs share a plain form, *all* of them take the
 *    hashed form, and the collision is reported. No pair "wins" the plain name, because a winner chosen
 *    by sort order would let a newly added server take over a name another server's tool already had
 *    (a call meant for one server silently reaching another). With the symmetric rule a tool's name
 *    depends only on its own server, prefix and name, plus whether its plain form is contested; adding
 *    or removing an unrelated server never changes it, and a contested plain name simply disappears.
 * 4. **Pathological clashes** (a hashed name equal to another name, i.e. a 32-bit hash collision or a
 *    server that lists a tool literally called `x_1a2b3c4d`): the pair sorting first by
 *    `(server, originalName)` keeps its name and the others are re-hashed with a counter salt.
 */

import { createHash } from "node:crypto";

/** Every exposed tool and prompt name matches this pattern. */
export const EXPOSED_NAME_PATTERN: RegExp = /^[A-Za-z0-9_-]{1,64}$/;

/** Longest exposed name. */
export const MAX_EXPOSED_NAME_LENGTH = 64;

/** Separator between prefix and name in the plain form. */
export const PREFIX_SEPARATOR = "__";

const HASH_LENGTH = 8;
const UNSAFE = /[^A-Za-z0-9_-]/gu;

/** Replaces every code point outside `[A-Za-z0-9_-]` with `_`. */
export function sanitizeName(raw: string): string {
  return raw.replace(UNSAFE, "_");
}

/**
 * Short hash of the full original `(server, name)` pair: 8 hex digits of SHA-256.
 * `salt` > 0 is only used to resolve pathological clashes.
 */
export function nameHash(server: string, originalName: string, salt = 0): string {
  const hash = createHash("sha256").update(server).update("\0").update(originalName);
  if (salt > 0) hash.update(`\0${salt}`);
  return hash.digest("hex").slice(0, HASH_LENGTH);
}

/**
 * The plain exposed form: `prefix__name`, or the sanitised name alone when `prefix` is `""`.
 * May be empty or longer than 64; {@link assignNames} decides whether it can be used as is.
 *
 * @example plainName("git.hub", "search.code") // "git_hub__search_code"
 */
export function plainName(prefix: string, originalName: string): string {
  const name = sanitizeName(originalName);
  return prefix === "" ? name : sanitizeName(prefix) + PREFIX_SEPARATOR + name;
}

/** The hashed exposed form: `plain` truncated so that `plain_hash` fits in 64 characters. */
export function hashedName(plain: string, hash: string): string {
  return `${plain.slice(0, MAX_EXPOSED_NAME_LENGTH - HASH_LENGTH - 1)}_${hash}`;
}

/** One `(server, original name)` pair to be named. `hash` is a memo filled in on first need. */
export interface NameCandidate {
  readonly server: string;
  readonly originalName: string;
  /** {@link plainName} of the pair. */
  readonly plain: string;
  hash?: string;
}

/** One member of a reported naming collision. */
export interface CollisionMember {
  server: string;
  originalName: string;
  exposedName: string;
}

/** Pairs that wanted the same exposed name; `name` is the contested name. */
export interface NameCollision {
  name: string;
  members: CollisionMember[];
}

/** Result of {@link assignNames}: `names[i]` is the exposed name of `candidates[i]`. */
export interface NameAssignment {
  names: string[];
  collisions: NameCollision[];
}

function hashOf(c: NameCandidate): string {
  if (c.hash === undefined) c.hash = nameHash(c.server, c.originalName);
  return c.hash;
}

function byKey(a: NameCandidate, b: NameCandidate): number {
  if (a.server !== b.server) return a.server < b.server ? -1 : 1;
  if (a.originalName !== b.originalName) return a.originalName < b.originalName ? -1 : 1;
  return 0;
}

/**
 * Gives every candidate its exposed name, following the rule described at the top of this module.
 * The result does not depend on the order of `candidates` (each name is a function of the set).
 * Candidates must be distinct `(server, originalName)` pairs. Linear in the number of candidates.
 */
export function assignNames(candidates: readonly NameCandidate[]): NameAssignment {
  const plainCount = new Map<string, number>();
  for (const c of candidates) plainCount.set(c.plain, (plainCount.get(c.plain) ?? 0) + 1);

  const names = candidates.map((c) => {
    const usable = c.plain.length > 0 && c.plain.length <= MAX_EXPOSED_NAME_LENGTH;
    return usable && plainCount.get(c.plain) === 1 ? c.plain : hashedName(c.plain, hashOf(c));
  });

  const owners = new Map<string, number[]>();
  names.forEach((name, i) => {
    const list = owners.get(name);
    if (list === undefined) owners.set(name, [i]);
    else list.push(i);
  });

  const collisions: NameCollision[] = [];
  const clashes = [...owners].filter(([, list]) => list.length > 1).sort(([a], [b]) => (a < b ? -1 : 1));
  for (const [name, list] of clashes) {
    list.sort((i, j) => byKey(candidates[i]!, candidates[j]!));
    for (const i of list.slice(1)) {
      const c = candidates[i]!;
      let salt = 1;
      let next = hashedName(c.plain, nameHash(c.server, c.originalName, salt));
      while (owners.has(next)) next = hashedName(c.plain, nameHash(c.server, c.originalName, ++salt));
      owners.set(next, [i]);
      names[i] = next;
    }
    collisions.push({ name, members: list.map((i) => member(candidates[i]!, names[i]!)) });
  }

  const groups = new Map<string, number[]>();
  candidates.forEach((c, i) => {
    if ((plainCount.get(c.plain) ?? 0) < 2) return;
    const list = groups.get(c.plain);
    if (list === undefined) groups.set(c.plain, [i]);
    else list.push(i);
  });
  for (const [name, list] of groups) {
    list.sort((i, j) => byKey(candidates[i]!, candidates[j]!));
    collisions.push({ name, members: list.map((i) => member(candidates[i]!, names[i]!)) });
  }
  collisions.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { names, collisions };
}

function member(c: NameCandidate, exposedName: string): CollisionMember {
  return { server: c.server, originalName: c.originalName, exposedName };
}

/**
 * The servers that may own an exposed name, read from the name alone (before any server has
 * listed its tools): those whose prefix, followed by `__`, begins it. Usually one; several
 * when one prefix begins another (`a` and `a__b`: the name may be either's, or contested).
 * `undefined` when the name cannot tell: a server without prefix (`""`) may expose any name,
 * and a hashed name may have cut into its prefix.
 *
 * @example ownersOfName("github__search", [{ name: "github" }, { name: "fs" }]) // ["github"]
 */
export function ownersOfName(
  exposedName: string,
  servers: ReadonlyArray<{ name: string; prefix?: string }>,
): string[] | undefined {
  const owners: string[] = [];
  for (const server of servers) {
    const prefix = sanitizeName(server.prefix ?? server.name);
    if (prefix === "") return undefined;
    if (exposedName.startsWith(prefix + PREFIX_SEPARATOR)) owners.push(server.name);
  }
  return owners.length === 0 ? undefined : owners;
}
