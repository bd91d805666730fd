import type { Hub } from "../dist/hub/hub.js";

/** See echo-hub.mjs: the hub the HTTP benches serve, one in-process `echo` tool, started. */
export function startEchoHub(): Promise<Hub>;
