//! `private_key_jwt` (RFC 7523 §2.2): the client proves who it is with a JWT it signs
//! with its private key, for the client-credentials grant. rmcp has this behind a
//! feature that needs aws-lc-rs, which toolnexus avoids (see Cargo.toml); ring, which
//! rustls already uses here, signs the two algorithms servers expect: ES256 and RS256.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{
    ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, RSA_PKCS1_SHA256, RsaKeyPair,
};
use rustls_pki_types::PrivatePkcs8KeyDer;
use rustls_pki_types::pem::PemObject;
use serde_json::json;

/// How long an assertion is good for.
const LIFETIME_SECS: u64 = 300;

/// A signed assertion that `client_id` is calling, for `audience` (the authorization
/// server's issuer). `pem` is a PKCS#8 private key (`BEGIN PRIVATE KEY`), P-256 or RSA.
/// Errors never quote the key.
pub fn client_assertion(
    pem: &str,
    client_id: &str,
    audience: &str,
) -> Result<String, AssertionError> {
    let der =
        PrivatePkcs8KeyDer::from_pem_slice(pem.as_bytes()).map_err(|_| AssertionError::NotPem)?;
    let rng = SystemRandom::new();
    let key = Key::read(der.secret_pkcs8_der(), &rng)?;
    let mut jti = [0u8; 16];
    rng.fill(&mut jti)
        .map_err(|_| AssertionError::NoRandomness)?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let header = json!({ "alg": key.algorithm(), "typ": "JWT" });
    let claims = json!({
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + LIFETIME_SECS,
        "jti": URL_SAFE_NO_PAD.encode(jti),
    });
    let signing_input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let signature = key.sign(signing_input.as_bytes(), &rng)?;
    Ok(format!(
        "{signing_input}.{}",
        URL_SAFE_NO_PAD.encode(signature)
    ))
}

/// Why no client assertion could be made. Its `Display` is the reason users read; it
/// never quotes the key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AssertionError {
    NotPem,
    NotP256OrRsa,
    NoRandomness,
    CannotSign,
}

impl std::fmt::Display for AssertionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            AssertionError::NotPem => {
                "\"oauth.privateKey\" is not a PEM PKCS#8 private key (BEGIN PRIVATE KEY)"
            }
            AssertionError::NotP256OrRsa => {
                "\"oauth.privateKey\" is neither a P-256 nor an RSA key"
            }
            AssertionError::NoRandomness => "no randomness for the assertion",
            AssertionError::CannotSign => "cannot sign the client assertion",
        })
    }
}

impl std::error::Error for AssertionError {}

enum Key {
    Ec(EcdsaKeyPair),
    Rsa(RsaKeyPair),
}

impl Key {
    fn read(pkcs8: &[u8], rng: &SystemRandom) -> Result<Key, AssertionError> {
        if let Ok(key) = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8, rng) {
            return Ok(Key::Ec(key));
        }
        RsaKeyPair::from_pkcs8(pkcs8)
            .map(Key::Rsa)
            .map_err(|_| AssertionError::NotP256OrRsa)
    }

    fn algorithm(&self) -> &'static str {
        match self {
            Key::Ec(_) => "ES256",
            Key::Rsa(_) => "RS256",
        }
    }

    fn sign(&self, message: &[u8], rng: &SystemRandom) -> Result<Vec<u8>, AssertionError> {
        let failed = |_| AssertionError::CannotSign;
        match self {
            Key::Ec(key) => key
                .sign(rng, message)
                .map(|s| s.as_ref().to_vec())
                .map_err(failed),
            Key::Rsa(key) => {
                let mut signature = vec![0; key.public().modulus_len()];
                key.sign(&RSA_PKCS1_SHA256, rng, message, &mut signature)
                    .map_err(failed)?;
                Ok(signature)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_that_is_not_one_is_refused_without_quoting_it() {
        let error = client_assertion("not a key at all, secret-ish", "c", "a").err();
        assert_eq!(error, Some(AssertionError::NotPem));
        assert!(error.is_some_and(|e| !e.to_string().contains("secret-ish")));
    }

    #[test]
    fn an_ec_key_signs_a_three_part_es256_token() {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map(|doc| doc.as_ref().to_vec())
            .unwrap_or_default();
        let pem = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            base64::engine::general_purpose::STANDARD.encode(pkcs8)
        );
        let token = client_assertion(&pem, "agent", "https://as.example").unwrap_or_default();
        let parts: Vec<&str> = token.split('.').collect();
        assert_eq!(parts.len(), 3);
        let header = URL_SAFE_NO_PAD.decode(parts[0]).unwrap_or_default();
        assert_eq!(
            String::from_utf8_lossy(&header),
            r#"{"alg":"ES256","typ":"JWT"}"#
        );
        assert_eq!(
            URL_SAFE_NO_PAD.decode(parts[2]).map(|s| s.len()).ok(),
            Some(64)
        );
    }
}
