//! What every HTTP client toolnexus builds shares, whoever it talks to (a server, an
//! authorization server, a probe): the crypto provider rustls needs, the certificates it
//! trusts (see `tls`), and a redirect rule that keeps credentials on their origin.

use std::sync::Once;

pub mod tls;

/// The start of every HTTP client toolnexus builds. Redirects stay on the origin of the
/// request's URL: the configured headers may carry credentials, and on a redirect to
/// another host reqwest's default policy strips only `Authorization` and cookies.
/// Certificates are checked against the system's roots and `NODE_EXTRA_CA_CERTS`'s
/// (see `tls::client_config`).
pub fn client_builder() -> reqwest::ClientBuilder {
    install_crypto_provider();
    let same_origin = reqwest::redirect::Policy::custom(|attempt| {
        let first = attempt.previous().first().map(|url| url.origin());
        if first == Some(attempt.url().origin()) && attempt.previous().len() < 10 {
            attempt.follow()
        } else {
            attempt.stop()
        }
    });
    let builder = reqwest::Client::builder().redirect(same_origin);
    match tls::client_config() {
        Some(config) => builder.tls_backend_preconfigured(config.clone()),
        None => builder,
    }
}

/// reqwest is built without a TLS provider of its own; rustls needs one per process.
pub fn install_crypto_provider() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Fails only when the host process already installed one, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
