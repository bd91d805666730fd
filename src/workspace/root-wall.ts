import { constants, realpathSync, statSync } from "node:fs";
import { type FileHandle, open, realpath, stat } from "node:fs/promises";
import path from "node:path";
import {
  descriptorPath,
  errnoOf,
  fsError,
  isInside,
  notRegular,
  RACE_RULE,
  ROOT_RULE,
  SYMLINK_RULE,
} from "./fs-checks.js";
import { type PermissionDecision, Permissions, type WorkspaceOp } from "./permissions.js";
import { WorkspaceError } from "./workspace-error.js";

/** A path inside the root: `rel` is root-relative with POSIX separators (`""` is the root), `abs` absolute. */
export interface ResolvedPath {
  rel: string;
  abs: string;
}

/** A regular file opened for reading after every check passed; the caller closes `handle`. */
export interface OpenedFile extends ResolvedPath {
  handle: FileHandle;
  size: number;
}

const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * The hard wall around the workspace root (path confinement; "sandbox" in mcplex is code mode's
 * QuickJS runtime): turns caller paths into checked absolute paths and opens files for reading;
 * `writeInsideRoot` (`write-inside-root.ts`) writes through it. The root's realpath is taken once;
 * every path is normalised lexically, then resolved with realpath (or its nearest existing
 * parent, for writes) and checked for containment and permission; files are opened with
 * `O_NOFOLLOW` and checked again through the opened descriptor, to defeat races.
 *
 * @example
 * const wall = new RootWall("/srv/project", new Permissions([], false));
 * const file = await wall.openFile("src/index.ts");
 * try { ... } finally { await file.handle.close() }
 */
export class RootWall {
  /** Realpath of the root. */
  readonly root: string;
  readonly permissions: Permissions;
  private readonly givenRoot: string;

  constructor(root: string, permissions: Permissions = new Permissions()) {
    this.givenRoot = path.resolve(root);
    try {
      this.root = realpathSync(this.givenRoot);
    } catch (error) {
      throw new WorkspaceError(
        "not-found",
        `Workspace root ${root} does not exist or cannot be read (${(error as NodeJS.ErrnoException).code})`,
        { path: root, code: "INVALID_ARGUMENT" },
        { cause: error },
      );
    }
    if (!statSync(this.root).isDirectory()) {
      throw new WorkspaceError("not-a-directory", `Workspace root ${root} is not a directory`, {
        path: root,
      });
    }
    this.permissions = permissions;
  }

  /** The root-relative POSIX path of an absolute real path, or `undefined` when it lies outside the root. */
  relOf(abs: string): string | undefined {
    if (abs === this.root) return "";
    const prefix = this.root.endsWith(path.sep) ? this.root : this.root + path.sep;
    if (!abs.startsWith(prefix)) return undefined;
    return abs.slice(prefix.length).split(path.sep).join("/");
  }

  /** The absolute path of a root-relative POSIX path (no checks). */
  absOf(rel: string): string {
    return rel === "" ? this.root : path.join(this.root, ...rel.split("/"));
  }

  /**
   * Normalise `input` lexically (relative to the root; absolute paths must lie inside it) and
   * check `op` on it. Refuses NUL bytes and anything that leaves the root. Touches no disk.
   */
  resolve(input: string, op: WorkspaceOp): ResolvedPath {
    const rel = this.lexicalRel(input);
    this.assertAllowed(input, rel, op);
    return { rel, abs: this.absOf(rel) };
  }

  /** {@link resolve}, then realpath the (existing) path and check containment and `op` on where it really is. */
  async resolveExisting(input: string, op: WorkspaceOp): Promise<ResolvedPath> {
    const lexical = this.resolve(input, op);
    let real: string;
    try {
      real = await realpath(lexical.abs);
    } catch (error) {
      throw fsError(input, error);
    }
    return this.checkReal(input, real, op);
  }

