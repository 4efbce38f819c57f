//! Reading a server's line as rmcp would, and answering what deserves an answer.

use rmcp::model::{ClientJsonRpcMessage, ErrorData, RequestId, ServerJsonRpcMessage};

use super::{Intercept, LineWriter};

/// What rmcp answers to a well-formed message it cannot read; a request is answered under
/// its own id when that can be read, since the server waits for that id.
fn refuse(writer: &LineWriter, message: &[u8]) {
    #[derive(serde::Deserialize)]
    struct Request {
        id: Option<RequestId>,
        method: Option<serde::de::IgnoredAny>,
    }
    let request = serde_json::from_slice::<Request>(message).ok();
    let id = request.and_then(|r| r.method.and(r.id));
    let error =
        ClientJsonRpcMessage::error(ErrorData::invalid_request("Invalid request", None), id);
    if let Ok(mut line) = serde_json::to_vec(&error) {
        line.push(b'\n');
        let _ = writer.write_line(&line);
    }
}

/// One line for rmcp, or `None` when the intercept took it or it cannot be read (then
/// answered, when it deserves an answer).
pub(super) fn take(
    writer: &LineWriter,
    intercept: &dyn Intercept,
    line: &[u8],
) -> Option<ServerJsonRpcMessage> {
    let refuse_it = match decode(intercept, line) {
        Ok(message) => return message,
        Err(refuse_it) => refuse_it,
    };
    if std::str::from_utf8(line).is_err() {
        // Read it as the official SDKs do, bad bytes as U+FFFD, so that an answer still
        // reaches the call waiting for it.
        return take(writer, intercept, String::from_utf8_lossy(line).as_bytes());
    }
    if refuse_it {
        refuse(writer, line);
    } else {
        intercept.unreadable(line);
    }
    None
}

/// One line: taken by the intercept (`None`), for rmcp, or unreadable (`Err(true)` when it
/// deserves an answer).
fn decode(intercept: &dyn Intercept, message: &[u8]) -> Result<Option<ServerJsonRpcMessage>, bool> {
    if message.is_empty() || intercept.intercept(message) {
        return Ok(None);
    }
    match serde_json::from_slice::<ServerJsonRpcMessage>(message) {
        Ok(message) => Ok(Some(message)),
        // Not JSON: nothing to answer (as the official SDKs do). A notification rmcp does
        // not know is not ours to refuse either.
        Err(e) => Err(e.is_data() && !is_notification(message)),
    }
}

/// The message without its line ending and a leading byte-order mark.
pub(super) fn trim(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
}

fn is_notification(message: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Shape {
        id: Option<serde::de::IgnoredAny>,
        method: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_slice::<Shape>(message).is_ok_and(|s| s.id.is_none() && s.method.is_some())
}
