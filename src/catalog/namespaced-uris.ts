/**
 * Skill and app URIs through a gateway. Servers name their skills `skill://<skill-path>/...`
 * and their apps `ui://...`, each in a namespace of its own: two servers may both serve
 * `skill://refunds/SKILL.md`, and they are two skills. Behind one gateway each such URI is
 * given its server's name as a first path segment, `skill://<server>/<original path>`, keeping
 * the scheme (hosts recognise skills and apps by it) and the last segments (a skill's name is
 * the segment before `SKILL.md`). The form is reversible and routes to the named server,
 * listed or not (skills need not be listed). A server with prefix `""` (pass-through) keeps its
 * URIs as they are.
 *
 * Only these schemes are rewritten: other URIs keep the rules of `resource-routing.ts`.
 */

/** Schemes whose URIs are namespaced per server. */
export const NAMESPACED_SCHEMES = ["skill", "ui"] as const;

/** One of {@link NAMESPACED_SCHEMES}. */
export type NamespacedScheme = (typeof NAMESPACED_SCHEMES)[number];

/** The namespaced scheme `uri` is in, if any. */
export function namespacedScheme(uri: string): NamespacedScheme | undefined {
  if (uri.startsWith("skill://")) return "skill";
  if (uri.startsWith("ui://")) return "ui";
  return undefined;
}

/**
 * `uri` as a client of the gateway sees it: a `skill://` or `ui://` URI of a server whose
 * namespace is `namespace` gets it as its first segment; any other URI, or any URI of a
 * server without a namespace, is returned as it is.
 *
 * @example namespaceUri("alpha", "skill://refunds/SKILL.md") // "skill://alpha/refunds/SKILL.md"
 */
export function namespaceUri(namespace: string | undefined, uri: string): string {
  if (namespace === undefined) return uri;
  const scheme = namespacedScheme(uri);
  if (scheme === undefined) return uri;
  return `${scheme}://${encodeURIComponent(namespace)}/${uri.slice(scheme.length + 3)}`;
}

/**
 * Reverses {@link namespaceUri}: the namespace a client's URI names and the server's own URI;
 * `undefined` when `uri` is not a namespaced scheme or names no namespace.
 */
export function parseNamespacedUri(
  uri: string,
): { scheme: NamespacedScheme; namespace: string; uri: string } | undefined {
  const scheme = namespacedScheme(uri);
  if (scheme === undefined) return undefined;
  const rest = uri.slice(scheme.length + 3);
  const slash = rest.indexOf("/");
  if (slash <= 0 || slash === rest.length - 1) return undefined;
  try {
    return {
      scheme,
      namespace: decodeURIComponent(rest.slice(0, slash)),
      uri: `${scheme}://${rest.slice(slash + 1)}`,
    };
  } catch {
    return undefined;
  }
}

type Json = Record<string, unknown>;

/** A copy of `list` with each item's `uri` namespaced, or `list` itself when nothing changes. */
function withUris<T>(list: T, namespace: string, at: (item: Json) => Json | undefined = (i) => i): T {
  if (!Array.isArray(list)) return list;
  let changed = false;
  const out = list.map((item: unknown) => {
    if (typeof item !== "object" || item === null) return item;
    const holder = at(item as Json);
    if (holder === undefined || typeof holder.uri !== "string") return item;
    const uri = namespaceUri(namespace, holder.uri);
    if (uri === holder.uri) return item;
    changed = true;
    if (holder === item) return { ...holder, uri };
    return { ...(item as Json), resource: { ...holder, uri } };
  });
  return (changed ? out : list) as T;
}

/** A skill entry (of `skills/list` or `skills/get`) with its URI and its files' URIs namespaced. */
export function namespaceSkillEntry<T>(entry: T, namespace: string): T {
  if (typeof entry !== "object" || entry === null) return entry;
  const e = entry as Json;
  const out: Json = { ...e };
  if (typeof e.uri === "string") out.uri = namespaceUri(namespace, e.uri);
  if (Array.isArray(e.resources)) out.resources = withUris(e.resources, namespace);
  return out as T;
}

/**
 * A server's result with the skill and app URIs it carries namespaced, by method: resource
 * reads' contents, call results' and prompt messages' resource links and embedded resources,
 * skill entries, directory listings. Results of other methods, and results with nothing to rewrite, are
 * returned as they are (the same object).
 */
export function namespaceResult(method: string, result: Json, namespace: string): Json {
  switch (method) {
    case "tools/call": {
      const content = withUris(result.content, namespace, (item) =>
        item.type === "resource_link" ? item : item.type === "resource" ? (item.resource as Json) : undefined,
      );
      return content === result.content ? result : { ...result, content };
    }
    case "prompts/get": {
      const messages = result.messages;
      if (!Array.isArray(messages)) return result;
      let changed = false;
      const out = messages.map((message: unknown) => {
        const m = message as Json | null;
        const content = m?.content as Json | undefined;
        if (content === undefined || typeof content !== "object") return message;
        const [rewritten] = withUris([content], namespace, (item) =>
          item.type === "resource_link"
            ? item
            : item.type === "resource"
              ? (item.resource as Json)
              : undefined,
        );
        if (rewritten === content) return message;
        changed = true;
        return { ...m, content: rewritten };
      });
      return changed ? { ...result, messages: out } : result;
    }
    case "resources/read": {
      const contents = withUris(result.contents, namespace);
      return contents === result.contents ? result : { ...result, contents };
    }
    case "resources/directory/read": {
      const resources = withUris(result.resources, namespace);
      return resources === result.resources ? result : { ...result, resources };
    }
    case "skills/get":
      return result.skill === undefined
        ? result
        : { ...result, skill: namespaceSkillEntry(result.skill, namespace) };
    default:
      return result;
  }
}

/** Whether `method`'s results may carry URIs {@link namespaceResult} rewrites. */
export function carriesUris(method: string): boolean {
  return (
    method === "tools/call" ||
    method === "prompts/get" ||
    method === "resources/read" ||
    method === "resources/directory/read" ||
    method === "skills/get"
  );
}