  /** Open a regular file for reading: refuses symlinks leading out, FIFOs, devices, directories and races. */
  async openFile(input: string): Promise<OpenedFile> {
    const target = await this.resolveExisting(input, "read");
    const before = await stat(target.abs).catch((error: unknown) => {
      throw fsError(input, error);
    });
    if (!before.isFile()) throw notRegular(input, before);
    let handle: FileHandle;
    try {
      handle = await open(target.abs, READ_FLAGS);
    } catch (error) {
      if (errnoOf(error) === "ELOOP") {
        throw new WorkspaceError("race", `Refused '${input}': it became a symlink after it was checked`, {
          path: input,
          rule: RACE_RULE,
        });
      }
      throw fsError(input, error);
    }
    try {
      const after = await handle.stat();
      if (!after.isFile()) throw notRegular(input, after);
      if (after.ino !== before.ino || after.dev !== before.dev) {
        throw new WorkspaceError("race", `Refused '${input}': it was replaced after it was checked`, {
          path: input,
          rule: RACE_RULE,
        });
      }
      await this.checkDescriptor(input, handle.fd, "read");
      return { ...target, handle, size: after.size };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** Resolve an existing directory for listing or searching. */
  async openDirectory(input: string): Promise<ResolvedPath> {
    const target = await this.resolveExisting(input, "read");
    const st = await stat(target.abs).catch((error: unknown) => {
      throw fsError(input, error);
    });
    if (!st.isDirectory()) {
      throw new WorkspaceError("not-a-directory", `'${input}' is not a directory`, { path: input });
    }
    return target;
  }

  /** Decide `op` on a root-relative path; throws a {@link WorkspaceError} naming the rule when denied. */
  assertAllowed(input: string, rel: string, op: WorkspaceOp): PermissionDecision {
    const decision = this.permissions.check(rel, op);
    if (!decision.allowed) {
      const shown = rel === "" ? "." : rel;
      const via = rel === input ? "" : ` (resolved to '${shown}')`;
      throw new WorkspaceError(
        "denied",
        `Access denied: ${op} of '${input}'${via} is not allowed by ${decision.rule}`,
        {
          path: input,
          rule: decision.rule,
        },
      );
    }
    return decision;
  }

  private lexicalRel(input: string): string {
    if (input.includes("\0")) {
      throw new WorkspaceError(
        "invalid-path",
        `Refused path ${JSON.stringify(input)}: it contains a NUL byte`,
        {
          path: input,
          rule: "no NUL bytes",
        },
      );
    }
    let rel: string;
    if (path.isAbsolute(input)) {
      const normal = path.resolve(input);
      const fromReal = path.relative(this.root, normal);
      const fromGiven = path.relative(this.givenRoot, normal);
      rel = isInside(fromReal) ? fromReal : fromGiven;
      rel = rel.split(path.sep).join("/");
    } else {
      rel = path.posix.normalize(input === "" ? "." : input);
    }
    if (rel === "." || rel === "./") rel = "";
    rel = rel.replace(/\/+$/, "").replace(/^\.\//, "");
    if (!isInside(rel) || path.posix.isAbsolute(rel)) {
      throw new WorkspaceError(
        "outside-root",
        `Refused '${input}': it is outside the workspace root ${this.root}`,
        {
          path: input,
          rule: ROOT_RULE,
        },
      );
    }
    return rel;
  }

  /** Check containment and `op` on an absolute real path; throws a {@link WorkspaceError} otherwise. */
  checkReal(input: string, real: string, op: WorkspaceOp): ResolvedPath {
    const rel = this.relOf(real);
    if (rel === undefined) {
      throw new WorkspaceError(
        "outside-root",
        `Refused '${input}': it resolves to ${real}, outside the workspace root ${this.root}`,
        { path: input, rule: SYMLINK_RULE },
      );
    }
    this.assertAllowed(input, rel, op);
    return { rel, abs: real };
  }

  /** Re-check an opened descriptor through `/proc/self/fd` (Linux); a no-op where that is unavailable. */
  private async checkDescriptor(input: string, fd: number, op: WorkspaceOp): Promise<void> {
    const real = await descriptorPath(fd);
    if (real !== undefined) this.checkReal(input, real, op);
  }
}
