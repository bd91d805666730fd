import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { RequestContext } from "../../hub/call-pipeline.js";

/** What every handle this gateway mints starts with. */
const PREFIX = "mcplex-task.";
/** Bytes of the HMAC kept in a handle (128 bits: forging one is out of reach). */
const MAC_BYTES = 16;

/**
 * What a handle names: the server that holds the task, its id there, the replica it runs on,
 * and the tool whose call created it.
 */
export interface OpenedHandle {
  readonly server: string;
  readonly taskId: string;
  /** The replica whose connection to the server holds the task; `undefined` for a gateway alone. */
  readonly replica: string | undefined;
  /**
   * The exposed name of the tool whose call created the task: requests about the task need what
   * a call of that tool needs (`auth.require`). `undefined` in a handle minted without it.
   */
  readonly tool: string | undefined;
}

/** Options of {@link TaskHandles}. */
export interface TaskHandlesOptions {
  /** The key handles are signed with. Default: random per process; replicas share one. */
  key?: Buffer;
  /** This replica's id, named in its handles so a request that lands elsewhere comes back here. */
  replica?: string;
}

/**
 * Task handles: what a gateway's client sees in place of the id a server gave a task. The id of
 * one server means nothing to another, and many servers stand behind one gateway, so the handle
 * names the server (and, among replicas, the replica whose connection holds the task). It is
 * bound to the caller it was issued to: its MAC covers the caller (token, signed-in user and
 * profile, see {@link taskOwner}), so a handle that was altered, minted by another gateway, or
 * presented by another caller opens to nothing, and is answered as an unknown task.
 *
 * `mcplex-task.<payload>.<mac>`: the payload is base64url JSON `[server, taskId, replica, tool]`
 * (`replica` null for a gateway alone; a handle of an earlier version may end after `taskId` or
 * `replica`), not secret: the task id alone reaches nothing. The MAC is an HMAC-SHA256 of payload
 * and caller, so the tool a handle names is the one its task was created by.
 *
 * @example
 * const handles = new TaskHandles();
 * const handle = handles.mint("jobs", "786512e2", "token#0|");
 * handles.open(handle, "token#0|"); // { server: "jobs", taskId: "786512e2", replica: undefined, tool: undefined }
 * handles.open(handle, "token#1|"); // undefined
 */
export class TaskHandles {
  readonly #key: Buffer;
  /** This replica's id (see {@link TaskHandlesOptions.replica}). */
  readonly replica: string | undefined;

  constructor(options: TaskHandlesOptions = {}) {
    this.#key = options.key ?? randomBytes(32);
    this.replica = options.replica;
  }

  /**
   * The handle of task `taskId` of `server`, for `owner` (see {@link taskOwner}), created by a
   * call of `tool` (its exposed name).
   */
  mint(server: string, taskId: string, owner: string, tool?: string): string {
    const named: Array<string | null> = [server, taskId];
    if (this.replica !== undefined || tool !== undefined) named.push(this.replica ?? null);
    if (tool !== undefined) named.push(tool);
    const payload = Buffer.from(JSON.stringify(named)).toString("base64url");
    return `${PREFIX}${payload}.${this.#mac(payload, owner).toString("base64url")}`;
  }

  /** What `handle` names, when it was minted with this key for `owner`; else `undefined`. */
  open(handle: string, owner: string): OpenedHandle | undefined {
    if (!handle.startsWith(PREFIX)) return undefined;
    const dot = handle.lastIndexOf(".");
    const payload = handle.slice(PREFIX.length, dot);
    const text = handle.slice(dot + 1);
    const given = Buffer.from(text, "base64url");
    // Only the one spelling minted: base64url's last character has bits a decoder ignores.
    if (dot < PREFIX.length || given.length !== MAC_BYTES || given.toString("base64url") !== text)
      return undefined;
    if (!timingSafeEqual(given, this.#mac(payload, owner))) return undefined;
    let named: unknown;
    try {
      named = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    } catch {
      return undefined;
    }
    if (!Array.isArray(named) || typeof named[0] !== "string" || typeof named[1] !== "string")
      return undefined;
    return {
      server: named[0],
      taskId: named[1],
      replica: typeof named[2] === "string" ? named[2] : undefined,
      tool: typeof named[3] === "string" ? named[3] : undefined,
    };
  }

  /** Whether `value` has the shape of a handle of this gateway (its MAC is not checked). */
  static isHandle(value: unknown): value is string {
    return typeof value === "string" && value.startsWith(PREFIX);
  }

  #mac(payload: string, owner: string): Buffer {
    return createHmac("sha256", this.#key).update(`${payload}\n${owner}`).digest().subarray(0, MAC_BYTES);
  }
}

/**
 * Who a task belongs to: the caller's credential (a static token's `token#<n>`, a signed-in
 * user's key, the same on every replica of one config) and its profile. An anonymous caller
 * (loopback without tokens, stdio) is only its profile: its address changes with the replica a
 * request passes through, as for calls parked on input.
 */
export function taskOwner(ctx: Pick<RequestContext, "identity" | "caller" | "profile">): string {
  const identity = ctx.identity;
  let who = "";
  if (identity !== undefined) who = identity.via === "anonymous" ? "" : identity.key;
  else if (ctx.caller?.startsWith("token#") === true) who = ctx.caller;
  return `${who}|${ctx.profile ?? ""}`;
}
