//! A tool's input schema rewritten into what one model provider accepts: every `$ref`
//! inlined, the root made a plain object, keywords the provider refuses removed or
//! rewritten (`keywords`), and for OpenAI's strict mode every property required, optional
//! ones made nullable (`strict`). The nulls strict mode forces in are recorded (`Nulls`),
//! so the tool is called with exactly the arguments the model meant to send.

mod combine;
mod keywords;
mod nulls;
mod refs;
mod strict;
mod subschemas;
#[cfg(test)]
mod tests;

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

pub use nulls::Nulls;

/// The provider a schema is made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// OpenAI function calling with `strict: true` (Structured Outputs' subset).
    OpenAiStrict,
    /// OpenAI function calling without strict mode.
    OpenAi,
    /// Anthropic Messages `input_schema`.
    Anthropic,
    /// Gemini function declarations (an OpenAPI 3.0 subset).
    Gemini,
    /// What every provider above accepts without strict mode: Gemini's rules, the narrowest.
    Portable,
}

pub const PROFILES: &str = "openai-strict, openai, anthropic, gemini, portable";

/// A profile name that is none of `PROFILES`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownProfile(pub String);

impl fmt::Display for UnknownProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown schema profile \"{}\": expected one of {PROFILES}",
            self.0
        )
    }
}

impl std::error::Error for UnknownProfile {}

impl FromStr for Profile {
    type Err = UnknownProfile;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "openai-strict" => Ok(Profile::OpenAiStrict),
            "openai" => Ok(Profile::OpenAi),
            "anthropic" => Ok(Profile::Anthropic),
            "gemini" => Ok(Profile::Gemini),
            "portable" => Ok(Profile::Portable),
            other => Err(UnknownProfile(other.to_owned())),
        }
    }
}

/// A schema made for one profile.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderSchema {
    pub schema: Value,
    /// Whether the schema meets strict mode's rules. `openai-strict` falls back to the
    /// `openai` schema, with `strict` false, when the tool's schema cannot be expressed in
    /// strict mode (a free-form map, an untyped value, a recursion cut short, a limit passed).
    pub strict: bool,
    /// Where strict mode made an optional property nullable.
    pub nulls: Nulls,
}

pub fn convert(schema: &Value, profile: Profile) -> ProviderSchema {
    let inlined = refs::inline(schema);
    let rooted = combine::object_root(inlined.schema);
    if profile == Profile::OpenAiStrict && !inlined.cut {
        let rules = keywords::apply(rooted.clone(), Profile::OpenAiStrict);
        if let Some((schema, nulls)) = strict::strict(rules) {
            return ProviderSchema {
                schema,
                strict: true,
                nulls,
            };
        }
    }
    let profile = match profile {
        Profile::OpenAiStrict => Profile::OpenAi,
        other => other,
    };
    ProviderSchema {
        schema: keywords::apply(rooted, profile),
        strict: false,
        nulls: Nulls::default(),
    }
}
