import { type FSWatcher, watch } from "node:fs";
import { loadConfig } from "../config/load-config.js";
import type { McplexConfig, ProfileConfig, ServerConfig, UsersConfig } from "../config/types.js";

/** What a reload changes of a running hub (a `Hub` is one). */
export interface ReloadTarget {
  /** Adds the new config's secrets to those redacted. */
  addSecrets(secrets: readonly string[]): void;
  /** Replaces the `available:` definitions. */
  setAvailable(configs: readonly ServerConfig[]): Promise<void>;
  removeServer(name: string): Promise<void>;
  addServer(config: ServerConfig): Promise<void>;
  setUsers(users: UsersConfig | undefined): void;
  setProfiles(profiles: Record<string, ProfileConfig>): void;
  /** Replaces the composite tools (`composites:`). */
  setComposites(composites: McplexConfig["composites"]): void;
}

/** What one reload changed, or why it was refused. */
export type ReloadOutcome =
  | {
      ok: true;
      added: string[];
      removed: string[];
      changed: string[];
      /** The profiles changed (and were applied). */
      profiles: boolean;
      /** The tokens changed: the hub has none, so whoever serves HTTP applies `config.tokens`. */
      tokens: boolean;
      /** The `serve:` block changed: whoever serves applies what it can (the catalog mode). */
      serve: boolean;
      /** `policies:`, `auth.require`, `guardrails:` or `quotas:` changed: whoever built the hub applies them (`setRules`). */
      policies: boolean;
      /** `composites:` changed (and were applied). */
      composites: boolean;
      config: McplexConfig;
    }
  | { ok: false; error: Error };

/** A server's definition as written, for comparing two loads (functions and objects of local servers aside). */
function fingerprint(server: ServerConfig): string {
  return JSON.stringify(server, (_key, value) => (typeof value === "function" ? undefined : value));
}

/**
 * Applies a new config to a running hub: servers added, removed or changed (a changed
 * one is replaced) without touching the others, whose connections and calls go on, and
 * new profiles. Clients hear of it as list changes. Tokens are reported, not applied.
 */
export async function applyConfig(
  hub: ReloadTarget,
  before: McplexConfig,
  after: McplexConfig,
): Promise<ReloadOutcome & { ok: true }> {
  const old = new Map(before.servers.map((s) => [s.name, s]));
  const next = new Map(after.servers.map((s) => [s.name, s]));
  const added: string[] = [];
  const removed: string[] = [];
  const changed: string[] = [];
  for (const [name, server] of old) {
    const replacement = next.get(name);
    if (replacement === undefined) removed.push(name);
    else if (fingerprint(replacement) !== fingerprint(server)) changed.push(name);
  }
  for (const name of next.keys()) if (!old.has(name)) added.push(name);
  // Before any new server can fail and print a secret of the new config.
  hub.addSecrets(after.secrets);
  // First: a server moved from `available:` to `servers:` stops before it is added again.
  if (JSON.stringify(after.available ?? []) !== JSON.stringify(before.available ?? []))
    await hub.setAvailable(after.available ?? []);
  for (const name of [...removed, ...changed]) await hub.removeServer(name);
  await Promise.all([...changed, ...added].map((name) => hub.addServer(next.get(name)!)));
  hub.setUsers(after.users);
  const profiles = JSON.stringify(after.profiles) !== JSON.stringify(before.profiles);
  if (profiles) hub.setProfiles(after.profiles);
  const composites = JSON.stringify(after.composites ?? {}) !== JSON.stringify(before.composites ?? {});
  if (composites) hub.setComposites(after.composites);
  const tokens = JSON.stringify(after.tokens) !== JSON.stringify(before.tokens);
  const serve = JSON.stringify(after.serve ?? {}) !== JSON.stringify(before.serve ?? {});
  const rules = (config: McplexConfig) =>
    JSON.stringify([
      config.policies ?? [],
      config.auth?.require ?? [],
      config.guardrails ?? [],
      config.quotas ?? [],
    ]);
  const policies = rules(after) !== rules(before);
  return { ok: true, added, removed, changed, profiles, tokens, serve, policies, composites, config: after };
}

/**
 * Watches the config file of a running hub and applies each saved version. A file that
 * does not load (syntax, a missing variable) is reported and changes nothing.
 */
export function watchConfig(
  hub: ReloadTarget,
  initial: McplexConfig,
  /** Told of each reload; the next waits for what it returns (the reload's own work done). */
  onReload: (outcome: ReloadOutcome) => void | Promise<void>,
  options: { debounceMs?: number; transform?: (config: McplexConfig) => McplexConfig } = {},
): { close(): void } {
  let current = initial;
  let timer: NodeJS.Timeout | undefined;
  let running = Promise.resolve();
  const reload = () => {
    running = running.then(async () => {
      try {
        const loaded = await loadConfig({ config: initial.source });
        const next = options.transform === undefined ? loaded : options.transform(loaded);
        const outcome = await applyConfig(hub, current, next);
        current = next;
        const servers = outcome.added.length + outcome.removed.length + outcome.changed.length;
        if (
          servers > 0 ||
          outcome.profiles ||
          outcome.tokens ||
          outcome.serve ||
          outcome.policies ||
          outcome.composites
        )
          await onReload(outcome);
      } catch (error) {
        await onReload({ ok: false, error: error as Error });
      }
    });
  };
  // Editors save by rename, which ends a file watch: watch the directory, filter the name.
  const file = initial.source;
  const slash = file.lastIndexOf("/");
  const dir = slash === -1 ? "." : file.slice(0, slash) || "/";
  const name = file.slice(slash + 1);
  const watcher: FSWatcher = watch(dir, (_event, changedName) => {
    if (changedName !== null && changedName !== name) return;
    clearTimeout(timer);
    timer = setTimeout(reload, options.debounceMs ?? 200);
  });
  return {
    close() {
      clearTimeout(timer);
      watcher.close();
    },
  };
}
