// The `_meta` a 2026-07-28 request carries instead of a handshake.

export const MODERN = "2026-07-28"

/** The request `_meta` of `version`, or undefined for a 2025 version (the handshake era). */
export function requestMeta(version) {
  if (version !== MODERN) return undefined
  return {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": { name: "floor", version: "0" },
    "io.modelcontextprotocol/clientCapabilities": {},
  }
}
