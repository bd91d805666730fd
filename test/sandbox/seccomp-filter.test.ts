/**
 * The seccomp program's numbers against the kernel's own headers (where this machine has them),
 * its shape, and the refusal on an architecture it has no numbers for. What the filter does to a
 * real process is in sandbox-escape.hostile.test.ts.
 */
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  DENIED_SYSCALLS,
  SECCOMP_ARCHES,
  seccompFilter,
  seccompProgram,
} from "../../src/sandbox/seccomp-filter.js";

const HEADERS: Record<string, string[]> = {
  x64: ["/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm/unistd_64.h"],
  arm64: ["/usr/include/asm-generic/unistd.h"],
};

/** `__NR_name` (or the generic table's `__NR3264_name`) as the header defines it. */
function headerNumbers(text: string): Map<string, number> {
  const numbers = new Map<string, number>();
  for (const match of text.matchAll(/#define __NR(?:3264)?_(\w+)\s+(\d+)\b/g))
    numbers.set(match[1] as string, Number(match[2]));
  return numbers;
}

describe("the seccomp filter", () => {
  for (const [arch, paths] of Object.entries(HEADERS)) {
    const header = paths.find((path) => existsSync(path));
    it.skipIf(header === undefined)(`uses the kernel's numbers for ${arch}`, () => {
      const numbers = headerNumbers(readFileSync(header as string, "utf8"));
      const known = SECCOMP_ARCHES[arch];
      for (const name of DENIED_SYSCALLS) expect(known?.numbers[name], name).toBe(numbers.get(name));
      for (const name of ["clone", "clone3", "unshare"] as const)
        expect(known?.[name], name).toBe(numbers.get(name));
    });
  }

  it("is a whole number of sock_filter instructions, checking the arch first and allowing by default", () => {
    for (const arch of Object.values(SECCOMP_ARCHES)) {
      const program = seccompProgram(arch);
      expect(program.length % 8).toBe(0);
      // ld [4] (the arch), then jeq against the arch's AUDIT_ARCH value.
      expect([program.readUInt16LE(0), program.readUInt32LE(4)]).toEqual([0x20, 4]);
      expect(program.readUInt32LE(12)).toBe(arch.audit);
      // The last two: a deny with EPERM, after the allow that other calls reach.
      expect(program.readUInt32LE(program.length - 4)).toBe(0x00050001);
    }
  });

  it("has none for an architecture it has no numbers for, and says so", () => {
    const refused = seccompFilter("riscv64");
    expect(refused).toMatchObject({ ok: false });
    expect(refused.ok ? "" : refused.reason).toMatch(/no seccomp filter for riscv64.*x64 and arm64/);
  });
});
