import { SecretStore } from "../../config/secret-store.js";
import { secretsDefinition, secretsRmDefinition, secretsSetDefinition } from "../definitions/secrets.js";
import { EXIT, readStdin, UsageError } from "../output.js";

/**
 * `mcplex secrets set NAME [VALUE] | list | rm NAME`. Without VALUE, `set` reads the
 * value from stdin, so it stays out of shell history.
 */
export async function secretsCommand(args: string[]): Promise<number> {
  const [sub, name, value, ...extra] = args;
  const store = new SecretStore();
  switch (sub) {
    case "set": {
      if (name === undefined || extra.length > 0)
        throw new UsageError(`usage: ${secretsSetDefinition.usage}`);
      const secret = value ?? (await readStdin()).replace(/\r?\n$/, "");
      if (secret === "")
        throw new UsageError(`no value given for ${name}; pass it as an argument or on stdin`);
      await store.set(name, secret);
      console.error(`stored ${name} in ${store.file}`);
      return EXIT.ok;
    }
    case "list":
      for (const n of await store.list()) console.log(n);
      return EXIT.ok;
    case "rm":
    case "remove": {
      if (name === undefined) throw new UsageError(`usage: ${secretsRmDefinition.usage}`);
      if (!(await store.remove(name))) {
        console.error(`mcplex: no secret named ${name}`);
        return EXIT.usage;
      }
      return EXIT.ok;
    }
    default:
      throw new UsageError(`usage: ${secretsDefinition.usage}`);
  }
}
