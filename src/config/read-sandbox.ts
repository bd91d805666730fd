import { joinPath } from "./config-issues.js";
import type { SandboxConfig } from "./types.js";
import type { ValueReader } from "./value-reader.js";

/** What `sandbox: true` means: no paths beyond the server's own, no network, and these limits. */
export const SANDBOX_DEFAULTS: SandboxConfig = {
  fs: { read: [], write: [] },
  network: "none",
  memory: 1024 ** 3,
  processes: 256,
  files: 1024,
};

const SANDBOX_KEYS = ["fs", "network", "memory", "processes", "files"];

/**
 * Reads `sandbox:` (a server's or the top-level default): `true` for {@link SANDBOX_DEFAULTS},
 * `false` for none, or a map overriding some of them. `resolvePath` turns the paths absolute
 * (against the config's directory, and `~`), so the sandbox sees the files the person named.
 *
 * @example
 * sandbox: { fs: { read: [~/notes], write: [./out] }, network: [api.github.com], memory: 512MiB }
 */
export function readSandbox(
  reader: ValueReader,
  value: unknown,
  path: string,
  resolvePath: (path: string) => string,
): SandboxConfig | false | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "boolean" || typeof value === "string") {
    const on = reader.boolean(value, path);
    return on === undefined ? undefined : on && SANDBOX_DEFAULTS;
  }
  const node = reader.map(value, path);
  if (node === undefined) return undefined;
  reader.knownKeys(node, path, SANDBOX_KEYS);
  const sandbox: SandboxConfig = { ...SANDBOX_DEFAULTS, fs: { read: [], write: [] } };
  const fs = reader.map(node.fs, joinPath(path, "fs"));
  if (fs !== undefined) {
    reader.knownKeys(fs, joinPath(path, "fs"), ["read", "write"]);
    for (const key of ["read", "write"] as const) {
      const paths = reader.stringList(fs[key], joinPath(joinPath(path, "fs"), key)) ?? [];
      sandbox.fs[key] = paths.map(resolvePath);
    }
  }
  if (node.network !== undefined) {
    const networkPath = joinPath(path, "network");
    if (Array.isArray(node.network)) {
      const hosts = reader.stringList(node.network, networkPath) ?? [];
      hosts.forEach((host, i) => {
        if (!/^(\*\.)?[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9a-fA-F:]+\](:\d{1,5})?$/.test(host))
          reader.fail(
            joinPath(networkPath, i),
            `${JSON.stringify(host)} is not a host; write "api.example.com", "*.example.com" or "127.0.0.1:8080"`,
          );
      });
      sandbox.network = hosts;
    } else {
      const choice = reader.string(node.network, networkPath);
      if (choice === "none" || choice === "all") sandbox.network = choice;
      else if (choice !== undefined)
        reader.fail(
          networkPath,
          `must be "none", "all" or a list of hosts such as [api.github.com], not ${JSON.stringify(choice)}`,
        );
    }
  }
  const memory = reader.byteSize(node.memory, joinPath(path, "memory"));
  if (memory !== undefined) sandbox.memory = memory;
  const processes = reader.count(node.processes, joinPath(path, "processes"));
  if (processes !== undefined) sandbox.processes = processes;
  const files = reader.count(node.files, joinPath(path, "files"), 16);
  if (files !== undefined) sandbox.files = files;
  return sandbox;
}
