import { namespacedScheme, namespaceUri } from "./namespaced-uris.js";
import type { UriTemplateMatcher } from "./resource-routing.js";
import { qualifyUri } from "./resource-routing.js";
import type { ServerSlot } from "./server-slot.js";
import { assignNames, type NameCandidate } from "./tool-naming.js";
import { overriddenTool, renameOf } from "./tool-overrides.js";
import type {
  CatalogCollision,
  CatalogPrompt,
  CatalogResource,
  CatalogResourceTemplate,
  CatalogTool,
} from "./types.js";

/** The merged view over all servers, rebuilt (linearly) after any change. */
export interface CatalogIndex {
  tools: CatalogTool[];
  toolsByName: Map<string, CatalogTool>;
  /** Tools of servers with MCP Apps, by the server's own name (an app calls them by it). */
  appToolsByOriginalName: Map<string, CatalogTool[]>;
  prompts: CatalogPrompt[];
  promptsByName: Map<string, CatalogPrompt>;
  resources: CatalogResource[];
  /** By exposed URI (unique raw URIs and qualified forms). */
  resourcesByUri: Map<string, CatalogResource>;
  /** By original URI, every server listing it, in server order. */
  resourcesByOriginalUri: Map<string, CatalogResource[]>;
  resourceTemplates: CatalogResourceTemplate[];
  templateMatchers: UriTemplateMatcher[];
  collisions: CatalogCollision[];
}

/** Copies the keys of `from` that are defined; keeps entries free of `key: undefined`. */
function defined<T extends object, K extends keyof T>(from: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const k of keys) if (from[k] !== undefined) out[k] = from[k];
  return out;
}

function named<T>(
  slots: readonly ServerSlot[],
  pick: (slot: ServerSlot) => ReadonlyArray<T & { candidate: NameCandidate }>,
) {
  const items = slots.flatMap((slot) => pick(slot).map((item) => ({ slot, item })));
  const assignment = assignNames(items.map(({ item }) => item.candidate));
  return { items, ...assignment };
}

/** Whether a tool has an MCP App (`_meta.ui.resourceUri`, or the older `_meta["ui/resourceUri"]`). */
function hasApp(tool: CatalogTool["tool"]): boolean {
  const meta = tool._meta;
  return (
    typeof (meta?.ui as { resourceUri?: unknown } | undefined)?.resourceUri === "string" ||
    typeof meta?.["ui/resourceUri"] === "string"
  );
}

/**
 * A tool's `_meta` with its app's `ui://` URI namespaced (the current `ui.resourceUri` and the
 * older flat `ui/resourceUri`), or `meta` itself when there is nothing to change.
 */
function appMeta(
  meta: Record<string, unknown>,
  ui: { resourceUri?: unknown } | undefined,
  namespace: string | undefined,
): Record<string, unknown> {
  if (namespace === undefined) return meta;
  let out = meta;
  if (typeof ui?.resourceUri === "string") {
    const uri = namespaceUri(namespace, ui.resourceUri);
    if (uri !== ui.resourceUri) out = { ...out, ui: { ...ui, resourceUri: uri } };
  }
  const flat = meta["ui/resourceUri"];
  if (typeof flat === "string") {
    const uri = namespaceUri(namespace, flat);
    if (uri !== flat) out = { ...out, "ui/resourceUri": uri };
  }
  return out;
}

/** One tool's entry under its exposed name, with its app's URI namespaced and its overrides applied. */
function toolEntry(slot: ServerSlot, item: ServerSlot["tools"][number], name: string): CatalogTool {
  const { tool } = item;
  const entry: CatalogTool = {
    name,
    originalName: tool.name,
    server: slot.server,
    ...defined(tool, ["title", "description"] as const),
    inputSchema: tool.inputSchema,
    ...defined(tool, ["outputSchema", "annotations"] as const),
    available: slot.state === "ready",
    tool,
  };
  if (slot.speaksUris) entry.uriNamespace = slot.namespace!;
  const meta = tool._meta;
  if (meta !== undefined) {
    const ui = meta.ui as { resourceUri?: unknown; visibility?: unknown } | undefined;
    if (Array.isArray(ui?.visibility) && !ui.visibility.includes("model")) entry.appOnly = true;
    const exposed = appMeta(meta, ui, slot.namespace);
    if (exposed !== meta) entry.meta = exposed;
  }
  if (item.overrides === undefined) return entry;
  return overriddenTool(entry, item.overrides, name, renameOf(item.overrides));
}

/**
 * Merges prepared server slots, given in server order, into one index: assigns exposed names,
 * qualifies duplicated URIs and gathers collision records. Linear in the number of entries.
 */
