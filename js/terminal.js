// Text bound for a terminal. A server's words (its stderr, error messages, log data, tool
// names and descriptions, a tool's output) can carry control characters that recolour,
// move the cursor, clear the screen, retitle the window or hide lines (ESC sequences, \r,
// backspace, C1 codes such as \x9b, a one-character CSI for some terminals). Each one is
// shown as an escape instead, written as JSON writes it (`\u001b`), so a printed line says
// what the server sent and does nothing else.

// C0 controls, DEL and C1 controls.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g
// The same, but line breaks and tabs pass: for multi-line text such as a tool's output.
const CONTROL_BUT_LAYOUT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g
// What JSON.stringify leaves raw: DEL and C1.
const CONTROL_IN_JSON = /[\u007f-\u009f]/g
const NAMED = { "\n": "\\n", "\r": "\\r", "\t": "\\t" }

const escape = (c) => NAMED[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`

/** `text` on one line: every control character shown as an escape (`\u001b`, `\n`, ...). */
export const safeLine = (text) => String(text).replace(CONTROL, escape)

/** Like `safeLine`, but line breaks and tabs are kept. */
export const safeBlock = (text) => String(text).replace(CONTROL_BUT_LAYOUT, escape)

/** `value` as indented JSON with DEL and C1 escaped too, so it still parses to the same value. */
export const safeJson = (value) => JSON.stringify(value, null, 2).replace(CONTROL_IN_JSON, escape)
