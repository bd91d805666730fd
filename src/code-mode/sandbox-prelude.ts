/**
 * The script's world, set up inside the sandbox before the script runs: `console` and `tools`,
 * and the runner that reports the script's value or error to the host.
 *
 * Everything it needs (JSON, Object, Error...) is captured first, so a script that replaces
 * `JSON.stringify` or pollutes `Object.prototype` breaks only its own run, never how the host
 * reads the answer. The host's functions arrive as arguments and are not left on `globalThis`.
 * What crosses the boundary is strings (JSON), never objects: the host validates each one.
 *
 * The prelude is a function expression; the host calls it with
 * `(hostCall, hostLog, hostDone, hostFail, bindingsJson)` and keeps the runner it returns.
 */
export const PRELUDE = `(function (hostCall, hostLog, hostDone, hostFail, bindingsJson) {
  "use strict";
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const freeze = Object.freeze;
  const create = Object.create;
  const defineProperty = Object.defineProperty;
  const keys = Object.keys;
  const hasOwn = Object.hasOwn;
  const isArray = Array.isArray;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const StringCtor = String;
  const ProxyCtor = Proxy;

  function join(parts, separator) {
    let text = "";
    for (let i = 0; i < parts.length; i++) text += (i === 0 ? "" : separator) + parts[i];
    return text;
  }
  function show(value) {
    if (typeof value === "string") return value;
    try {
      if (value instanceof ErrorCtor) return StringCtor(value.name) + ": " + StringCtor(value.message);
      const json = stringify(value);
      if (json !== undefined) return json;
    } catch {}
    try { return StringCtor(value); } catch { return "[unprintable value]"; }
  }
  function logger(level) {
    return function () {
      let line = "";
      for (let i = 0; i < arguments.length; i++) line += (i === 0 ? "" : " ") + show(arguments[i]);
      hostLog(level, line);
    };
  }
  const consoleObject = freeze({
    log: logger("log"), info: logger("info"), debug: logger("debug"),
    warn: logger("warn"), error: logger("error"),
  });
  defineProperty(globalThis, "console", { value: consoleObject, writable: true, configurable: true });

  // Unknown names throw with the names that exist, which tells a model more than "not a function".
  function strict(target, path) {
    freeze(target);
    return new ProxyCtor(target, {
      get(object, key) {
        if (typeof key !== "string" || hasOwn(object, key) || key === "then" || key === "toJSON") return object[key];
        const known = keys(object);
        throw new TypeErrorCtor(path + "." + key + " does not exist; " + path + " has " +
          (known.length === 0 ? "nothing" : join(known, ", ")));
      },
    });
  }
  function toolFunction(label, exposed) {
    const call = async function (args) {
      if (args === undefined) args = {};
      if (args === null || typeof args !== "object" || isArray(args))
        throw new TypeErrorCtor(label + " takes one object of arguments");
      const answer = parse(await hostCall(exposed, stringify(args)));
      if (answer[0] === 0) return answer[1];
      const error = new ErrorCtor(answer[1]);
      error.tool = label;
      throw error;
    };
    return freeze(call);
  }
  const namespaces = create(null);
  const bindings = parse(bindingsJson);
  for (let i = 0; i < bindings.length; i++) {
    const namespace = bindings[i][0], method = bindings[i][1], exposed = bindings[i][2];
    if (namespaces[namespace] === undefined) namespaces[namespace] = create(null);
    namespaces[namespace][method] = toolFunction("tools." + namespace + "." + method, exposed);
  }
  const root = create(null);
  const names = keys(namespaces);
  for (let i = 0; i < names.length; i++) root[names[i]] = strict(namespaces[names[i]], "tools." + names[i]);
  defineProperty(globalThis, "tools", { value: strict(root, "tools"), writable: false, configurable: false });

  function describe(error) {
    try {
      if (error instanceof ErrorCtor)
        return stringify([StringCtor(error.name), StringCtor(error.message), StringCtor(error.stack || "")]);
      return stringify(["", "uncaught " + show(error), ""]);
    } catch {
      return stringify(["", "uncaught unprintable value", ""]);
    }
  }
  return async function run(main) {
    let value;
    try {
      value = await main();
    } catch (error) {
      hostFail(describe(error));
      return;
    }
    let json;
    try {
      json = stringify(value);
    } catch (error) {
      hostFail(stringify(["TypeError", "the return value cannot be sent as JSON: " + show(error), ""]));
      return;
    }
    hostDone(json);
  };
})`;
