import type { CredentialVault } from "../../credentials/user-credentials.js";
import { ConnectionsClient } from "../../dashboard/connections-client.js";
import {
  type ConnectionsAdmin,
  checkConnected,
  findUser,
  type RevokedServer,
  type RevokeOutcome,
  type UserConnectionsView,
  vaultConnections,
} from "../../dashboard/user-connections.js";
import { McplexError } from "../../errors.js";
import { connectionsListDefinition, connectionsRevokeDefinition } from "../definitions/connections.js";
import { EXIT, UsageError } from "../output.js";
import { parseCommandArgs } from "../parse-command-args.js";

const USAGE = `usage: ${connectionsListDefinition.usage}\n       ${connectionsRevokeDefinition.usage}`;

/** What the command needs besides its arguments: the vault on this machine, for offline use. */
export interface ConnectionsCommandDeps {
  /** Opens the per-user credential vault of `config`'s gateway on this machine. */
  openVault(options: { config?: string }): Promise<CredentialVault>;
}

/**
 * The vault on this machine: the file beside the secret store (`credentials.json`). A gateway
 * with `cluster:` keeps its users' credentials in Redis, which only a running replica reaches.
 */
async function machineVault(options: { config?: string }): Promise<CredentialVault> {
  const { loadConfig } = await import("../../config/load-config.js");
  const config = await loadConfig(options.config === undefined ? {} : { config: options.config });
  if (config.cluster !== undefined) {
    throw new McplexError(
      "INVALID_ARGUMENT",
      `${config.source}: this gateway keeps users' credentials in Redis (cluster:), not on this machine`,
      { hint: "revoke through a running replica: --url https://<gateway> --token <an operator's token>" },
    );
  }
  const { FileCredentialVault } = await import("../../credentials/file-credential-vault.js");
  return new FileCredentialVault();
}

/**
 * `mcplex connections list [--user SUB]` and `mcplex connections revoke --user SUB
 * (--server NAME | --all)`: the users holding per-user connections, and revoking one server's or
 * all of a user's, on the vault on this machine or, with `--url` and an operator's `--token`,
 * on a running gateway (which also revokes at the server and closes live connections).
 * `--user` is the user's subject (`sub`) or the key the vault keeps them under.
 */
export function connectionsCommandWith(deps: ConnectionsCommandDeps): (args: string[]) => Promise<number> {
  return async (args) => {
    const { values, positionals } = await parseCommandArgs(
      {
        name: "connections",
        flags: { ...connectionsListDefinition.flags, ...connectionsRevokeDefinition.flags },
      },
      args,
      { allowPositionals: true },
    );
    const [sub, ...extra] = positionals;
    if ((sub !== "list" && sub !== "revoke") || extra.length > 0) throw new UsageError(USAGE);
    if (values.token !== undefined && values.url === undefined)
      throw new UsageError("--token is for a running gateway: give its --url too");
    const admin: ConnectionsAdmin =
      values.url === undefined
        ? vaultConnections(await deps.openVault(values.config === undefined ? {} : { config: values.config }))
        : new ConnectionsClient(values.url, {
            ...(values.token === undefined ? {} : { token: values.token }),
          });
    const json = values.json === true;
    if (sub === "list") {
      if (values.server !== undefined || values.all === true)
        throw new UsageError("list takes --user only; --server and --all are for revoke");
      const users = await admin.users();
      const shown = values.user === undefined ? users : [findUser(users, values.user)];
      if (json) console.log(JSON.stringify({ users: shown }));
      else printUsers(shown);
      return EXIT.ok;
    }
    if (values.user === undefined) throw new UsageError(`revoke needs --user SUB\n${USAGE}`);
    if ((values.server === undefined) === (values.all !== true))
      throw new UsageError(
        "revoke needs one of --server NAME (one server) or --all (every server of the user)",
      );
    const user = findUser(await admin.users(), values.user);
    if (values.server !== undefined) checkConnected(user, values.server);
    const outcome = await admin.revoke(user.key, values.server);
    if (json) console.log(JSON.stringify({ user: { key: user.key, subject: user.subject }, ...outcome }));
    else printOutcome(user, outcome);
    return outcome.servers.some((s) => s.revocation === "failed") ? EXIT.unavailable : EXIT.ok;
  };
}

/** The command as the CLI runs it. */
export const connectionsCommand = connectionsCommandWith({ openVault: machineVault });

function printUsers(users: readonly UserConnectionsView[]): void {
  if (users.length === 0) {
    console.log("no user has connected a server");
    return;
  }
  for (const user of users) {
    console.log(`${user.subject ?? "(subject unknown)"}  key ${user.key}`);
    const width = Math.max(...user.connections.map((c) => c.server.length));
    for (const c of user.connections)
      console.log(
        `  ${c.server.padEnd(width)}  ${c.kinds.join("+").padEnd(12)}  since ${new Date(c.connectedAt).toISOString()}`,
      );
  }
}

function printOutcome(user: UserConnectionsView, outcome: RevokeOutcome): void {
  const name = user.subject ?? user.key;
  for (const { server, revocation, error } of outcome.servers) {
    const line = `${name} ${server}: ${REVOCATION[revocation]}${error === undefined ? "" : `: ${error}`}`;
    if (revocation === "failed") console.error(line);
    else console.log(line);
  }
  if (outcome.servers.length === 0) console.log(`${name}: nothing was left to revoke`);
}

/** What each revocation means for the person revoking. */
const REVOCATION: Record<RevokedServer["revocation"], string> = {
  revoked: "deleted, and revoked at the server",
  none: "deleted",
  unsupported:
    "deleted; the server offers no revocation, so a token it issued stays valid there until it expires",
  "not-asked":
    "deleted here; not revoked at the server (offline: a token it issued stays valid there until it expires)",
  failed: "deleted, but the server did not revoke it",
};
