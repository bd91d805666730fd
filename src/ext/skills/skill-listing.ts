import type { Catalog } from "../../catalog/catalog.js";
import { namespaceSkillEntry } from "../../catalog/namespaced-uris.js";
import { AbortedError, RpcError } from "../../errors.js";
import { ErrorCode } from "../../protocol/error-codes.js";
import { SKILLS_EXTENSION } from "../../protocol/extensions.js";
import type { SkillCallOptions } from "./skill-reader.js";

type JsonObject = Record<string, unknown>;

/** What {@link listSkills} needs of the hub; `O` is the hub's options of a call. */
export interface SkillListingHost<O extends SkillCallOptions> {
  readonly catalog: Catalog;
  /** Sends a request to one server through the hub's call path (`Hub.forward`). */
  forward(server: string, method: string, params: JsonObject, options: O): Promise<JsonObject>;
}

/** One page of the skills of every server, as a gateway's `skills/list` answers it. */
export interface SkillsPage {
  /** The servers' entries as they listed them, with `skill://` URIs namespaced. */
  skills: JsonObject[];
  /** Where the next page starts; absent on the last page. */
  nextCursor?: string;
  /** The server each entry of {@link skills} came from, in the same order. */
  servers: string[];
}

/** Upstream pages read for one page at most, when they come back empty. */
const MAX_HOPS = 16;

/**
 * One page of the merged skill listing: the servers that declare the skills extension (and that
 * `options.profile` reaches), each paged in turn with its own cursor, one upstream page (never a
 * part of one, so an entry is never split) per page unless it is empty. The cursor names the
 * server and that server's cursor; the profile is applied on every page, so a cursor reaches
 * nothing its holder could not list. Entries keep everything their server wrote (digests and
 * sizes included) except their URIs, namespaced like every `skill://` URI of the server. A
 * server that fails to answer is left out of the listing (a partial listing is allowed), so one
 * broken server never hides the others' skills.
 *
 * @throws RpcError `-32602` for a cursor this listing did not give.
 */
export async function listSkills<O extends SkillCallOptions>(
  host: SkillListingHost<O>,
  options: O & { cursor?: string },
): Promise<SkillsPage> {
  const { cursor: given, ...rest } = options;
  const callOptions = rest as unknown as O;
  const { profile } = callOptions;
  const servers = host.catalog.extensionServers(SKILLS_EXTENSION, profile).map((s) => s.server);
  let index = 0;
  let cursor: string | undefined;
  if (given !== undefined) {
    const at = decodeCursor(given);
    index = at === undefined ? -1 : servers.indexOf(at.server);
    if (at === undefined || index === -1) {
      throw new RpcError(
        ErrorCode.InvalidParams,
        "Invalid params: cursor is not one skills/list gave (or its server is gone); list again without a cursor",
      );
    }
    cursor = at.cursor;
  }
  const page: SkillsPage = { skills: [], servers: [] };
  for (let hops = 0; index < servers.length && hops < MAX_HOPS; hops++) {
    const server = servers[index]!;
    let result: JsonObject | undefined;
    try {
      result = await host.forward(server, "skills/list", cursor === undefined ? {} : { cursor }, callOptions);
    } catch (error) {
      if (callOptions.signal?.aborted === true || error instanceof AbortedError) throw error;
    }
    const namespace = host.catalog.uriNamespace(server);
    for (const entry of Array.isArray(result?.skills) ? (result.skills as unknown[]) : []) {
      const uri = (entry as { uri?: unknown } | null)?.uri;
      if (typeof uri !== "string" || !host.catalog.allowsResource(server, uri, profile)) continue;
      page.skills.push(
        namespace === undefined ? (entry as JsonObject) : namespaceSkillEntry(entry as JsonObject, namespace),
      );
      page.servers.push(server);
    }
    const next = result?.nextCursor;
    if (typeof next === "string" && next !== "" && next !== cursor) cursor = next;
    else {
      index++;
      cursor = undefined;
    }
    if (page.skills.length > 0) break;
  }
  if (index < servers.length) page.nextCursor = encodeCursor(servers[index]!, cursor);
  return page;
}

function encodeCursor(server: string, cursor: string | undefined): string {
  return Buffer.from(JSON.stringify(cursor === undefined ? [server] : [server, cursor])).toString(
    "base64url",
  );
}

function decodeCursor(text: string): { server: string; cursor: string | undefined } | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
    if (!Array.isArray(value) || typeof value[0] !== "string") return undefined;
    if (value.length === 1) return { server: value[0], cursor: undefined };
    return value.length === 2 && typeof value[1] === "string"
      ? { server: value[0], cursor: value[1] }
      : undefined;
  } catch {
    return undefined;
  }
}
