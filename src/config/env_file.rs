//! `envFile`: `KEY=VALUE` lines read as the `dotenv` package reads them.
//!
//! Blank lines and `#` comments are skipped, as is a leading `export `; `KEY: value` is
//! accepted too. A value may be quoted with `'`, `"` or `` ` `` (and then span lines, keep
//! `#`, and in double quotes turn `\n` and `\r` into line breaks); an unquoted value ends
//! at `#` and is trimmed. A line that is none of these is ignored; a later key wins.

use std::path::Path;

use super::entry_error::EntryError;

/// The variables of the file at `path`. The error names the file, never its contents.
pub fn read(path: &Path) -> Result<Vec<(String, String)>, EntryError> {
    let text = std::fs::read_to_string(path).map_err(|e| EntryError::EnvFile {
        path: path.display().to_string(),
        reason: e.to_string(),
    })?;
    Ok(parse(&text))
}

pub fn parse(text: &str) -> Vec<(String, String)> {
    let text = text.replace("\r\n", "\n");
    let mut vars: Vec<(String, String)> = Vec::new();
    let mut rest = text.as_str();
    while !rest.is_empty() {
        let (entry, next) = entry(rest);
        rest = next;
        if let Some((key, value)) = entry {
            match vars.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = value,
                None => vars.push((key, value)),
            }
        }
    }
    vars
}

/// The entry at the start of `text`, if its line holds one, and the text after it.
fn entry(text: &str) -> (Option<(String, String)>, &str) {
    let line_end = text.find('\n').map_or(text.len(), |i| i + 1);
    let skip_line = (None, &text[line_end..]);
    let line = text[..line_end].trim_start();
    let line = line
        .strip_prefix("export")
        .filter(|l| l.starts_with([' ', '\t']))
        .map_or(line, str::trim_start);
    let key_len = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
        .unwrap_or(line.len());
    if key_len == 0 {
        return skip_line;
    }
    let key = &line[..key_len];
    let after_key = line[key_len..].trim_start_matches([' ', '\t']);
    let value_start = if let Some(v) = after_key.strip_prefix('=') {
        v
    } else if let Some(v) = after_key
        .strip_prefix(':')
        .filter(|v| v.starts_with([' ', '\t']))
    {
        v
    } else {
        return skip_line;
    };
    let value_start = value_start.trim_start_matches([' ', '\t']);
    // Offsets into `text` from here on (every slice so far ends where the line does): a
    // quoted value may run past this line.
    let offset = line_end - value_start.len();
    let rest = &text[offset..];
    if let Some(quote) = rest
        .chars()
        .next()
        .filter(|c| matches!(c, '"' | '\'' | '`'))
        && let Some(len) = quoted_len(&rest[1..], quote)
    {
        let inner = &rest[1..1 + len];
        let value = if quote == '"' {
            inner.replace("\\n", "\n").replace("\\r", "\r")
        } else {
            inner.to_owned()
        };
        let after = &rest[len + 2..];
        let next = after.find('\n').map_or("", |i| &after[i + 1..]);
        return (Some((key.to_owned(), value)), next);
    }
    let line_rest = &text[offset..line_end];
    let value = line_rest.split('#').next().unwrap_or_default().trim();
    (Some((key.to_owned(), value.to_owned())), &text[line_end..])
}

/// The length of a quoted value up to its closing `quote`; a backslash-escaped quote does
/// not close it.
fn quoted_len(text: &str, quote: char) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            c if c == quote => return Some(i),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(text: &str) -> Vec<(String, String)> {
        parse(text)
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn lines_comments_export_and_trimming() {
        let text = "# a comment\n\nA=1\n  export B = two words  \nC=x # trailing\r\nD=\nE: colon\nnot a line\n=nokey\nA=again";
        assert_eq!(
            vars(text),
            pairs(&[
                ("A", "again"),
                ("B", "two words"),
                ("C", "x"),
                ("D", ""),
                ("E", "colon")
            ])
        );
    }

    #[test]
    fn quotes() {
        let text = "S='single # kept'\nD=\"line\\nbreak \\\"q\\\"\" # c\nB=`back'tick`\nM=\"multi\nline\"\nU='unterminated\nN=next";
        assert_eq!(
            vars(text),
            pairs(&[
                ("S", "single # kept"),
                ("D", "line\nbreak \\\"q\\\""),
                ("B", "back'tick"),
                ("M", "multi\nline"),
                ("U", "'unterminated"),
                ("N", "next"),
            ])
        );
    }

    #[test]
    fn an_unreadable_file_is_named() {
        let err = read(Path::new("/no/such/.env")).expect_err("an error");
        let EntryError::EnvFile { path, .. } = &err else {
            panic!("an envFile error: {err}")
        };
        assert_eq!(path, "/no/such/.env");
        assert!(err.to_string().contains("\"/no/such/.env\""), "{err}");
    }
}
