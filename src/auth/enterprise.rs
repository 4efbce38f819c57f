//! Enterprise-managed authorization (the
//! `io.modelcontextprotocol/enterprise-managed-authorization` extension): the person's ID
//! token, from the company's identity provider, is exchanged there for an ID-JAG (RFC
//! 8693, `requested_token_type` `urn:ietf:params:oauth:token-type:id-jag`) naming the MCP
//! server's authorization server and the server itself; `grant` then redeems it with the
//! jwt-bearer grant. rmcp makes the exchange, through the sign-in's guard.

use oauth2::ClientSecret;
use rmcp::transport::auth::AuthError;
use rmcp::transport::auth::AuthorizationMetadata;
use rmcp::transport::auth::enterprise::{
    EmaAuthorizationServer, EmaClientAuthentication, EmaExchangeRequest,
};

use super::guarded::Guarded;
use crate::config::EnterpriseSpec;

/// The ID-JAG the IdP of `idp` gives for `resource`, of the authorization server of
/// `metadata`, as client `client_id` there.
pub async fn id_jag(
    http: &Guarded,
    metadata: &AuthorizationMetadata,
    idp: &EnterpriseSpec,
    client_id: &str,
    resource: &str,
    scopes: &[String],
) -> Result<String, AuthError> {
    let failed = |why: String| AuthError::TokenExchangeFailed(why);
    let id_token = idp
        .id_token
        .read()
        .map_err(|why| failed(format!("\"oauth.idp.idToken\" cannot be used: {why}")))?;
    let issuer = match &idp.issuer {
        Some(issuer) => issuer.clone(),
        None => reqwest::Url::parse(&idp.token_endpoint)
            .map(|url| url.origin().ascii_serialization())
            .map_err(|e| failed(format!("\"oauth.idp.tokenEndpoint\" is not a URL: {e}")))?,
    };
    let mut at_idp = EmaAuthorizationServer::new(issuer, &idp.token_endpoint, &idp.client_id);
    if let Some(secret) = &idp.client_secret {
        let secret = ClientSecret::new(secret.clone());
        at_idp =
            at_idp.with_client_authentication(EmaClientAuthentication::ClientSecretBasic(secret));
    }
    let as_issuer = metadata
        .issuer
        .clone()
        .unwrap_or_else(|| metadata.token_endpoint.clone());
    let at_server = EmaAuthorizationServer::new(as_issuer, &metadata.token_endpoint, client_id);
    let exchange = EmaExchangeRequest::new_with_id_token(at_idp, at_server, resource, &id_token)
        .with_scopes(scopes.iter().cloned());
    let jag = exchange.exchange_id_jag(http).await;
    let jag = jag.map_err(|e| {
        failed(format!(
            "the identity provider's token exchange failed: {e}"
        ))
    })?;
    Ok(jag.assertion().secret().clone())
}
