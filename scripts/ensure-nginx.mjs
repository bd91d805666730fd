#!/usr/bin/env node
// The cluster tests put a real nginx in front of the replicas (test/support/nginx.ts).
// Installs Debian's nginx with apt-get when it is missing, as root or through passwordless
// sudo; otherwise says what to run. NGINX_PATH points the tests at another nginx.
import { ensureDebianPackage } from "./ensure-debian-package.mjs";

ensureDebianPackage({
  pkg: "nginx",
  binary: "/usr/sbin/nginx",
  envName: "NGINX_PATH",
  purpose: "the cluster tests",
});
