import { readFile, stat } from "node:fs/promises";
import { isMap, isScalar, parseDocument as parseYamlDocument, type YAMLMap } from "yaml";
import { ConfigError } from "../errors.js";
import { withFileLock } from "../storage/file-lock.js";
import { writeFileAtomic } from "../storage/write-file-atomic.js";
import { stripJsonComments, syntaxOf } from "./parse-document.js";

/** Options of {@link addServerEntry}. */
export interface AddServerEntryOptions {
  /** A comment written above the entry (YAML files only; JSON has none to spare). */
  comment?: string;
  signal?: AbortSignal;
}

/** What {@link addServerEntry} did. */
export interface AddedServerEntry {
  /** The map the entry went into: `servers` or `mcpServers`. */
  map: "servers" | "mcpServers";
  /** Whether the file was created. */
  created: boolean;
}

/**
 * Adds one server to a config file in place: the rest of the file, comments included, stays as
 * it was. YAML goes through the `yaml` library's Document API; JSON (comments and trailing commas
 * allowed, as VS Code's files have them) gets the entry inserted as text, so nothing else moves.
 * The entry goes into `mcpServers` when the file has that map, else into `servers` (created when
 * missing; a missing file is created as an mcplex.yaml). The write is atomic, under a lock file
 * beside the config, so two `mcplex add` at once both land. A name already in the map is an error.
 *
 * @example
 * await addServerEntry("mcplex.yaml", "memory", { command: "npx", args: ["-y", "pkg@1.0.0"] });
 */
export async function addServerEntry(
  file: string,
  name: string,
  entry: Record<string, unknown> | ((map: AddedServerEntry["map"]) => Record<string, unknown>),
  options: AddServerEntryOptions = {},
): Promise<AddedServerEntry> {
  // The two maps spell some keys differently (mcpServers has `type`, no `sandbox`): the caller
  // shapes the entry once it is known which one it goes into.
  const shape = typeof entry === "function" ? entry : () => entry;
  return withFileLock(`${file}.lock`, async () => {
    const text = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return undefined;
      throw new ConfigError(
        `cannot read ${file}: ${error.message}`,
        { code: "CONFIG_NOT_FOUND" },
        { cause: error },
      );
    });
    const mode = await stat(file).then(
      (s) => s.mode & 0o777,
      () => 0o644,
    );
    const source = text ?? "";
    const edit =
      syntaxOf(file, source) === "json"
        ? addToJson(file, source || "{}\n", name, shape)
        : addToYaml(file, source, name, shape, options.comment);
    await writeFileAtomic(file, edit.text, { mode, ...(options.signal ? { signal: options.signal } : {}) });
    return { map: edit.map, created: text === undefined };
  });
}

interface Edit {
  text: string;
  map: AddedServerEntry["map"];
}

function exists(file: string, map: string, name: string): ConfigError {
  return new ConfigError(`${file} already has a server named "${name}"`, {
    path: `${map}.${name}`,
    hint: "pick another name with --name NAME, or remove the old entry first",
  });
}

function addToYaml(
  file: string,
  text: string,
  name: string,
  shape: (map: AddedServerEntry["map"]) => Record<string, unknown>,
  comment: string | undefined,
): Edit {
  const doc = parseYamlDocument(text);
  if (doc.errors.length > 0)
    throw new ConfigError(`${file} is not valid YAML: ${doc.errors[0]!.message.split("\n")[0]}`, {
      hint: "fix the file (mcplex config check shows where), then run mcplex add again",
    });
  if (doc.contents !== null && !isMap(doc.contents))
    throw new ConfigError(`${file} is not a map of settings`, {
      hint: "an mcplex.yaml starts with servers:",
    });
  const map = doc.has("mcpServers") ? "mcpServers" : "servers";
  let servers = doc.get(map, true);
  if (servers === undefined || servers === null || (isScalar(servers) && servers.value === null)) {
    doc.set(map, doc.createNode({}));
    servers = doc.get(map, true);
  }
  if (!isMap(servers)) throw new ConfigError(`${file}: ${map} is not a map of servers`, { path: map });
  const target = servers as YAMLMap;
  if (target.has(name)) throw exists(file, map, name);
  // `servers: {}` parses as a flow map; the new entry reads better as a block.
  target.flow = false;
  const node = doc.createNode(shape(map));
  const pair = doc.createPair(name, node);
  if (comment !== undefined && isScalar(pair.key)) pair.key.commentBefore = ` ${comment}`;
  target.items.push(pair);
  return { text: doc.toString(), map };
}

