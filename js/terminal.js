// Text bound for a terminal. A server's words (its stderr, error messages, log data, tool
// names) can carry control characters that clear the screen, retitle the window or hide
// lines (ESC sequences, \r, backspace, C1 codes such as \x9b). Each one is shown as an
// escape instead, so a printed line says what the server sent and does nothing else.

// C0, DEL and C1. Tab and newline too: in a one-line diagnostic they are never ours.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g
const NAMED = { "\n": "\\n", "\r": "\\r", "\t": "\\t" }

const escape = (c) => NAMED[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`

/** `text` with every control character written as an escape (`\u001b`, `\n`, ...). */
export const printable = (text) => String(text).replace(CONTROL, escape)
