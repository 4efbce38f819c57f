//! A result decoded from an upstream's JSON, made the gateway's own. rmcp writes its
//! `resultType` for a 2026-07-28 client (and leaves it out for an older one) only when
//! it is set, as its constructors do (a 2025 server's has none); and the protocol's own
//! `_meta` members (`io.modelcontextprotocol/…`, such as the upstream's `serverInfo`)
//! describe the upstream's hop, not the gateway's, so they are dropped.

use rmcp::model::{
    CallToolResult, CompleteResult, GetPromptResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, ReadResourceResult,
    ResultType,
};

const PROTOCOL_META: &str = "io.modelcontextprotocol/";

pub(super) trait Completed {
    /// The result, marked complete.
    fn completed(self) -> Self;
}

macro_rules! completed {
    ($($result:ty),*) => {$(
        impl Completed for $result {
            fn completed(mut self) -> Self {
                self.result_type = Some(ResultType::COMPLETE);
                if let Some(meta) = &mut self.meta {
                    meta.retain(|key, _| !key.starts_with(PROTOCOL_META));
                }
                if self.meta.as_ref().is_some_and(|meta| meta.is_empty()) {
                    self.meta = None;
                }
                self
            }
        }
    )*};
}

completed!(
    CallToolResult,
    CompleteResult,
    GetPromptResult,
    ListPromptsResult,
    ListResourceTemplatesResult,
    ListResourcesResult,
    ListToolsResult,
    ReadResourceResult
);
