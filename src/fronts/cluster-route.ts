import type { IncomingMessage, ServerResponse } from "node:http";
import { taskOwner } from "../ext/tasks/task-handles.js";
import type { Gateway } from "../gateway/gateway.js";
import type { InputParking } from "../gateway/input-parking.js";
import { ErrorCode } from "../protocol/error-codes.js";
import { targetParamOf } from "../protocol/method-table.js";
import type { Admitted } from "./caller.js";
import type { ClusterLink } from "./cluster-link.js";
import { sendRpcError } from "./http-exchange.js";
import type { RequestDrain } from "./request-drain.js";

/**
 * Sends a 2025 request for another replica's session to that replica (a POST with its body,
 * read and checked here first). Returns `undefined` when
 * the session is this replica's (the front serves it), else the forwarding (or refusal) under
 * way. An id no replica minted is refused 404 and never forwarded; a forwarded request is never
 * forwarded again (its owner no longer has it: 404).
 */
export function routeSession(
  cluster: ClusterLink,
  req: IncomingMessage,
  res: ServerResponse,
  internal: boolean,
  drain: RequestDrain,
  body?: Buffer,
): Promise<void> | undefined {
  const id = req.headers["mcp-session-id"];
  if (typeof id !== "string" || id === "") return undefined;
  const where = cluster.sessions.locate(id);
  if (where.kind === "local") return undefined;
  if (where.kind === "invalid" || internal) {
    sendRpcError(
      res,
      404,
      null,
      ErrorCode.SessionNotFound,
      "Session not found: it expired or was closed; initialize again",
    );
    return Promise.resolve();
  }
  // A graceful close waits for forwarded requests as for its own (a POST is counted already);
  // a GET stream is not waited for.
  if (req.method === "DELETE") res.once("close", drain.enter());
  return cluster.forward(where.replica, req, res, "session", body);
}

/**
 * Sends a 2026 retry (a `requestState` this cluster minted) to the replica where its call is
 * parked; resolves `true` when it did, or answered itself. The state is claimed first, so a
 * replayed one is refused wherever it lands; a state that fails its integrity check is left
 * to the local path, which refuses it (never forwarded).
 */
export function routeRetry(
  cluster: ClusterLink,
  parking: InputParking,
  req: IncomingMessage,
  res: ServerResponse,
  message: { id?: unknown; params?: unknown },
  body: Buffer,
  internal: boolean,
): false | Promise<boolean> {
  // Most requests carry no state of ours: answered without a turn of the event loop.
  const state = (message.params as { requestState?: unknown } | undefined)?.requestState;
  if (internal || !parking.owns(state)) return false;
  let owner: string | undefined;
  try {
    owner = parking.ownerOf(state);
  } catch {
    return false;
  }
  // A used state is remembered as long as its call could still be parked.
  return forwardRetry(cluster, req, res, message, body, state, owner, parking.parkMs);
}

async function forwardRetry(
  cluster: ClusterLink,
  req: IncomingMessage,
  res: ServerResponse,
  message: { id?: unknown },
  body: Buffer,
  state: string,
  owner: string | undefined,
  claimMs: number,
): Promise<boolean> {
  if (!(await cluster.claimState(state, claimMs))) {
    sendRpcError(
      res,
      200,
      message.id,
      ErrorCode.InvalidParams,
      "Invalid params: requestState was already used; call again without it",
    );
    return true;
  }
  if (owner === undefined || owner === cluster.replica) return false;
  await cluster.forward(owner, req, res, "input", body);
  return true;
}

/**
 * Sends a 2026 request about tasks to the replica whose connection to the server holds them:
 * a `task` row's handle (`tasks/get`, `tasks/update`, `tasks/cancel`), or a
 * `subscriptions/listen` whose tasks all live on one other replica. Returns `undefined` when the
 * request is this replica's to serve: no handle of another replica, a handle this caller cannot
 * open (the local path answers it as an unknown task: never forwarded), a listen naming tasks of
 * several replicas (served here, acknowledging this replica's), or a request already forwarded.
 */
export function routeTask(
  cluster: ClusterLink,
  gateway: Gateway,
  req: IncomingMessage,
  res: ServerResponse,
  message: { method?: unknown; params?: unknown },
  body: Buffer,
  caller: Admitted,
  internal: boolean,
): Promise<void> | undefined {
  if (internal || typeof message.method !== "string") return undefined;
  const params = message.params as Record<string, unknown> | undefined;
  const row = gateway.methods.get(message.method);
  let handles: unknown[];
  if (row?.target === "task") handles = [params?.[targetParamOf(row) ?? "taskId"]];
  else if (message.method === "subscriptions/listen") {
    const named = (params?.notifications as { taskIds?: unknown } | undefined)?.taskIds;
    if (!Array.isArray(named) || named.length === 0) return undefined;
    handles = named;
  } else return undefined;
  const owner = taskOwner({ identity: caller.identity, caller: caller.key, profile: caller.profile });
  let replica: string | undefined;
  for (const handle of handles) {
    const opened = typeof handle === "string" ? gateway.tasks.handles.open(handle, owner) : undefined;
    if (opened?.replica === undefined || (replica !== undefined && opened.replica !== replica))
      return undefined;
    replica = opened.replica;
  }
  if (replica === undefined || replica === cluster.replica) return undefined;
  return cluster.forward(replica, req, res, "task", body);
}
