//! The token requests toolnexus makes itself, where rmcp's would not do: the
//! client-credentials grant with a `private_key_jwt` assertion (what rmcp makes behind its
//! JWT feature), and the RFC 7523 jwt-bearer grant with an assertion the host holds (a
//! workload's identity token, the `io.modelcontextprotocol/auth/wif` extension). Each goes
//! through the sign-in's guard; its error is the server's OAuth error, as it said it.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;

use rmcp::transport::auth::{
    AuthError, AuthorizationMetadata, CredentialStore, OAuthTokenResponse, StoredCredentials,
};

use super::assertion::client_assertion;
use super::endpoint_policy::Endpoint;
use super::guarded::Guarded;
use super::tokens::RecordStore;

const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
pub const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// What the client proves itself with.
pub enum Grant<'a> {
    /// The client-credentials grant, the client's key signing an assertion of its own.
    Keyed { client_id: &'a str, pem: &'a str },
    /// The jwt-bearer grant with `assertion`; `client_id` when the client has one, with
    /// `client_secret` when it is confidential (HTTP Basic, `client_secret_basic`).
    Bearer {
        client_id: Option<&'a str>,
        client_secret: Option<&'a str>,
        assertion: String,
    },
}

/// A token request: its grant, the scopes asked for, and the resource (the server's URL).
pub struct Request<'a> {
    pub grant: Grant<'a>,
    pub scopes: &'a [String],
    pub resource: &'a str,
}

/// Asks the token endpoint of `metadata` for a token as `request` says, and keeps it.
pub async fn exchange(
    http: &Guarded,
    metadata: &AuthorizationMetadata,
    request: Request<'_>,
    store: &RecordStore,
) -> Result<(), AuthError> {
    let failed = |why: String| AuthError::TokenExchangeFailed(why);
    let scope = request.scopes.join(" ");
    let client_id = match &request.grant {
        Grant::Keyed { client_id, .. } => client_id.to_string(),
        Grant::Bearer { client_id, .. } => client_id.unwrap_or_default().to_owned(),
    };
    let basic = match &request.grant {
        Grant::Bearer {
            client_id,
            client_secret: Some(secret),
            ..
        } => {
            let pair = format!(
                "{}:{}",
                form_encoded_part(client_id.unwrap_or_default()),
                form_encoded_part(secret)
            );
            Some(format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(pair)
            ))
        }
        _ => None,
    };
    let mut form: Vec<(&str, String)> = match request.grant {
        Grant::Keyed { client_id, pem } => {
            let audience = metadata
                .issuer
                .as_deref()
                .unwrap_or(&metadata.token_endpoint);
            let assertion = client_assertion(pem, client_id, audience);
            let assertion = assertion.map_err(|e| failed(e.to_string()))?;
            vec![
                ("grant_type", "client_credentials".into()),
                ("client_assertion_type", ASSERTION_TYPE.into()),
                ("client_assertion", assertion),
            ]
        }
        Grant::Bearer {
            client_id,
            client_secret,
            assertion,
        } => {
            let mut form = vec![("grant_type", JWT_BEARER.into()), ("assertion", assertion)];
            if client_secret.is_none() {
                form.extend(client_id.map(|id| ("client_id", id.to_owned())));
            }
            form
        }
    };
    form.push(("resource", request.resource.to_owned()));
    if !scope.is_empty() {
        form.push(("scope", scope));
    }
    let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut post = http::Request::post(&metadata.token_endpoint)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json");
    if let Some(basic) = basic {
        post = post.header("authorization", basic);
    }
    let post = post
        .body(form_encoded(&pairs).into_bytes())
        .map_err(|e| failed(format!("the token request cannot be made: {e}")))?;
    let response = http.send(Endpoint::Token, post, None).await;
    let response = response.map_err(|e| failed(format!("the token request failed: {e}")))?;
    let (status, body) = (response.status(), response.body());
    if !status.is_success() {
        // The body is the server's OAuth error, which names no secret of ours.
        let error = serde_json::from_slice::<serde_json::Value>(body).ok();
        let said = |key: &str| {
            let value = error
                .as_ref()
                .and_then(|v| v.get(key)?.as_str().map(str::to_owned));
            value.unwrap_or_default()
        };
        let (code, description) = (said("error"), said("error_description"));
        let description = if description.is_empty() {
            description
        } else {
            format!(": {description}")
        };
        return Err(failed(format!(
            "the token endpoint answered {status} {code}{description}"
        )));
    }
    let token: OAuthTokenResponse = serde_json::from_slice(body)
        .map_err(|e| failed(format!("the token response is not one: {e}")))?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let credentials =
        StoredCredentials::new(client_id, Some(token), request.scopes.to_vec(), Some(now))
            .with_issuer(metadata.issuer.clone());
    store.save(credentials).await
}

/// `application/x-www-form-urlencoded`, as the HTML standard writes it.
fn form_encoded(pairs: &[(&str, &str)]) -> String {
    let pairs: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{}={}", form_encoded_part(k), form_encoded_part(v)))
        .collect();
    pairs.join("&")
}

/// One name or value of a form (also what HTTP Basic's parts are encoded as, RFC 6749).
fn form_encoded_part(text: &str) -> String {
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
}

#[cfg(test)]
mod tests {
    #[test]
    fn forms_are_encoded_as_browsers_encode_them() {
        let body = super::form_encoded(&[("a b", "x/y:z"), ("scope", "read write")]);
        assert_eq!(body, "a+b=x%2Fy%3Az&scope=read+write");
    }
}
