/**
 * The revisions spoken with the `initialize` handshake and a session: 2025-11-25,
 * 2025-06-18, 2025-03-26, and 2024-11-05, which shares their handshake.
 */

/**
 * The first published revision, still all that servers on older SDKs answer `initialize`
 * with (server-github among them): no structured tool output, titles or elicitation.
 */
export const REV2024_PROTOCOL_VERSION = "2024-11-05";

/** Revisions spoken with the `initialize` handshake (2025 ones and 2024-11-05), newest first. */
export const REV2025_PROTOCOL_VERSIONS = [
  "2025-11-25",
  "2025-06-18",
  "2025-03-26",
  REV2024_PROTOCOL_VERSION,
] as const;
