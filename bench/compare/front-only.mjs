#!/usr/bin/env node
// mcplex's HTTP front alone, for bench:compare: `mcplex serve --http` as it ships (from dist/;
// the dashboard on, as by default) in front of an in-process `echo` tool (bench/echo-hub.mjs), so
// that no upstream hop is in the figure: what the front costs against the bare node:http echo
// doing the same work. Prints `url <url>` once listening.
//   node bench/compare/front-only.mjs [--port P]
import { startEchoHub } from "../echo-hub.mjs";

const dist = new URL("../../dist/", import.meta.url);
const { startHttpFront } = await import(new URL("fronts/http-front.js", dist).href);
const { Gateway } = await import(new URL("gateway/gateway.js", dist).href);
const { dashboardPage } = await import(new URL("dashboard/dashboard.js", dist).href);

const at = process.argv.indexOf("--port");
const front = await startHttpFront(new Gateway(await startEchoHub()), {
  host: "127.0.0.1",
  port: at === -1 ? 0 : Number(process.argv[at + 1]),
  dashboard: dashboardPage,
});
// Stopped by a signal: exits as at the end of a run (so that --cpu-prof writes its profile).
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(0));
console.log(`url ${front.url}`);
