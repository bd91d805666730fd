/**
 * Payloads the conformance scenarios only check for shape (type, mime type, base64): a 2x2 PNG
 * and a four-sample 8 kHz mono WAV, both generated for this fixture.
 */

/** A 2x2 RGB PNG. */
export const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEklEQVR4nGOQz78kn3+JAUIBACPCBYGqbgCmAAAAAElFTkSuQmCC";

/** A 16-bit PCM WAV with four samples. */
export const WAV_BASE64 = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQgAAAAAAEAfAADA4A==";
