//! A server's stderr: drained so the server never blocks on it, its last lines kept for
//! error messages.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::watch;

use super::os::ErrPipe;
use crate::lock::lock;

/// Lines of stderr kept for error messages, and the longest line kept.
const STDERR_LINES: usize = 8;
const STDERR_LINE_CHARS: usize = 500;

#[derive(Default)]
pub struct StderrTail {
    pub lines: VecDeque<String>,
    /// The values of the server's own variables: a kept line never ends inside one, so
    /// what hides them in messages later sees each one whole.
    pub unsplittable: Vec<String>,
}

impl StderrTail {
    fn push(&mut self, line: &str) {
        let line = line.trim_end();
        // Stack frames crowd out the line that says what went wrong.
        if line.is_empty() || line.trim_start().starts_with("at ") {
            return;
        }
        if self.lines.len() == STDERR_LINES {
            self.lines.pop_front();
        }
        let kept = cut(line, STDERR_LINE_CHARS, &self.unsplittable);
        self.lines.push_back(kept.to_owned());
    }
}

/// The first `chars` characters of `line`, or fewer, so as not to end inside any of `whole`.
fn cut<'a>(line: &'a str, chars: usize, whole: &[String]) -> &'a str {
    let mut end = line
        .char_indices()
        .nth(chars)
        .map_or(line.len(), |(i, _)| i);
    loop {
        let straddling = whole.iter().filter(|v| !v.is_empty()).flat_map(|value| {
            line.match_indices(value.as_str())
                .map(|(start, found)| (start, start + found.len()))
        });
        let Some(start) = straddling
            .filter(|&(start, stop)| start < end && stop > end)
            .map(|(start, _)| start)
            .min()
        else {
            return &line[..end];
        };
        end = start;
    }
}

/// Keeps reading so the server never blocks on a full pipe; keeps only the last lines, and
/// of each only its start, so that a line without end costs no memory.
pub async fn drain_stderr(
    stderr: ErrPipe,
    tail: Arc<Mutex<StderrTail>>,
    done: watch::Sender<bool>,
) {
    const KEPT_BYTES: usize = STDERR_LINE_CHARS * 4;
    let keep = |line: &[u8]| {
        let line = String::from_utf8_lossy(line);
        lock(&tail).push(&line);
    };
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        let chunk = match reader.fill_buf().await {
            Ok([]) | Err(_) => break,
            Ok(chunk) => chunk,
        };
        let end = memchr::memchr(b'\n', chunk);
        let taken = end.map_or(chunk.len(), |i| i + 1);
        let room = KEPT_BYTES.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..taken.min(room)]);
        reader.consume(taken);
        if end.is_some() {
            keep(&line);
            line.clear();
        }
    }
    if !line.is_empty() {
        keep(&line);
    }
    let _ = done.send(true);
}

#[cfg(test)]
mod tests {
    use super::cut;

    #[test]
    fn a_long_line_is_cut_at_its_character_limit() {
        assert_eq!(cut("aé…bcd", 3, &[]), "aé…");
        assert_eq!(cut("short", 500, &[]), "short");
    }

    #[test]
    fn a_line_is_never_cut_inside_a_value_it_must_keep_whole() {
        let secret = "s3cr3t-value".to_owned();
        let line = format!("{}{secret} and more", "x".repeat(495));
        assert_eq!(
            cut(&line, 500, std::slice::from_ref(&secret)),
            "x".repeat(495)
        );
        // Cutting before one value can land inside another: the line ends before both.
        let other = "xxxs3c".to_owned();
        assert_eq!(cut(&line, 500, &[secret, other]), "x".repeat(492));
        let whole = format!("{}abcdefgh{}", "x".repeat(480), "y".repeat(40));
        assert_eq!(cut(&whole, 500, &["abcdefgh".into()]), &whole[..500]);
    }
}
