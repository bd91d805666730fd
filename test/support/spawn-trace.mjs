// `node --import ./test/support/spawn-trace.mjs ...`: the process prints every child it spawns, as
// `spawn <command> <args>` lines on stderr, in order with module-trace.mjs's `module` lines.
import childProcess from "node:child_process";
import { writeSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";

const spawn = childProcess.spawn;
childProcess.spawn = function traced(command, args, ...rest) {
  writeSync(2, `spawn ${[command, ...(Array.isArray(args) ? args : [])].join(" ")}\n`);
  return spawn.call(this, command, args, ...rest);
};
// ES modules that import { spawn } from "node:child_process" see the traced one too.
syncBuiltinESMExports();
