import { endianness } from "node:os";

/**
 * The seccomp filter every sandboxed server runs under, given to bwrap with `--seccomp FD`: a
 * classic-BPF program (an array of `struct sock_filter`) that answers EPERM to the system calls
 * below and lets the rest through. It is built here, in TypeScript, because no maintained npm
 * package builds one without native code; the program is the product, so it is kept small
 * enough to read whole (see {@link seccompProgram}).
 */

/**
 * System calls a server has no use for and that reach past its namespaces: other processes'
 * memory (ptrace and its kin), the kernel keyring (not namespaced: it holds other sessions'
 * keys), mounting and changing root, entering other namespaces, and the kernel's larger attack
 * surfaces (eBPF, perf, userfaultfd, io_uring, modules, kexec). Most also need a capability the
 * sandbox has dropped; the filter refuses them before the kernel looks. New user namespaces
 * (where a process would get capabilities back) are refused too: `unshare` and `clone` when
 * their flags ask for one, and `clone3` outright (ENOSYS: its flags are out of a filter's reach,
 * and libc then falls back to `clone`).
 */
export const DENIED_SYSCALLS = [
  "ptrace",
  "process_vm_readv",
  "process_vm_writev",
  "kcmp",
  "keyctl",
  "add_key",
  "request_key",
  "mount",
  "umount2",
  "pivot_root",
  "chroot",
  "open_tree",
  "move_mount",
  "fsopen",
  "fsconfig",
  "fsmount",
  "fspick",
  "mount_setattr",
  "setns",
  "bpf",
  "perf_event_open",
  "userfaultfd",
  "io_uring_setup",
  "io_uring_enter",
  "io_uring_register",
  "kexec_load",
  "kexec_file_load",
  "init_module",
  "finit_module",
  "delete_module",
  "reboot",
  "swapon",
  "swapoff",
  "acct",
  "syslog",
  "quotactl",
  "quotactl_fd",
  "open_by_handle_at",
  "iopl",
  "ioperm",
] as const;

/** A denied system call's name. */
export type DeniedSyscall = (typeof DENIED_SYSCALLS)[number];

/** One architecture: its `AUDIT_ARCH_*` value and its numbers of the denied calls (absent: no such call). */
export interface SeccompArch {
  audit: number;
  numbers: Partial<Record<DeniedSyscall, number>>;
  /** Numbers at or above this are another ABI of the same arch (x86_64's x32): refused whole. */
  abiLimit?: number;
  /** The calls that can ask for a new user namespace, refused when they do. */
  clone: number;
  clone3: number;
  unshare: number;
}

/** From the kernel's `asm/unistd_64.h` (x86_64) and `asm-generic/unistd.h` (aarch64). */
export const SECCOMP_ARCHES: Record<string, SeccompArch> = {
  x64: {
    audit: 0xc000003e, // AUDIT_ARCH_X86_64: EM_X86_64 | 64-bit | little-endian
    abiLimit: 0x40000000, // __X32_SYSCALL_BIT
    clone: 56,
    clone3: 435,
    unshare: 272,
    numbers: {
      ptrace: 101,
      process_vm_readv: 310,
      process_vm_writev: 311,
      kcmp: 312,
      keyctl: 250,
      add_key: 248,
      request_key: 249,
      mount: 165,
      umount2: 166,
      pivot_root: 155,
      chroot: 161,
      open_tree: 428,
      move_mount: 429,
      fsopen: 430,
      fsconfig: 431,
      fsmount: 432,
      fspick: 433,
      mount_setattr: 442,
      setns: 308,
      bpf: 321,
      perf_event_open: 298,
      userfaultfd: 323,
      io_uring_setup: 425,
      io_uring_enter: 426,
      io_uring_register: 427,
      kexec_load: 246,
      kexec_file_load: 320,
      init_module: 175,
      finit_module: 313,
      delete_module: 176,
      reboot: 169,
      swapon: 167,
      swapoff: 168,
      acct: 163,
      syslog: 103,
      quotactl: 179,
      quotactl_fd: 443,
      open_by_handle_at: 304,
      iopl: 172,
      ioperm: 173,
    },
  },
  arm64: {
    audit: 0xc00000b7, // AUDIT_ARCH_AARCH64: EM_AARCH64 | 64-bit | little-endian
    clone: 220,
    clone3: 435,
    unshare: 97,
    numbers: {
      ptrace: 117,
      process_vm_readv: 270,
      process_vm_writev: 271,
      kcmp: 272,
      keyctl: 219,
      add_key: 217,
      request_key: 218,
      mount: 40,
      umount2: 39,
      pivot_root: 41,
      chroot: 51,
      open_tree: 428,
      move_mount: 429,
      fsopen: 430,
      fsconfig: 431,
      fsmount: 432,
      fspick: 433,
      mount_setattr: 442,
      setns: 268,
      bpf: 280,
      perf_event_open: 241,
      userfaultfd: 282,
      io_uring_setup: 425,
      io_uring_enter: 426,
      io_uring_register: 427,
      kexec_load: 104,
      kexec_file_load: 294,
      init_module: 105,
      finit_module: 273,
      delete_module: 106,
      reboot: 142,
      swapon: 224,
      swapoff: 225,
      acct: 89,
      syslog: 116,
      quotactl: 60,
      quotactl_fd: 443,
      open_by_handle_at: 265,
    },
  },
};