export function buildCatalogIndex(slots: readonly ServerSlot[]): CatalogIndex {
  const collisions: CatalogCollision[] = [];

  const tools = named(slots, (s) => s.tools);
  const toolEntries = tools.items.map(({ slot, item }, i) => toolEntry(slot, item, tools.names[i]!));
  for (const c of tools.collisions) collisions.push({ kind: "tool", ...c });
  const appServers = new Set(toolEntries.filter((t) => hasApp(t.tool)).map((t) => t.server));
  const appToolsByOriginalName = new Map<string, CatalogTool[]>();
  for (const t of toolEntries) {
    if (!appServers.has(t.server)) continue;
    const same = appToolsByOriginalName.get(t.originalName);
    if (same === undefined) appToolsByOriginalName.set(t.originalName, [t]);
    else same.push(t);
  }

  const prompts = named(slots, (s) => s.prompts);
  const promptEntries = prompts.items.map(({ slot, item }, i): CatalogPrompt => {
    const { prompt } = item;
    const entry: CatalogPrompt = {
      name: prompts.names[i]!,
      originalName: prompt.name,
      server: slot.server,
      ...defined(prompt, ["title", "description", "arguments"] as const),
      available: slot.state === "ready",
      prompt,
    };
    if (slot.speaksUris) entry.uriNamespace = slot.namespace!;
    return entry;
  });
  for (const c of prompts.collisions) collisions.push({ kind: "prompt", ...c });

  // A skill or app URI of a server with a namespace is its own (`skill://<server>/...`), never
  // shared: only the others are counted, and qualified when several servers list them.
  const namespaced = (slot: ServerSlot, uri: string) =>
    slot.namespace !== undefined && namespacedScheme(uri) !== undefined;
  const uriCount = new Map<string, number>();
  for (const slot of slots)
    for (const r of slot.resources)
      if (!namespaced(slot, r.uri)) uriCount.set(r.uri, (uriCount.get(r.uri) ?? 0) + 1);
  const resourcesByOriginalUri = new Map<string, CatalogResource[]>();
  const resourceEntries = slots.flatMap((slot) =>
    slot.resources.map((resource): CatalogResource => {
      const own = namespaced(slot, resource.uri);
      const shared = (uriCount.get(resource.uri) ?? 0) > 1;
      const entry: CatalogResource = {
        uri: own
          ? namespaceUri(slot.namespace, resource.uri)
          : shared
            ? qualifyUri(slot.server, resource.uri)
            : resource.uri,
        originalUri: resource.uri,
        server: slot.server,
        name: resource.name,
        ...defined(resource, ["title", "description", "mimeType"] as const),
        available: slot.state === "ready",
        resource,
      };
      if (own) return entry;
      const owners = resourcesByOriginalUri.get(resource.uri);
      if (owners === undefined) resourcesByOriginalUri.set(resource.uri, [entry]);
      else owners.push(entry);
      return entry;
    }),
  );
  for (const [uri, owners] of resourcesByOriginalUri) {
    if (owners.length < 2) continue;
    const members = owners.map((o) => ({ server: o.server, originalName: uri, exposedName: o.uri }));
    collisions.push({ kind: "resource", name: uri, members });
  }

  const templateEntries: CatalogResourceTemplate[] = [];
  const templateMatchers: UriTemplateMatcher[] = [];
  const templateOwners = new Map<string, CatalogResourceTemplate[]>();
  for (const slot of slots) {
    for (const { template, match } of slot.templates) {
      const entry: CatalogResourceTemplate = {
        // A skill or app template expands to URIs under the server's name, as its resources do.
        uriTemplate: namespaceUri(slot.namespace, template.uriTemplate),
        server: slot.server,
        name: template.name,
        ...defined(template, ["title", "description", "mimeType"] as const),
        available: slot.state === "ready",
        resourceTemplate: template,
      };
      templateEntries.push(entry);
      templateMatchers.push(match);
      const owners = templateOwners.get(entry.uriTemplate);
      if (owners === undefined) templateOwners.set(entry.uriTemplate, [entry]);
      else owners.push(entry);
    }
  }
  for (const [uriTemplate, owners] of templateOwners) {
    if (owners.length < 2) continue;
    const members = owners.map((o) => ({
      server: o.server,
      originalName: uriTemplate,
      exposedName: uriTemplate,
    }));
    collisions.push({ kind: "resourceTemplate", name: uriTemplate, members });
  }

  return {
    tools: toolEntries,
    toolsByName: new Map(toolEntries.map((t) => [t.name, t])),
    appToolsByOriginalName,
    prompts: promptEntries,
    promptsByName: new Map(promptEntries.map((p) => [p.name, p])),
    resources: resourceEntries,
    resourcesByUri: new Map(resourceEntries.map((r) => [r.uri, r])),
    resourcesByOriginalUri,
    resourceTemplates: templateEntries,
    templateMatchers,
    collisions,
  };
}
