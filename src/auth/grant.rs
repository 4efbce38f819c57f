//! The client-credentials grant with `private_key_jwt`: the token request rmcp would
//! make behind its JWT feature, made here with the assertion `assertion` signs.

use std::time::{SystemTime, UNIX_EPOCH};

use rmcp::transport::auth::{
    AuthError, AuthorizationMetadata, CredentialStore, OAuthTokenResponse, StoredCredentials,
};

use super::assertion::client_assertion;
use super::tokens::RecordStore;

const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// Asks the token endpoint for a token as `client_id`, for `resource`, and keeps it.
pub async fn exchange(
    metadata: &AuthorizationMetadata,
    client_id: &str,
    pem: &str,
    scopes: &[String],
    resource: &str,
    store: &RecordStore,
) -> Result<(), AuthError> {
    let failed = |why: String| AuthError::ClientCredentialsError(why);
    let audience = metadata
        .issuer
        .as_deref()
        .unwrap_or(&metadata.token_endpoint);
    let assertion = client_assertion(pem, client_id, audience);
    let assertion = assertion.map_err(|e| failed(e.to_string()))?;
    let mut form = vec![
        ("grant_type", "client_credentials"),
        ("client_assertion_type", ASSERTION_TYPE),
        ("client_assertion", assertion.as_str()),
        ("resource", resource),
    ];
    let scope = scopes.join(" ");
    if !scope.is_empty() {
        form.push(("scope", &scope));
    }
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| failed(format!("cannot build an HTTP client: {e}")))?;
    let response = client
        .post(&metadata.token_endpoint)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json")
        .body(form_encoded(&form))
        .send()
        .await
        .map_err(|e| failed(format!("the token request failed: {e}")))?;
    let status = response.status();
    let body = response
        .bytes()
        .await
        .map_err(|e| failed(format!("the token response could not be read: {e}")))?;
    if !status.is_success() {
        // The body is the server's OAuth error, which names no secret of ours.
        let error = serde_json::from_slice::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_owned))
            .unwrap_or_default();
        return Err(failed(format!(
            "the token endpoint answered {status} {error}"
        )));
    }
    let token: OAuthTokenResponse = serde_json::from_slice(&body)
        .map_err(|e| failed(format!("the token response is not one: {e}")))?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let credentials = StoredCredentials::new(
        client_id.to_owned(),
        Some(token),
        scopes.to_vec(),
        Some(now),
    )
    .with_issuer(metadata.issuer.clone());
    store.save(credentials).await
}

/// `application/x-www-form-urlencoded`, as the HTML standard writes it.
fn form_encoded(pairs: &[(&str, &str)]) -> String {
    let encode = |text: &str| {
        let mut out = String::new();
        for byte in text.bytes() {
            match byte {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => {
                    out.push(byte as char)
                }
                b' ' => out.push('+'),
                other => out.push_str(&format!("%{other:02X}")),
            }
        }
        out
    };
    let pairs: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect();
    pairs.join("&")
}

#[cfg(test)]
mod tests {
    #[test]
    fn forms_are_encoded_as_browsers_encode_them() {
        let body = super::form_encoded(&[("a b", "x/y:z"), ("scope", "read write")]);
        assert_eq!(body, "a+b=x%2Fy%3Az&scope=read+write");
    }
}
