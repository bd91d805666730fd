import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { lstat, mkdir, open, realpath, rename, stat, unlink } from "node:fs/promises";
import path from "node:path";
import { descriptorPath, errnoOf, fsError, notRegular, RACE_RULE, SYMLINK_RULE } from "./fs-checks.js";
import type { ResolvedPath, Sandbox, WriteOptions } from "./sandbox.js";
import { WorkspaceError } from "./workspace-error.js";

const TEMP_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Write `data` to `input` atomically: checks, then a temp file (`O_EXCL|O_NOFOLLOW`) beside the
 * real target, re-checked through its descriptor, then `rename` over the target. Nothing is
 * left behind on failure. Used by {@link Sandbox.writeFile}.
 */
export async function writeFileAtomic(
  sandbox: Sandbox,
  input: string,
  data: string | Uint8Array,
  options: WriteOptions = {},
): Promise<ResolvedPath & { bytes: number; created: boolean }> {
  const lexical = sandbox.resolve(input, "write");
  if (lexical.rel === "") throw notRegular(input, undefined, "the workspace root");
  const { target, parent, missingParents, existing } = await writeTarget(sandbox, input, lexical);
  if (missingParents && !options.createParents) {
    throw new WorkspaceError(
      "not-found",
      `Parent directory of '${input}' does not exist (pass createParents: true to create it)`,
      { path: input },
    );
  }
  if (missingParents) {
    await mkdir(parent, { recursive: true });
    const realParent = await realpath(parent);
    if (realParent !== parent) {
      throw new WorkspaceError(
        "race",
        `Refused '${input}': its parent directory changed while being created`,
        {
          path: input,
          rule: RACE_RULE,
        },
      );
    }
  }
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  const temp = path.join(parent, `.${path.basename(target)}.${randomBytes(6).toString("hex")}.mcplex-tmp`);
  const handle = await open(temp, TEMP_FLAGS, existing?.mode ?? 0o666).catch((error: unknown) => {
    throw fsError(input, error);
  });
  let renamed = false;
  try {
    try {
      await handle.writeFile(bytes);
      await handle.datasync();
      const fdPath = await descriptorPath(handle.fd);
      if (fdPath !== undefined && path.dirname(fdPath) !== parent) {
        throw new WorkspaceError("race", `Refused '${input}': its directory moved during the write`, {
          path: input,
          rule: RACE_RULE,
        });
      }
    } finally {
      await handle.close();
    }
    await rename(temp, target);
    renamed = true;
  } finally {
    if (!renamed) await unlink(temp).catch(() => undefined);
  }
  const rel = sandbox.relOf(target) ?? lexical.rel;
  return { rel, abs: target, bytes: bytes.byteLength, created: existing === undefined };
}

async function writeTarget(
  sandbox: Sandbox,
  input: string,
  lexical: ResolvedPath,
): Promise<{ target: string; parent: string; missingParents: boolean; existing?: { mode: number } }> {
  let st: Awaited<ReturnType<typeof lstat>> | undefined;
  try {
    st = await lstat(lexical.abs);
  } catch (error) {
    const code = errnoOf(error);
    if (code === "ENOTDIR") {
      throw new WorkspaceError("not-a-directory", `Cannot write '${input}': a parent is not a directory`, {
        path: input,
      });
    }
    if (code !== "ENOENT") throw fsError(input, error);
  }
  if (st !== undefined) {
    // realpath resolves every component, the last one included: the write lands where the path really is.
    const real = await realpath(lexical.abs).catch(() => undefined);
    if (real === undefined) {
      throw new WorkspaceError("not-found", `Cannot write '${input}': it is a dangling symlink`, {
        path: input,
      });
    }
    const checked = sandbox.checkReal(input, real, "write");
    const target = await stat(checked.abs);
    if (!target.isFile()) throw notRegular(input, target);
    const parent = path.dirname(checked.abs);
    return { target: checked.abs, parent, missingParents: false, existing: { mode: target.mode & 0o7777 } };
  }
  // New file: resolve the nearest existing ancestor, which must be a directory inside the root.
  const missing: string[] = [path.basename(lexical.abs)];
  let ancestor = path.dirname(lexical.abs);
  let realAncestor: string | undefined;
  while (realAncestor === undefined) {
    try {
      realAncestor = await realpath(ancestor);
    } catch (error) {
      if (errnoOf(error) !== "ENOENT" || ancestor === sandbox.root) throw fsError(input, error);
      missing.unshift(path.basename(ancestor));
      ancestor = path.dirname(ancestor);
    }
  }
  const ancestorRel = sandbox.relOf(realAncestor);
  if (ancestorRel === undefined) {
    throw new WorkspaceError(
      "outside-root",
      `Refused '${input}': its directory resolves to ${realAncestor}, outside the workspace root ${sandbox.root}`,
      { path: input, rule: SYMLINK_RULE },
    );
  }
  if (!(await stat(realAncestor)).isDirectory()) {
    throw new WorkspaceError("not-a-directory", `Cannot write '${input}': a parent is not a directory`, {
      path: input,
    });
  }
  const target = path.join(realAncestor, ...missing);
  sandbox.checkReal(input, target, "write");
  return { target, parent: path.dirname(target), missingParents: missing.length > 1 };
}
