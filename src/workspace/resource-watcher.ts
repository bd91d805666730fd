import { type FSWatcher, watch } from "node:fs";
import path from "node:path";

/** Called with a changed resource's URI and the keys subscribed to it. */
export type ResourceUpdateListener = (uri: string, keys: ReadonlySet<string>) => void;

interface Watched {
  abs: string;
  keys: Set<string>;
}

interface DirWatch {
  watcher: FSWatcher;
  /** Base name → URIs watched in this directory. */
  names: Map<string, Set<string>>;
}

/** Changes closer together than this are reported once. */
const DEBOUNCE_MS = 20;

/**
 * Watches files for resource subscriptions and reports changes on disk. Files are watched
 * through their parent directory, so atomic replacements (rename over the file) are seen too.
 * Subscribers are identified by keys (a connection, or a `subscriptions/listen` request id),
 * so one watcher can serve both protocol generations of a connection.
 *
 * @example
 * const watcher = new ResourceWatcher();
 * watcher.onUpdated((uri) => server.server.sendResourceUpdated({ uri }));
 * watcher.subscribe("legacy", "file:///srv/a.txt", "/srv/a.txt");
 */
export class ResourceWatcher {
  private readonly watched = new Map<string, Watched>();
  private readonly dirs = new Map<string, DirWatch>();
  private readonly listeners = new Set<ResourceUpdateListener>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private closed = false;

  /** Subscribe `key` to changes of the file at `abs`, reported as `uri`. */
  subscribe(key: string, uri: string, abs: string): void {
    if (this.closed) return;
    const existing = this.watched.get(uri);
    if (existing !== undefined) {
      existing.keys.add(key);
      return;
    }
    const dir = path.dirname(abs);
    let dirWatch = this.dirs.get(dir);
    if (dirWatch === undefined) {
      const names = new Map<string, Set<string>>();
      // Not persistent: the connection, not the watcher, keeps the process alive.
      const watcher = watch(dir, { persistent: false }, (_event, name) => {
        if (name === null) {
          for (const uris of names.values()) for (const u of uris) this.schedule(u);
          return;
        }
        const uris = names.get(String(name));
        if (uris !== undefined) for (const u of uris) this.schedule(u);
      });
      watcher.on("error", () => this.dropDir(dir));
      dirWatch = { watcher, names };
      this.dirs.set(dir, dirWatch);
    }
    const base = path.basename(abs);
    let uris = dirWatch.names.get(base);
    if (uris === undefined) {
      uris = new Set();
      dirWatch.names.set(base, uris);
    }
    uris.add(uri);
    this.watched.set(uri, { abs, keys: new Set([key]) });
  }

  /** Remove `key`'s subscription to `uri`, or all of `key`'s subscriptions when `uri` is omitted. */
  unsubscribe(key: string, uri?: string): void {
    const uris = uri === undefined ? [...this.watched.keys()] : [uri];
    for (const u of uris) {
      const entry = this.watched.get(u);
      if (entry === undefined || !entry.keys.delete(key) || entry.keys.size > 0) continue;
      this.watched.delete(u);
      const dir = path.dirname(entry.abs);
      const dirWatch = this.dirs.get(dir);
      const names = dirWatch?.names.get(path.basename(entry.abs));
      names?.delete(u);
      if (names?.size === 0) dirWatch?.names.delete(path.basename(entry.abs));
      if (dirWatch?.names.size === 0) this.dropDir(dir);
    }
  }

  /** Whether anyone is subscribed to `uri`. */
  isWatched(uri: string): boolean {
    return this.watched.has(uri);
  }

  /** Listen for changes; returns the function that stops listening. */
  onUpdated(listener: ResourceUpdateListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stop every watch and timer. Safe to call twice. */
  close(): void {
    this.closed = true;
    for (const dir of [...this.dirs.keys()]) this.dropDir(dir);
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.watched.clear();
    this.listeners.clear();
  }

  private schedule(uri: string): void {
    if (this.timers.has(uri)) return;
    const timer = setTimeout(() => {
      this.timers.delete(uri);
      const entry = this.watched.get(uri);
      if (entry === undefined) return;
      for (const listener of this.listeners) listener(uri, entry.keys);
    }, DEBOUNCE_MS);
    timer.unref();
    this.timers.set(uri, timer);
  }

  private dropDir(dir: string): void {
    const dirWatch = this.dirs.get(dir);
    if (dirWatch === undefined) return;
    this.dirs.delete(dir);
    dirWatch.watcher.close();
  }
}
