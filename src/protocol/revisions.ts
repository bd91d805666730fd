import { REV2025_PROTOCOL_VERSIONS } from "./rev2025.js";
import { REV2026_PROTOCOL_VERSION } from "./rev2026.js";

/** Every revision mcplex speaks, newest first. */
export const SUPPORTED_PROTOCOL_VERSIONS = [REV2026_PROTOCOL_VERSION, ...REV2025_PROTOCOL_VERSIONS] as const;
