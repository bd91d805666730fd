import type { Catalog } from "../../catalog/catalog.js";
import { UI_EXTENSION } from "../../ext/apps/apps-extension.js";
import type { JsonObject } from "../../hub/call-pipeline.js";
import { SKILLS_EXTENSION } from "../../protocol/extensions.js";
import { REV2026_PROTOCOL_VERSIONS } from "../../protocol/rev2026.js";
import { TASKS_EXTENSION } from "../../protocol/tasks.js";
import type { MethodHandlers } from "./method-handler.js";

/** `ping`, and 2026's `server/discover`: what the gateway serves, to the caller's profile. */
export const DISCOVER_METHODS: MethodHandlers = {
  ping: async () => ({}),
  "server/discover": async (request, { hub, identity, tasks }) => {
    const profile = request.context.profile;
    const capabilities = serverCapabilities(true, servedExtensions(hub.catalog, profile));
    // Declared while a server the caller reaches may create tasks: the gateway carries them.
    if (tasks.extended(profile))
      capabilities.extensions = {
        ...(capabilities.extensions as Record<string, unknown> | undefined),
        [TASKS_EXTENSION]: {},
      };
    const result: JsonObject = { supportedVersions: [...REV2026_PROTOCOL_VERSIONS], capabilities };
    if (identity.instructions !== undefined) result.instructions = identity.instructions;
    return result;
  },
};

/**
 * The capabilities the gateway serves: the core ones are fixed (the catalog may change; they do
 * not), the extensions are those its servers declare (see {@link servedExtensions}).
 */
export function serverCapabilities(
  stateless: boolean,
  extensions?: Record<string, unknown>,
): Record<string, unknown> {
  const capabilities: Record<string, unknown> = {
    tools: { listChanged: true },
    resources: { subscribe: true, listChanged: true },
    prompts: { listChanged: true },
    completions: {},
  };
  if (!stateless) capabilities.logging = {};
  if (extensions !== undefined) capabilities.extensions = extensions;
  return capabilities;
}

/**
 * The extensions the gateway declares, from those of the servers `profile` reaches: skills
 * when one of them serves skills (with `directoryRead` only when every one of them reads
 * directories, since `resources/directory/read` may go to any), and MCP Apps with the first
 * declaring server's settings. `undefined` when none declares either.
 */
export function servedExtensions(catalog: Catalog, profile?: string): Record<string, unknown> | undefined {
  const served: Record<string, unknown> = {};
  const skills = catalog.extensionServers(SKILLS_EXTENSION, profile);
  if (skills.length > 0)
    served[SKILLS_EXTENSION] = skills.every((s) => s.settings.directoryRead === true)
      ? { directoryRead: true }
      : {};
  const apps = catalog.extensionServers(UI_EXTENSION, profile);
  if (apps.length > 0) served[UI_EXTENSION] = apps[0]!.settings;
  return Object.keys(served).length === 0 ? undefined : served;
}
