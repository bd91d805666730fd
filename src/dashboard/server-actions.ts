import type { ServerResponse } from "node:http";
import { McplexError, NotFoundError } from "../errors.js";
import { sendJson } from "../gateway/http-exchange.js";
import type { Hub } from "../hub/hub.js";

/** What the dashboard's buttons can do to one server. */
export const SERVER_ACTIONS = ["restart", "start", "enable", "disable"] as const;
export type ServerAction = (typeof SERVER_ACTIONS)[number];

/** `/dashboard/servers/<name>/<action>`: the server's name (URL-encoded) and the action. */
const ACTION_PATH = /^\/dashboard\/servers\/([^/]+)\/([^/]+)$/;

/** The server and action a path names, or `undefined` when it is no action path. */
export function parseActionPath(path: string): { server: string; action: string } | undefined {
  const match = ACTION_PATH.exec(path);
  if (match === null) return undefined;
  try {
    return { server: decodeURIComponent(match[1]!), action: match[2]! };
  } catch {
    return { server: match[1]!, action: match[2]! };
  }
}

/**
 * Runs one server action for an admitted caller and answers it: 200 with the server's status
 * afterwards; 403 when the caller's profile does not reach the server (the same answer whether
 * or not it exists, so a profile learns nothing of others' servers); 404 for an unknown action
 * or server; 409 to start or restart a disabled
 * server; 502 when the server does not start.
 */
export async function runServerAction(
  hub: Hub,
  res: ServerResponse,
  target: { server: string; action: string },
  profile: string | undefined,
): Promise<void> {
  const { server, action } = target;
  if (!(SERVER_ACTIONS as readonly string[]).includes(action)) {
    sendJson(res, 404, {
      error: `no such server action "${action}"; use one of ${SERVER_ACTIONS.join(", ")}`,
    });
    return;
  }
  if (profile !== undefined && !hub.servers(profile).some((s) => s.name === server)) {
    sendJson(res, 403, {
      error:
        `Forbidden: this token is bound to profile "${profile}", which has no server "${server}"; ` +
        "a profile-bound token acts only on its profile's servers",
    });
    return;
  }
  const status = hub.servers(profile).find((s) => s.name === server);
  if (status !== undefined && !status.enabled && (action === "start" || action === "restart")) {
    sendJson(res, 409, { error: `server "${server}" is disabled; enable it first` });
    return;
  }
  try {
    await act(hub, server, action as ServerAction);
  } catch (error) {
    const status = statusOf(error);
    const e = error as McplexError;
    sendJson(res, status, {
      error: e.message,
      ...(e.hint === undefined ? {} : { hint: e.hint }),
      ...(status === 502 ? { server: hub.servers(profile).find((s) => s.name === server) } : {}),
    });
    return;
  }
  sendJson(res, 200, { action, server: hub.servers(profile).find((s) => s.name === server) });
}

function act(hub: Hub, server: string, action: ServerAction): Promise<void> {
  switch (action) {
    case "restart":
      return hub.restartServer(server);
    case "start":
      return hub.startServer(server);
    case "enable":
      return hub.setServerEnabled(server, true);
    case "disable":
      return hub.setServerEnabled(server, false);
  }
}

/** The HTTP status of an action that failed. */
function statusOf(error: unknown): number {
  if (error instanceof NotFoundError || (error instanceof McplexError && error.code === "INVALID_ARGUMENT"))
    return 404;
  return 502;
}
