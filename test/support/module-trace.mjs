// `node --import ./test/support/module-trace.mjs ...`: the process prints every module it loads.
import { register } from "node:module";

register(new URL("./module-trace-hooks.mjs", import.meta.url));
