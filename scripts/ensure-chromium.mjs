#!/usr/bin/env node
// The dashboard's browser tests drive Debian's Chromium (packages chromium and
// chromium-driver are not needed: playwright-core talks to it directly). Installs it with
// apt-get when it is missing, as root or through passwordless sudo; otherwise says what to
// run. CHROMIUM_PATH points the tests at another Chromium.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

const path = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
if (existsSync(path)) process.exit(0);
if (process.env.CHROMIUM_PATH !== undefined) {
  console.error(`CHROMIUM_PATH is ${path}, which does not exist: point it at a Chromium binary, or unset it.`);
  process.exit(1);
}

const root = typeof process.getuid === "function" && process.getuid() === 0;
const sudo = root ? [] : ["sudo", "-n"];
const run = (args, env = {}) =>
  execFileSync(sudo.length > 0 ? sudo[0] : args[0], sudo.length > 0 ? [...sudo.slice(1), ...args] : args.slice(1), {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, ...env },
  });
try {
  console.error("Installing Debian's chromium for the dashboard's browser tests (apt-get)...");
  run(["apt-get", "update", "-qq"]);
  run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium"], {
    DEBIAN_FRONTEND: "noninteractive",
  });
} catch (error) {
  console.error(
    `Could not install chromium (${error.message.split("\n")[0]}).\n` +
      "The dashboard's browser tests need it: run `sudo apt-get install chromium`, " +
      "or set CHROMIUM_PATH to a Chromium binary.",
  );
  process.exit(1);
}
if (!existsSync(path)) {
  console.error(`apt-get installed chromium, but ${path} is not there: set CHROMIUM_PATH to its binary.`);
  process.exit(1);
}
