//! DPoP (RFC 9449, the `io.modelcontextprotocol/auth/dpop` extension): tokens bound to a
//! key the client holds. One ES256 key per sign-in, generated here and kept in the
//! sign-in's record beside the tokens it binds; a fresh proof (a JWT signed with it:
//! `htm`, `htu` without query and fragment, `iat`, a new `jti`, and for a resource server
//! `ath`, the token's hash) on every token request and every request to the server; the
//! nonce each origin asks for, kept per origin and role (an authorization server and the
//! server on one origin keep theirs apart).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use reqwest::Url;
use ring::digest::{SHA256, digest};
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde_json::{Value, json};

use crate::lock::lock;

/// The header a proof travels in, and the one a server sends a nonce in.
pub const PROOF: &str = "dpop";
pub const NONCE: &str = "dpop-nonce";

/// The DPoP state of one server's sign-in: its key once DPoP is in use, the nonces.
#[derive(Default)]
pub struct Dpop {
    key: Mutex<Option<Arc<Key>>>,
    /// By (whether for the resource server, origin).
    nonces: Mutex<HashMap<(bool, String), String>>,
}

/// An ES256 key pair and its public JWK.
pub struct Key {
    pair: EcdsaKeyPair,
    pkcs8: Vec<u8>,
    jwk: Value,
}

impl Key {
    /// A new key.
    pub fn generate() -> Option<Key> {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).ok()?;
        Key::from_pkcs8(pkcs8.as_ref().to_vec())
    }

    /// The key kept as `encoded` (see `encoded`); none if it is not one.
    pub fn decode(encoded: &str) -> Option<Key> {
        Key::from_pkcs8(STANDARD.decode(encoded).ok()?)
    }

    fn from_pkcs8(pkcs8: Vec<u8>) -> Option<Key> {
        let rng = SystemRandom::new();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &pkcs8, &rng).ok()?;
        // The uncompressed point: 0x04, then x and y, 32 bytes each.
        let point = pair.public_key().as_ref();
        let (x, y) = point.get(1..33).zip(point.get(33..65))?;
        let (x, y) = (URL_SAFE_NO_PAD.encode(x), URL_SAFE_NO_PAD.encode(y));
        let jwk = json!({ "kty": "EC", "crv": "P-256", "x": x, "y": y });
        Some(Key { pair, pkcs8, jwk })
    }

    /// The private key, as the record keeps it (base64 PKCS#8).
    pub fn encoded(&self) -> String {
        STANDARD.encode(&self.pkcs8)
    }

    /// A proof for `method` on `url`, with the hash of `token` for a resource server and
    /// the origin's `nonce`, if it asked for one.
    fn proof(
        &self,
        method: &str,
        url: &str,
        token: Option<&str>,
        nonce: Option<&str>,
    ) -> Option<String> {
        let rng = SystemRandom::new();
        let mut jti = [0u8; 16];
        rng.fill(&mut jti).ok()?;
        let mut htu = Url::parse(url).ok()?;
        htu.set_query(None);
        htu.set_fragment(None);
        let since = SystemTime::now().duration_since(UNIX_EPOCH);
        let iat = since.map(|d| d.as_secs()).unwrap_or_default();
        let header = json!({ "typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk });
        let jti = URL_SAFE_NO_PAD.encode(jti);
        let mut claims = json!({ "jti": jti, "htm": method, "htu": htu.as_str(), "iat": iat });
        if let Some(token) = token {
            claims["ath"] = URL_SAFE_NO_PAD
                .encode(digest(&SHA256, token.as_bytes()))
                .into();
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = nonce.into();
        }
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = self.pair.sign(&rng, input.as_bytes()).ok()?;
        Some(format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature)))
    }
}

impl Dpop {
    /// Binds this sign-in's tokens to `key` from now on.
    pub fn start(&self, key: Key) {
        *lock(&self.key) = Some(Arc::new(key));
    }