/**
 * Inserts the entry as text: the positions come from the text with comments blanked out (same
 * length), so comments elsewhere are never parsed as JSON nor moved.
 */
function addToJson(
  file: string,
  text: string,
  name: string,
  shape: (map: AddedServerEntry["map"]) => Record<string, unknown>,
): Edit {
  const clean = stripJsonComments(text);
  let data: unknown;
  try {
    data = JSON.parse(clean);
  } catch (error) {
    throw new ConfigError(`${file} is not valid JSON: ${(error as Error).message}`, {
      hint: "fix the file (mcplex config check shows where), then run mcplex add again",
    });
  }
  if (typeof data !== "object" || data === null || Array.isArray(data))
    throw new ConfigError(`${file} is not an object of settings`, {
      hint: 'a JSON config starts with {"servers": {}}',
    });
  const root = data as Record<string, unknown>;
  const map = "mcpServers" in root ? "mcpServers" : "servers";
  const servers = root[map];
  if (servers !== undefined && (typeof servers !== "object" || servers === null || Array.isArray(servers)))
    throw new ConfigError(`${file}: ${map} is not an object of servers`, { path: map });
  if (servers !== undefined && name in servers) throw exists(file, map, name);
  const entry = shape(map);
  const objects = topLevelObjects(clean);
  const indent = /\n([ \t]+)"/.exec(text)?.[1] ?? "  ";
  if (servers === undefined) {
    const body = JSON.stringify({ [name]: entry }, null, indent.length).replace(/\n/g, `\n${indent}`);
    return { text: insertMember(text, clean, objects.root, `"${map}": ${body}`, indent, ""), map };
  }
  const at = objects.members.get(map)!;
  const body = JSON.stringify(entry, null, indent.length).replace(/\n/g, `\n${indent}${indent}`);
  return {
    text: insertMember(text, clean, at, `${JSON.stringify(name)}: ${body}`, `${indent}${indent}`, indent),
    map,
  };
}

/** The span of an object: where its `{` and `}` are. */
interface Span {
  open: number;
  close: number;
}

/** The root object's span and the spans of its object-valued members, by key. */
function topLevelObjects(clean: string): { root: Span; members: Map<string, Span> } {
  const members = new Map<string, Span>();
  const stack: number[] = [];
  let root: Span | undefined;
  let lastKey: string | undefined;
  let pendingKey: string | undefined;
  for (let i = 0; i < clean.length; i++) {
    const ch = clean[i];
    if (ch === '"') {
      let j = i + 1;
      while (j < clean.length && clean[j] !== '"') j += clean[j] === "\\" ? 2 : 1;
      if (stack.length === 1) lastKey = JSON.parse(clean.slice(i, j + 1)) as string;
      i = j;
    } else if (ch === ":" && stack.length === 1) {
      pendingKey = lastKey;
    } else if (ch === "{" || ch === "[") {
      stack.push(i);
      if (stack.length === 2 && ch === "{" && pendingKey !== undefined)
        members.set(pendingKey, { open: i, close: -1 });
    } else if (ch === "}" || ch === "]") {
      const open = stack.pop()!;
      if (stack.length === 0) root = { open, close: i };
      if (stack.length === 1 && ch === "}") {
        for (const span of members.values()) if (span.open === open) span.close = i;
        pendingKey = undefined;
      }
    } else if (ch === "," && stack.length === 1) pendingKey = undefined;
  }
  return { root: root!, members };
}

/** Inserts `member` as the last member of the object at `span`, after its last value. */
function insertMember(
  text: string,
  clean: string,
  span: Span,
  member: string,
  indent: string,
  closeIndent: string,
): string {
  let last = span.close - 1;
  while (last > span.open && /\s/.test(clean[last]!)) last--;
  const empty = last === span.open;
  if (empty)
    return `${text.slice(0, span.open + 1)}\n${indent}${member}\n${closeIndent}${text.slice(span.close)}`;
  return `${text.slice(0, last + 1)},\n${indent}${member}${text.slice(last + 1)}`;
}
