#!/usr/bin/env node
// The sandbox tests run stdio servers inside bubblewrap (src/sandbox/). Installs Debian's bubblewrap
// with apt-get when it is missing, as root or through passwordless sudo; otherwise says what to run.
// MCPLEX_BWRAP points the tests (and mcplex) at another bwrap binary.
import { ensureDebianPackage } from "./ensure-debian-package.mjs";

ensureDebianPackage({
  pkg: "bubblewrap",
  binary: "/usr/bin/bwrap",
  envName: "MCPLEX_BWRAP",
  purpose: "the sandbox tests",
});
