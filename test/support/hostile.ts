/**
 * The hostile tester's attacks live in `*.hostile.test.ts` files. The normal suite runs each at a
 * size CI can afford; `npm run test:hostile` runs the same files at the tester's size
 * (MCPLEX_HOSTILE=1), and they print what they measured.
 */
export const HOSTILE_FULL = process.env.MCPLEX_HOSTILE === "1";

/** `ci` in the normal suite, `full` under `npm run test:hostile`. */
export function attackSize(ci: number, full: number): number {
  return HOSTILE_FULL ? full : ci;
}

/** A test's timeout: room for the full-size run when it is on. */
export function attackTimeout(ciMs: number, fullMs: number): number {
  return HOSTILE_FULL ? fullMs : ciMs;
}

/** Prints a figure of the full-size run (silent in the normal suite). */
export function reportFigure(attack: string, figure: string): void {
  if (HOSTILE_FULL) console.log(`[hostile] ${attack}: ${figure}`);
}
