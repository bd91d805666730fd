#!/usr/bin/env node
// The dashboard's browser tests drive Debian's Chromium (chromium-driver is not needed:
// playwright-core talks to it directly). Installs it with apt-get when it is missing, as root or
// through passwordless sudo; otherwise says what to run. CHROMIUM_PATH points the tests at another.
import { ensureDebianPackage } from "./ensure-debian-package.mjs";

ensureDebianPackage({
  pkg: "chromium",
  binary: "/usr/bin/chromium",
  envName: "CHROMIUM_PATH",
  purpose: "the dashboard's browser tests",
});
