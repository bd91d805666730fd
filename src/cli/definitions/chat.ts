import { defineCommand } from "../command-definition.js";
import { CONFIG_FLAG, JSON_FLAG } from "./common-flags.js";

/** `mcplex chat`. */
export const chatDefinition = defineCommand({
  name: "chat",
  summary: "talk to an OpenAI-compatible LLM that uses the tools",
  usage:
    "mcplex chat [-p PROMPT] [--model M] [--base-url U] [--config F] [--profile P] [--tools all|search|code] [--json]",
  details:
    "The answer goes to stdout, tool activity to stderr. Without -p it reads prompts from stdin and " +
    "keeps the conversation.",
  flags: {
    ...CONFIG_FLAG,
    profile: { type: "string", value: "P", description: "the tools of this profile (and its mode)" },
    "base-url": {
      type: "string",
      value: "U",
      description: "the LLM's OpenAI-compatible endpoint",
      defaultText: "MCPLEX_LLM_BASE_URL, else the config's llm.baseUrl",
    },
    model: {
      type: "string",
      short: "m",
      value: "M",
      description: "the model to ask",
      defaultText: "MCPLEX_LLM_MODEL, else the config's llm.model",
    },
    prompt: { type: "string", short: "p", value: "PROMPT", description: "one prompt, answered, then exit" },
    "max-steps": {
      type: "string",
      value: "N",
      description: "the most LLM calls one prompt may take",
      defaultText: "10",
    },
    ...JSON_FLAG,
    tools: {
      type: "string",
      value: "all|search|code",
      description: "how the model sees the tools",
      defaultText: "the profile's mode, else all",
    },
  },
  examples: [
    { command: 'mcplex chat -p "list the files here"', about: "one prompt, with the tools of ./mcplex.yaml" },
    {
      command: "mcplex chat --base-url http://localhost:11434/v1 --model llama3.1",
      about: "a conversation with a local model",
    },
  ],
});
