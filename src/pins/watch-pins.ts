import { type FSWatcher, watch } from "node:fs";
import { basename, dirname } from "node:path";

/**
 * Calls `onChange` (debounced) when the lock file at `path` is written, by this process or
 * another (`mcplex trust` while `serve` runs): the caller re-reads it (`hub.reloadPins()`, which
 * does nothing when the content is what it holds already). The directory is watched, since an
 * atomic write replaces the file by rename, which ends a watch on the file itself.
 */
export function watchPins(path: string, onChange: () => void, debounceMs = 100): { close(): void } {
  const name = basename(path);
  let timer: NodeJS.Timeout | undefined;
  const watcher: FSWatcher = watch(dirname(path), (_event, changed) => {
    if (changed !== null && changed !== name) return;
    clearTimeout(timer);
    timer = setTimeout(onChange, debounceMs);
  });
  return {
    close() {
      clearTimeout(timer);
      watcher.close();
    },
  };
}
