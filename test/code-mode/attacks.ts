import type { CodeModeErrorCode } from "../../src/code-mode/index.js";

// Scripts a hostile (or confused) model may write, each with what it must get. After every
// attack a clean script checks that nothing of it is left in the next run; at the end a normal
// run with a real tool call checks the host.
// Only the attacks meant to meet the time limit get 250 ms; the others get 10 s, so that they
// meet their own limit first however loaded the machine is.
export const ATTACKS: Array<[name: string, code: string, expected: CodeModeErrorCode | { value: unknown }]> =
  [
    ["infinite loop", "while (true) {}", "CODE_TIMEOUT"],
    [
      "infinite loop in a promise callback",
      "await Promise.resolve().then(() => { while (true) {} })",
      "CODE_TIMEOUT",
    ],
    [
      "loop over a slow builtin (rare interrupt checks)",
      "const big = 'x'.repeat(4e6); for (;;) big.indexOf('y')",
      "CODE_TIMEOUT",
    ],
    ["catastrophic regex", "/(a+)+$/.test('a'.repeat(40) + 'b')", "CODE_TIMEOUT"],
    ["loop in the getter of a thrown value", "throw { get message() { for (;;) {} } }", "CODE_TIMEOUT"],
    ["loop in a returned proxy", "return new Proxy({}, { ownKeys() { for (;;) {} } })", "CODE_TIMEOUT"],
    ["doubling string", "let s = 'x'; for (;;) s += s;", "CODE_MEMORY"],
    [
      "1 MB strings kept forever",
      "const a = []; for (;;) a.push('x'.repeat(1e6) + Math.random())",
      "CODE_MEMORY",
    ],
    ["huge arrays", "const a = []; for (;;) a.push(new Array(1e5).fill(1))", "CODE_MEMORY"],
    ["millions of small objects", "const a = []; for (;;) a.push({ x: Math.random() })", "CODE_MEMORY"],
    ["one huge buffer", "new ArrayBuffer(1e9)", "CODE_MEMORY"],
    [
      "out of memory caught, run goes on",
      "try { 'x'.repeat(1e9) } catch {} return 'survived'",
      { value: "survived" },
    ],
    ["deep recursion", "function f() { return f() + 1 } f()", "CODE_STACK_OVERFLOW"],
    ["deeply nested JSON", "JSON.parse('['.repeat(100000))", "CODE_STACK_OVERFLOW"],
    ["deeply nested eval", "eval('('.repeat(100000))", "CODE_STACK_OVERFLOW"],
    ["deeply nested script", "[".repeat(100000), "CODE_SYNTAX"],
    [
      "reaching host globals",
      "[typeof process, typeof require, typeof fetch, typeof setTimeout, typeof WebAssembly, typeof std, typeof os]",
      { value: ["undefined", "undefined", "undefined", "undefined", "undefined", "undefined", "undefined"] },
    ],
    ["Function constructor escape", 'this.constructor.constructor("return process")()', "CODE_ERROR"],
    [
      "Function constructor through a tool",
      'Object.getPrototypeOf(tools.everything.echo).constructor("return typeof process")()',
      { value: "undefined" },
    ],
    [
      "host functions left on globalThis",
      "Object.getOwnPropertyNames(globalThis).filter((n) => /host/i.test(n))",
      { value: [] },
    ],
    ["host paths in stacks", "/\\/work|node_modules|file:/.test(new Error('x').stack)", { value: false }],
    ["importing a module", 'import fs from "node:fs"; fs.readFileSync("/etc/passwd")', "CODE_SYNTAX"],
    ["dynamic import", 'await import("node:fs")', "CODE_ERROR"],
    ["breaking out of the wrapper", "}); globalThis.escaped = 1; (async () => {", "CODE_SYNTAX"],
    [
      "polluting Object.prototype, Promise and JSON before a call",
      "Object.prototype.then = function (r) { r(1) }; Promise.prototype.then = null; JSON.parse = () => 'fake'; globalThis.leftover = 1; return await tools.everything.echo({ message: 'hi' })",
      { value: "Echo: hi" },
    ],
    [
      "replacing a tool function",
      "tools.everything.echo = () => 'mine'; return await tools.everything.echo({ message: 'hi' })",
      { value: "Echo: hi" },
    ],
    [
      "redefining a tool",
      "Object.defineProperty(tools.everything, 'echo', { value: () => 'mine' })",
      "CODE_ERROR",
    ],
    ["calling a tool that is not listed", "await tools.everything.get_env()", "CODE_ERROR"],
    ["huge console output", "for (;;) console.log('x'.repeat(1000))", "CODE_OUTPUT_TOO_LARGE"],
    ["huge return value", "return 'x'.repeat(1e6)", "CODE_OUTPUT_TOO_LARGE"],
    [
      "thousands of sequential tool calls",
      "for (let i = 0; i < 5000; i++) await tools.everything.echo({ message: 'x' })",
      "CODE_TOO_MANY_CALLS",
    ],
    [
      "thousands of parallel tool calls",
      "await Promise.all(Array.from({ length: 5000 }, () => tools.everything.echo({ message: 'x' })))",
      "CODE_TOO_MANY_CALLS",
    ],
    [
      "swallowing the call limit",
      "for (;;) { try { await tools.everything.echo({ message: 'x' }) } catch {} }",
      "CODE_TOO_MANY_CALLS",
    ],
    ["a promise that never settles", "await new Promise(() => {})", "CODE_STALLED"],
    ["a BigInt result", "return 10n", "CODE_ERROR"],
    ["throwing a non-Error", "throw 42", "CODE_ERROR"],
  ];

/** The limits the attacks meet (the time limit only for those meant to meet it). */
export const LIMITS = {
  wallMs: 250,
  memoryBytes: 16 * 1024 * 1024,
  maxToolCalls: 20,
  maxOutputBytes: 64 * 1024,
};
