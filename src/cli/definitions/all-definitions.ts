import type { CommandDefinition } from "../command-definition.js";
import { addDefinition } from "./add.js";
import { authDefinition } from "./auth.js";
import { callDefinition } from "./call.js";
import { chatDefinition } from "./chat.js";
import { configDefinition } from "./config.js";
import { connectionsDefinition } from "./connections.js";
import { doctorDefinition } from "./doctor.js";
import { listDefinition } from "./list.js";
import { replayDefinition } from "./replay.js";
import { searchDefinition } from "./search.js";
import { secretsDefinition } from "./secrets.js";
import { serveDefinition } from "./serve.js";
import { trustDefinition } from "./trust.js";
import { workspaceDefinition } from "./workspace.js";

/**
 * Every command, in the order the overview (`mcplex --help`) and docs/reference/cli.md list
 * them: serving first, then looking at and calling tools, then managing the config.
 */
export const ALL_DEFINITIONS: readonly CommandDefinition[] = [
  serveDefinition,
  workspaceDefinition,
  listDefinition,
  callDefinition,
  chatDefinition,
  doctorDefinition,
  configDefinition,
  secretsDefinition,
  authDefinition,
  connectionsDefinition,
  trustDefinition,
  replayDefinition,
  searchDefinition,
  addDefinition,
];
