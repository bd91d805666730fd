/** `--config F` (`-c`): the flag most commands share. */
export const CONFIG_FLAG = {
  config: {
    type: "string",
    short: "c",
    value: "F",
    description: "the config file to read",
    defaultText: "mcplex.yaml|yml|json in this directory, else a read-only workspace server on it",
  },
} as const;

/** `--json`: machine-readable output instead of lines for people. */
export const JSON_FLAG = {
  json: { type: "boolean", description: "print JSON instead of text" },
} as const;
