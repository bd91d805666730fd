import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Tests spawn real child processes and sockets; two cores, so keep the pool small.
    pool: "forks",
    maxWorkers: 2,
  },
});
