import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Tests spawn real child processes and sockets; two cores, so keep the pool small.
    pool: "forks",
    // Gateways started by tests (in process or as children) check that no listener is left
    // on a finished request's signal (see ClientSession#recycle).
    env: { MCPLEX_CHECK_SIGNALS: "1" },
    maxWorkers: 2,
  },
});
