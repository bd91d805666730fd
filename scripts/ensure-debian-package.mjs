// Shared by ensure-chromium.mjs, ensure-redis.mjs and ensure-nginx.mjs: installs one Debian package with apt-get
// when its binary is missing, as root or through passwordless sudo; otherwise says what to run.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

/**
 * Makes sure `binary` exists (or the path in `envName`), installing `pkg` when it does not.
 * `purpose` says which tests need it, for the messages.
 */
export function ensureDebianPackage({ pkg, binary, envName, purpose }) {
  const path = process.env[envName] ?? binary;
  if (existsSync(path)) return;
  if (process.env[envName] !== undefined) {
    console.error(`${envName} is ${path}, which does not exist: point it at a ${pkg} binary, or unset it.`);
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
    console.error(`Installing Debian's ${pkg} for ${purpose} (apt-get)...`);
    run(["apt-get", "update", "-qq"]);
    // policy-rc.d-free containers: the package must not try to start a system service.
    run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", pkg], {
      DEBIAN_FRONTEND: "noninteractive",
    });
  } catch (error) {
    console.error(
      `Could not install ${pkg} (${error.message.split("\n")[0]}).\n` +
        `They are for ${purpose}: run \`sudo apt-get install ${pkg}\`, or set ${envName} to its binary.`,
    );
    process.exit(1);
  }
  if (!existsSync(path)) {
    console.error(`apt-get installed ${pkg}, but ${path} is not there: set ${envName} to its binary.`);
    process.exit(1);
  }
}
