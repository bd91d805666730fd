#!/usr/bin/env node
// The cluster tests start a real redis-server on a free loopback port (test/support/redis.ts).
// Installs Debian's redis-server with apt-get when it is missing, as root or through
// passwordless sudo; otherwise says what to run. REDIS_SERVER_PATH points the tests at another.
import { ensureDebianPackage } from "./ensure-debian-package.mjs";

ensureDebianPackage({
  pkg: "redis-server",
  binary: "/usr/bin/redis-server",
  envName: "REDIS_SERVER_PATH",
  purpose: "the cluster tests",
});
