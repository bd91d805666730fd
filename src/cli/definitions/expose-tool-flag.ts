/** The `--expose-tool GLOB` option of `serve` and `workspace`. */
export const EXPOSE_TOOL_FLAG = {
  "expose-tool": {
    type: "string",
    multiple: true,
    value: "GLOB",
    description: 'serve only the tools whose exposed name matches, such as "memory__read_*"',
  },
} as const;
