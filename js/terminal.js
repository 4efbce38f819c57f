// Text bound for a terminal. Servers choose their tool names, descriptions and error
// messages; printed raw, an ESC or CSI sequence in them could recolour, move the cursor,
// retitle the window or hide lines, and a \r or backspace could overwrite what we print.
// Every such character is shown as a visible escape instead.

// C0 controls, DEL and C1 controls (U+009B is a one-character CSI for some terminals).
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g
// The same, but line breaks and tabs pass: for multi-line text such as a tool's output.
const CONTROL_BUT_LAYOUT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g

const hex = (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`
const visible = (c) => (c === "\n" ? "\\n" : c === "\r" ? "\\r" : c === "\t" ? "\\t" : hex(c))

/** `text` on one line: every control character shown as an escape (`\x1b`, `\n`, ...). */
export const safeLine = (text) => String(text).replace(CONTROL, visible)

/** Like `safeLine`, but line breaks and tabs are kept. */
export const safeBlock = (text) => String(text).replace(CONTROL_BUT_LAYOUT, visible)

/**
 * `value` as indented JSON. JSON.stringify escapes C0 characters but writes DEL and C1
 * as they are; those become `\u` escapes too, so the text still parses to the same value.
 */
export const safeJson = (value) =>
  JSON.stringify(value, null, 2).replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
