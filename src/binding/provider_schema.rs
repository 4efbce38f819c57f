//! `providerSchema` for JS: a tool's schema made for one provider once, kept with the
//! nulls strict mode forced in, which `restoreArguments` takes back out of each call.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;

use crate::provider_schema::{self, Nulls, Profile};

#[napi]
pub struct ProviderSchema {
    schema: String,
    strict: bool,
    nulls: Nulls,
}

#[napi]
impl ProviderSchema {
    #[napi(catch_unwind, constructor)]
    pub fn new(schema_json: String, profile: String) -> Result<Self> {
        let profile: Profile = profile
            .parse()
            .map_err(|e: provider_schema::UnknownProfile| invalid(e.to_string()))?;
        let schema: Value = serde_json::from_str(&schema_json)
            .map_err(|e| invalid(format!("the input schema is not JSON: {e}")))?;
        let made = provider_schema::convert(&schema, profile);
        Ok(ProviderSchema {
            schema: super::to_json(&made.schema)?,
            strict: made.strict,
            nulls: made.nulls,
        })
    }

    /// The schema, as JSON text.
    #[napi(getter, catch_unwind)]
    pub fn schema(&self) -> String {
        self.schema.clone()
    }

    /// Whether it meets OpenAI's strict mode.
    #[napi(getter, catch_unwind)]
    pub fn strict(&self) -> bool {
        self.strict
    }

    /// Whether any call's arguments may carry a null to take out.
    #[napi(getter, catch_unwind)]
    pub fn forces_nulls(&self) -> bool {
        !self.nulls.is_empty()
    }

    /// The model's arguments (JSON text) without the nulls strict mode forced in.
    #[napi(catch_unwind)]
    pub fn restore_arguments(&self, args_json: String) -> Result<String> {
        let mut args: Value = serde_json::from_str(&args_json)
            .map_err(|e| invalid(format!("the arguments are not JSON: {e}")))?;
        self.nulls.strip(&mut args);
        super::to_json(&args)
    }
}

fn invalid(message: String) -> Error {
    Error::new(Status::InvalidArg, message)
}