// Classic BPF, as <linux/filter.h> and <linux/seccomp.h> spell it.
const BPF_LD_W_ABS = 0x20; // BPF_LD | BPF_W | BPF_ABS
const BPF_JEQ_K = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const BPF_JGE_K = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const BPF_JSET_K = 0x45; // BPF_JMP | BPF_JSET | BPF_K
const BPF_RET_K = 0x06; // BPF_RET | BPF_K
const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;
const CLONE_NEWUSER = 0x10000000;
// struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6] (low half first).
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const OFFSET_ARG0 = 16;

/** An instruction whose jumps name their targets; {@link assemble} turns them into offsets. */
type Step = { code: number; k: number; jt?: string; jf?: string; label?: string };

function assemble(steps: Step[]): Buffer {
  const at = new Map(steps.flatMap((step, i) => (step.label === undefined ? [] : [[step.label, i]])));
  const offset = (from: number, label: string | undefined): number => {
    if (label === undefined) return 0;
    const to = at.get(label);
    if (to === undefined || to <= from || to - from - 1 > 255)
      throw new Error(`bad seccomp jump to ${label}`);
    return to - from - 1;
  };
  const bytes = Buffer.alloc(steps.length * 8);
  steps.forEach((step, i) => {
    bytes.writeUInt16LE(step.code, i * 8);
    bytes.writeUInt8(offset(i, step.jt), i * 8 + 2);
    bytes.writeUInt8(offset(i, step.jf), i * 8 + 3);
    bytes.writeUInt32LE(step.k >>> 0, i * 8 + 4);
  });
  return bytes;
}

/**
 * The program for one architecture (`struct sock_filter` is 8 bytes: u16 code, u8 jt, u8 jf,
 * u32 k, little-endian on both arches here):
 *
 *     load arch;  arch != ARCH: EPERM        (x86_64's i386 calls through int 0x80 land here)
 *     load nr;    nr >= abiLimit: EPERM      (x32, where the arch has one)
 *     nr is a denied call: EPERM
 *     nr is clone3: ENOSYS                   (its flags are behind a pointer; libc falls back to clone)
 *     nr is clone or unshare, and arg0 has CLONE_NEWUSER: EPERM
 *     ALLOW
 */
export function seccompProgram(arch: SeccompArch): Buffer {
  const deny = "deny";
  const steps: Step[] = [
    { code: BPF_LD_W_ABS, k: OFFSET_ARCH },
    { code: BPF_JEQ_K, k: arch.audit, jf: deny },
    { code: BPF_LD_W_ABS, k: OFFSET_NR },
  ];
  if (arch.abiLimit !== undefined) steps.push({ code: BPF_JGE_K, k: arch.abiLimit, jt: deny });
  for (const nr of new Set(Object.values(arch.numbers))) steps.push({ code: BPF_JEQ_K, k: nr, jt: deny });
  steps.push(
    { code: BPF_JEQ_K, k: arch.clone3, jt: "enosys" },
    { code: BPF_JEQ_K, k: arch.unshare, jt: "flags" },
    { code: BPF_JEQ_K, k: arch.clone, jt: "flags" },
    { code: BPF_RET_K, k: SECCOMP_RET_ALLOW },
    { code: BPF_LD_W_ABS, k: OFFSET_ARG0, label: "flags" },
    { code: BPF_JSET_K, k: CLONE_NEWUSER, jt: deny },
    { code: BPF_RET_K, k: SECCOMP_RET_ALLOW },
    { code: BPF_RET_K, k: SECCOMP_RET_ERRNO | ENOSYS, label: "enosys" },
    { code: BPF_RET_K, k: SECCOMP_RET_ERRNO | EPERM, label: deny },
  );
  return assemble(steps);
}

/**
 * The filter for the machine mcplex runs on, or why there is none: seccomp numbers differ per
 * architecture, and only the ones above are known here.
 */
export function seccompFilter(
  arch: string = process.arch,
): { ok: true; program: Buffer } | { ok: false; reason: string } {
  const known = SECCOMP_ARCHES[arch];
  if (known === undefined || endianness() !== "LE")
    return {
      ok: false,
      reason: `mcplex has no seccomp filter for ${arch} (${endianness()}), only for ${Object.keys(SECCOMP_ARCHES).join(" and ")}`,
    };
  return { ok: true, program: seccompProgram(known) };
}
