//! A `SKILL.md`'s frontmatter: the YAML block between its first two `---` lines, read as
//! JSON and compared field by field with the frontmatter of the entry the host holds
//! (SEP-2640: any difference is a verification failure).

use serde_json::{Map, Value};

/// `text` split into its frontmatter's YAML and the body after it; `None` when it does
/// not begin with a `---` delimited block. A byte-order mark and CRLF line ends are
/// allowed, as editors write them.
pub fn split(text: &str) -> Option<(&str, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = after_line(text, "---")?;
    let mut offset = 0;
    loop {
        let line_end = rest[offset..].find('\n').map(|i| offset + i);
        let line = &rest[offset..line_end.unwrap_or(rest.len())];
        if line.trim_end_matches([' ', '\t', '\r']) == "---" {
            let yaml = rest[..offset].trim_end_matches(['\n', '\r']);
            let body = line_end.map_or("", |end| &rest[end + 1..]);
            return Some((yaml, body));
        }
        offset = line_end? + 1;
    }
}

/// What follows `text`'s first line when that line is `marker` (trailing blanks allowed).
fn after_line<'a>(text: &'a str, marker: &str) -> Option<&'a str> {
    let (line, rest) = text.split_once('\n')?;
    (line.trim_end_matches([' ', '\t', '\r']) == marker).then_some(rest)
}

/// The frontmatter's YAML as a JSON object, or why it is not one.
pub fn parse(yaml: &str) -> Result<Map<String, Value>, String> {
    match yaml_serde::from_str::<Value>(yaml) {
        Ok(Value::Object(fields)) => Ok(fields),
        Ok(_) => Err("its frontmatter is not a mapping".to_owned()),
        Err(e) => Err(format!(
            "its frontmatter is not YAML that reads as JSON: {e}"
        )),
    }
}

/// One line per field on which `file` and `entry` differ, a missing field reading as
/// null; empty when they agree.
pub fn differences(file: &Map<String, Value>, entry: &Map<String, Value>) -> Vec<String> {
    let mut keys: Vec<&String> = file.keys().collect();
    keys.extend(entry.keys().filter(|key| !file.contains_key(*key)));
    keys.into_iter()
        .filter_map(|key| {
            let (ours, theirs) = (field(file, key), field(entry, key));
            (!same(ours, theirs))
                .then(|| format!("{key}: the file has {ours}, the listing {theirs}"))
        })
        .collect()
}

fn field<'a>(fields: &'a Map<String, Value>, key: &str) -> &'a Value {
    fields.get(key).unwrap_or(&Value::Null)
}

/// JSON equality with numbers compared by value: YAML's `1.0` and JSON's `1` agree.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => differences(x, y).is_empty(),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().cloned().expect("as written")
    }

    #[test]
    fn splits_frontmatter_from_body_with_crlf_and_a_bom() {
        let text = "\u{feff}---\r\nname: a\r\ndescription: b\r\n---\r\nBody.\r\n";
        let (yaml, body) = split(text).expect("as written");
        assert_eq!(
            object(json!({"name": "a", "description": "b"})),
            parse(yaml).expect("as written")
        );
        assert_eq!(body, "Body.\r\n");
        assert_eq!(
            split("---\nname: a\n---").expect("as written"),
            ("name: a", "")
        );
    }

    #[test]
    fn no_block_no_frontmatter() {
        assert!(split("name: a\n").is_none());
        assert!(split("---\nname: a\n").is_none());
        assert!(parse("- a\n- b").is_err());
    }

    #[test]
    fn differences_name_each_field_and_numbers_agree_by_value() {
        let file = parse("name: a\ndescription: b\nversion: 1.0\nmetadata:\n  k: [1, x]")
            .expect("as written");
        let entry = object(
            json!({"name": "a", "description": "b", "version": 1, "metadata": {"k": [1, "x"]}}),
        );
        assert!(differences(&file, &entry).is_empty());
        let entry = object(
            json!({"name": "a", "description": "c", "license": "MIT", "version": 1, "metadata": {"k": [1, "x"]}}),
        );
        let found = differences(&file, &entry);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("description:") && found[1].starts_with("license:"));
    }
}
