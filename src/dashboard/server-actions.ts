import type { ServerResponse } from "node:http";
import { McplexError, NotFoundError } from "../errors.js";
import { sendJson } from "../fronts/http-exchange.js";
import type { Hub } from "../hub/hub.js";
import { notFound } from "../servers/lookup-errors.js";

/** What the dashboard's buttons can do to one server. */
export const SERVER_ACTIONS = ["restart", "start", "stop", "enable", "disable", "trust"] as const;
export type ServerAction = (typeof SERVER_ACTIONS)[number];

/** An `available:` server as the dashboard shows it (`available` in `/dashboard/state`). */
export interface AvailableServerView {
  name: string;
  /** Whether it runs now (started on request). */
  connected: boolean;
  /** How many tools it has: live while connected, else as recorded the last time it ran. */
  tools: number;
}

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

/** The `available:` servers `profile` may connect, as the dashboard shows them. */
export async function availableServers(
  hub: Hub,
  profile: string | undefined,
): Promise<AvailableServerView[]> {
  const servers = await hub.availableTools(profile === undefined ? {} : { profile });
  return servers.map((s) => ({ name: s.server, connected: s.connected, tools: s.tools.length }));
}

/**
 * Runs one server action for an admitted caller and answers it: 200 with the server's status
 * afterwards; 403 when the caller's profile does not reach the server (the same answer whether
 * or not it exists, so a profile learns nothing of others' servers); 404 for an unknown action
 * or server; 409 to start or restart a disabled server, or to stop one that is not under
 * `available:`; 502 when the server does not start.
 *
 * `start` connects an `available:` server that is not connected (as `connect_server` does,
 * within the caller's profile); `stop` disconnects one, and is for those servers only (others
 * are turned off with `disable`). `trust` approves a pinned server's tool changes as it lists
 * its tools now (as `mcplex trust SERVER` does); it is for callers without a profile only (an
 * approval holds for every profile), and answers 409 when nothing waits for approval.
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
  const status = hub.servers(profile).find((s) => s.name === server);
  const available = (await hub.availableServers(profile)).includes(server);
  if (profile !== undefined && status === undefined && !available) {
    sendJson(res, 403, {
      error:
        `Forbidden: this token is bound to profile "${profile}", which has no server "${server}"; ` +
        "a profile-bound token acts only on its profile's servers",
    });
    return;
  }
  if (action === "trust" && profile !== undefined) {
    sendJson(res, 403, {
      error:
        `Forbidden: this token is bound to profile "${profile}"; approving a server's changed tools holds for ` +
        "every profile, so it is for operators (a token bound to no profile)",
    });
    return;
  }
  if (action === "stop" && !available) {
    if (status === undefined) sendJson(res, 404, { error: notFound("server", server).message });
    else
      sendJson(res, 409, {
        error: `stop is for servers under "available:" (started on request), and "${server}" is not one; use disable to turn it off`,
        hint: `POST /dashboard/servers/${encodeURIComponent(server)}/disable`,
      });
    return;
  }
  if (status !== undefined && !status.enabled && (action === "start" || action === "restart")) {
    sendJson(res, 409, { error: `server "${server}" is disabled; enable it first` });
    return;
  }
  // An available server not running has no status yet: start connects it.
  const connect = available && !hub.servers().some((s) => s.name === server);
  try {
    await act(hub, server, action as ServerAction, { connect, profile });
  } catch (error) {
    const code = statusOf(error);
    const e = error as McplexError;
    const after = hub.servers(profile).find((s) => s.name === server);
    sendJson(res, code, {
      error: e.message,
      ...(e.hint === undefined ? {} : { hint: e.hint }),
      ...(code === 502 && after !== undefined ? { server: after } : {}),
    });
    return;
  }
  const after =
    action === "stop"
      ? (await availableServers(hub, profile)).find((s) => s.name === server)
      : hub.servers(profile).find((s) => s.name === server);
  sendJson(res, 200, { action, server: after });
}

async function act(
  hub: Hub,
  server: string,
  action: ServerAction,
  options: { connect: boolean; profile: string | undefined },
): Promise<void> {
  const scope = options.profile === undefined ? {} : { profile: options.profile };
  switch (action) {
    case "restart":
      return hub.restartServer(server);
    case "start":
      if (options.connect) await hub.connectServer(server, scope);
      else await hub.startServer(server);
      return;
    case "stop":
      // Stopping one that is not connected leaves it as asked: stopped.
      await hub.disconnectServer(server, scope);
      return;
    case "enable":
      return hub.setServerEnabled(server, true);
    case "disable":
      return hub.setServerEnabled(server, false);
    case "trust":
      await hub.trustTools(server);
      return;
  }
}

/** The HTTP status of an action that failed. */
function statusOf(error: unknown): number {
  if (error instanceof McplexError && error.code === "PIN_NOTHING_TO_TRUST") return 409;
  if (error instanceof NotFoundError || (error instanceof McplexError && error.code === "INVALID_ARGUMENT"))
    return 404;
  return 502;
}
