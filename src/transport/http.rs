//! Remote servers over streamable HTTP, through rmcp's reqwest client with rustls.

use std::collections::HashMap;
use std::sync::Once;

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransport, StreamableHttpClientTransportConfig,
};

use super::MAX_MESSAGE_BYTES;
use crate::config::{RemoteSpec, expand_env};

/// A transport for `spec`: headers expanded from the environment now, sent on every request.
/// Errors name the header, never its value.
pub fn streamable(
    spec: &RemoteSpec,
) -> Result<StreamableHttpClientTransport<reqwest::Client>, String> {
    install_crypto_provider();
    let mut headers = HashMap::new();
    for (name, value) in &spec.headers {
        let header = HeaderName::try_from(name.as_str())
            .map_err(|_| format!("\"{name}\" is not a valid HTTP header name"))?;
        let value = HeaderValue::try_from(expand_env(value)).map_err(|_| {
            format!("the value of header \"{name}\" is not a valid HTTP header value")
        })?;
        headers.insert(header, value);
    }
    let config = StreamableHttpClientTransportConfig::with_uri(spec.url.as_str())
        .custom_headers(headers)
        .max_json_response_size(MAX_MESSAGE_BYTES)
        .max_sse_event_size(MAX_MESSAGE_BYTES);
    Ok(StreamableHttpClientTransport::from_config(config))
}

/// reqwest is built without a TLS provider of its own; rustls needs one per process.
fn install_crypto_provider() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Fails only when the host process already installed one, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