    /// Whether its tokens are DPoP-bound.
    pub fn active(&self) -> bool {
        lock(&self.key).is_some()
    }

    /// The key in use, as the record keeps it.
    pub fn encoded_key(&self) -> Option<String> {
        lock(&self.key).as_ref().map(|key| key.encoded())
    }

    /// A fresh proof for a request, with the nonce its origin last asked for; none when
    /// DPoP is not in use. A request with a `token` is to the resource server.
    pub fn proof(&self, method: &str, url: &str, token: Option<&str>) -> Option<String> {
        let key = lock(&self.key).clone()?;
        let nonce = lock(&self.nonces)
            .get(&(token.is_some(), origin(url)))
            .cloned();
        key.proof(method, url, token, nonce.as_deref())
    }

    /// Keeps the nonce `url`'s origin sent (as the resource server, or as the
    /// authorization server); whether it is a new one (worth one retry).
    pub fn learn_nonce(&self, resource: bool, url: &str, nonce: &str) -> bool {
        let old = lock(&self.nonces).insert((resource, origin(url)), nonce.to_owned());
        old.as_deref() != Some(nonce)
    }
}

fn origin(url: &str) -> String {
    let url = Url::parse(url);
    url.map(|u| u.origin().ascii_serialization())
        .unwrap_or_default()
}

/// Whether a `WWW-Authenticate` value or an OAuth error body asks for a nonce.
pub fn asks_nonce(text: &str) -> bool {
    text.contains("use_dpop_nonce")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(jwt: &str, index: usize) -> Value {
        let part = jwt.split('.').nth(index).expect("a part");
        let bytes = URL_SAFE_NO_PAD.decode(part).expect("base64url");
        serde_json::from_slice(&bytes).expect("JSON")
    }

    #[test]
    fn a_proof_names_the_request_and_is_fresh_each_time() {
        let dpop = Dpop::default();
        assert!(
            dpop.proof("POST", "https://as.example/token", None)
                .is_none(),
            "not in use yet"
        );
        let key = Key::generate().expect("a key");
        let kept = key.encoded();
        dpop.start(key);
        let proof = dpop
            .proof("POST", "https://rs.example/mcp?x=1#f", Some("tok"))
            .expect("a proof");
        let (header, claims) = (part(&proof, 0), part(&proof, 1));
        assert_eq!(
            (header["typ"].as_str(), header["alg"].as_str()),
            (Some("dpop+jwt"), Some("ES256"))
        );
        assert_eq!(header["jwk"]["crv"], "P-256");
        assert_eq!(claims["htu"], "https://rs.example/mcp");
        assert_eq!(claims["htm"], "POST");
        assert_eq!(
            claims["ath"],
            URL_SAFE_NO_PAD.encode(digest(&SHA256, b"tok"))
        );
        assert!(claims.get("nonce").is_none());
        let again = dpop
            .proof("POST", "https://rs.example/mcp", Some("tok"))
            .expect("a proof");
        assert_ne!(part(&again, 1)["jti"], claims["jti"]);
        assert!(dpop.learn_nonce(true, "https://rs.example/other", "n1"));
        assert!(!dpop.learn_nonce(true, "https://rs.example/mcp", "n1"));
        let nonced = dpop.proof("GET", "https://rs.example/mcp", Some("t"));
        assert_eq!(part(&nonced.expect("a proof"), 1)["nonce"], "n1");
        let as_token = dpop.proof("POST", "https://rs.example/token", None);
        let as_token = part(&as_token.expect("a proof"), 1);
        assert!(as_token.get("nonce").is_none(), "roles keep theirs apart");
        let elsewhere = dpop
            .proof("POST", "https://as.example/token", None)
            .expect("a proof");
        assert!(
            part(&elsewhere, 1).get("nonce").is_none(),
            "nonces are per origin"
        );
        assert_eq!(Key::decode(&kept).expect("kept").jwk, header["jwk"]);
    }
}
