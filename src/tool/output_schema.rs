//! A tool's `outputSchema` as listed, and the first way a value breaks it. The validator
//! is compiled once per tool, when its first result comes; `output_check` is
//! what checks a call's result with it.

use std::sync::{Arc, OnceLock};

use jsonschema::Validator;
use serde_json::Value;
use serde_json::value::RawValue;

/// Violations longer than this are cut: the message is for a person, not a dump.
const MAX_VIOLATION: usize = 300;

/// A tool's output schema as listed, compiled when first needed.
pub struct OutputSchema {
    schema: Box<RawValue>,
    validator: OnceLock<Result<Validator, String>>,
}

impl std::fmt::Debug for OutputSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("OutputSchema").field(&self.schema).finish()
    }
}

impl OutputSchema {
    pub fn new(schema: &RawValue) -> Arc<OutputSchema> {
        Arc::new(OutputSchema {
            schema: schema.to_owned(),
            validator: OnceLock::new(),
        })
    }

    /// The first way `value` breaks the schema, if it does; `Err` when the schema itself
    /// does not compile.
    pub fn violation(&self, value: &Value) -> Result<Option<String>, String> {
        let validator = self.validator.get_or_init(|| {
            let schema: Value =
                serde_json::from_str(self.schema.get()).map_err(|e| e.to_string())?;
            jsonschema::validator_for(&schema).map_err(|e| cut(e.masked().to_string()))
        });
        let Some(error) = validator
            .as_ref()
            .map_err(Clone::clone)?
            .validate(value)
            .err()
        else {
            return Ok(None);
        };
        let at = error.instance_path().as_str();
        let at = if at.is_empty() { "/" } else { at };
        // Masked: the value itself may be large, and it is the server's data.
        Ok(Some(cut(format!("at {at}: {}", error.masked()))))
    }
}

fn cut(mut text: String) -> String {
    if text.len() > MAX_VIOLATION {
        let mut end = MAX_VIOLATION;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_violations_are_cut_on_a_char_boundary() {
        let long = "é".repeat(400);
        let cut = cut(long);
        assert!(cut.len() <= MAX_VIOLATION + '…'.len_utf8());
        assert!(cut.ends_with('…'));
    }
}
