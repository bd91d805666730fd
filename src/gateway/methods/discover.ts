import type { Catalog } from "../../catalog/catalog.js";
import { UI_EXTENSION } from "../../ext/apps/apps-extension.js";
import { SKILLS_EXTENSION } from "../../protocol/extensions.js";

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
