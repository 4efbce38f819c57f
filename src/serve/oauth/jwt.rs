//! Checking a JWT access token (RFC 9068) against an authorization server's keys: its
//! signature (RS256 or ES256, by the key its `kid` names), then `iss`, `aud`, `exp` and
//! `nbf`. What it carries is read only once the signature holds.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::signature::{self, RsaPublicKeyComponents, UnparsedPublicKey};
use serde::Deserialize;
use serde_json::Value;

/// Clocks differ a little between machines.
const LEEWAY_SECS: u64 = 30;

/// One key of a JWK set, as RFC 7517 writes it (only what verifying needs).
#[derive(Debug, Clone, Deserialize)]
pub struct Jwk {
    pub kid: Option<String>,
    pub kty: String,
    #[serde(default)]
    pub n: Option<String>,
    #[serde(default)]
    pub e: Option<String>,
    #[serde(default)]
    pub crv: Option<String>,
    #[serde(default)]
    pub x: Option<String>,
    #[serde(default)]
    pub y: Option<String>,
}

/// What a token must say to be let in.
pub struct Expect<'a> {
    pub issuer: &'a str,
    pub audience: &'a str,
    /// Seconds since the Unix epoch.
    pub now: u64,
}

/// Why a token was refused (said in the 401's `error_description`).
#[derive(Debug, PartialEq)]
pub enum Refused {
    Malformed,
    /// No key of the set has its `kid` (the set may have rotated: fetch it again).
    UnknownKey,
    Signature,
    Claim(&'static str),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Malformed => f.write_str("the token is not a JWT"),
            Refused::UnknownKey => f.write_str("the token is signed with an unknown key"),
            Refused::Signature => f.write_str("the token's signature does not hold"),
            Refused::Claim(claim) => write!(f, "the token's \"{claim}\" does not hold here"),
        }
    }
}

#[derive(Deserialize)]
struct Header {
    alg: String,
    kid: Option<String>,
}

#[derive(Deserialize)]
struct Claims {
    iss: Option<String>,
    #[serde(default)]
    aud: Value,
    exp: Option<f64>,
    nbf: Option<f64>,
    scope: Option<String>,
    #[serde(default)]
    scp: Vec<String>,
}

/// The scopes of `token` when it holds, signed by one of `keys`.
pub fn verify(token: &str, keys: &[Jwk], expect: &Expect<'_>) -> Result<Vec<String>, Refused> {
    let mut parts = token.split('.');
    let (Some(head), Some(body), Some(sig), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Refused::Malformed);
    };
    let decode = |part: &str| URL_SAFE_NO_PAD.decode(part).map_err(|_| Refused::Malformed);
    let header: Header = serde_json::from_slice(&decode(head)?).map_err(|_| Refused::Malformed)?;
    let signature = decode(sig)?;
    let key = keys
        .iter()
        .find(|key| header.kid.is_none() || key.kid == header.kid)
        .ok_or(Refused::UnknownKey)?;
    let signed = &token.as_bytes()[..head.len() + 1 + body.len()];
    check_signature(&header.alg, key, signed, &signature)?;
    let claims: Claims = serde_json::from_slice(&decode(body)?).map_err(|_| Refused::Malformed)?;
    if claims.iss.as_deref() != Some(expect.issuer) {
        return Err(Refused::Claim("iss"));
    }
    let audiences = match &claims.aud {
        Value::String(one) => vec![one.as_str()],
        Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !audiences
        .iter()
        .any(|aud| same_resource(aud, expect.audience))
    {
        return Err(Refused::Claim("aud"));
    }
    let now = expect.now as f64;
    match claims.exp {
        Some(exp) if exp + LEEWAY_SECS as f64 > now => {}
        _ => return Err(Refused::Claim("exp")),
    }
    if claims.nbf.is_some_and(|nbf| nbf > now + LEEWAY_SECS as f64) {
        return Err(Refused::Claim("nbf"));
    }
    let mut scopes: Vec<String> = claims
        .scope
        .as_deref()
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    scopes.extend(claims.scp);
    Ok(scopes)
}

/// A resource URI and the same with or without its final `/`.
fn same_resource(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

fn check_signature(alg: &str, key: &Jwk, signed: &[u8], sig: &[u8]) -> Result<(), Refused> {
    let part = |value: &Option<String>| {
        let value = value.as_deref().ok_or(Refused::UnknownKey)?;
        URL_SAFE_NO_PAD
            .decode(value)
            .map_err(|_| Refused::UnknownKey)
    };
    let holds = match (alg, key.kty.as_str()) {
        ("RS256", "RSA") => {
            let components = RsaPublicKeyComponents {
                n: part(&key.n)?,
                e: part(&key.e)?,
            };
            let rsa = &signature::RSA_PKCS1_2048_8192_SHA256;
            components.verify(rsa, signed, sig).is_ok()
        }
        ("ES256", "EC") if key.crv.as_deref() == Some("P-256") => {
            let mut point = vec![0x04];
            point.extend(part(&key.x)?);
            point.extend(part(&key.y)?);
            let ecdsa = UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, point);
            ecdsa.verify(signed, sig).is_ok()
        }
        // `none`, HMAC (a shared secret this side does not have) and any other.
        _ => false,
    };
    if holds {
        Ok(())
    } else {
        Err(Refused::Signature)
    }
}

#[cfg(test)]
mod tests {
    use ring::rand::SystemRandom;
    use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
    use serde_json::json;

    use super::*;

    struct Signer {
        pair: EcdsaKeyPair,
        jwk: Jwk,
    }

    fn signer(kid: &str) -> Signer {
        let rng = SystemRandom::new();
        let alg = &ECDSA_P256_SHA256_FIXED_SIGNING;
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(alg, &rng).expect("a key");
        let pair = EcdsaKeyPair::from_pkcs8(alg, pkcs8.as_ref(), &rng).expect("a key pair");
        let point = pair.public_key().as_ref();
        let jwk = Jwk {
            kid: Some(kid.into()),
            kty: "EC".into(),
            crv: Some("P-256".into()),
            x: Some(URL_SAFE_NO_PAD.encode(&point[1..33])),
            y: Some(URL_SAFE_NO_PAD.encode(&point[33..])),
            n: None,
            e: None,
        };
        Signer { pair, jwk }
    }

    fn token(signer: &Signer, alg: &str, claims: Value) -> String {
        let header = json!({ "alg": alg, "kid": signer.jwk.kid, "typ": "at+jwt" });
        let head = URL_SAFE_NO_PAD.encode(header.to_string());
        let body = URL_SAFE_NO_PAD.encode(claims.to_string());
        let signed = format!("{head}.{body}");
        let rng = SystemRandom::new();
        let sig = signer
            .pair
            .sign(&rng, signed.as_bytes())
            .expect("a signature");
        format!("{signed}.{}", URL_SAFE_NO_PAD.encode(sig.as_ref()))
    }

    const NOW: u64 = 1_800_000_000;

    fn expect() -> Expect<'static> {
        Expect {
            issuer: "https://as.example",
            audience: "http://127.0.0.1:8808",
            now: NOW,
        }
    }

    fn claims() -> Value {
        json!({ "iss": "https://as.example", "aud": "http://127.0.0.1:8808/", "exp": NOW + 60, "nbf": NOW - 5, "scope": "mcp agents:a" })
    }

    #[test]
    fn a_token_of_this_issuer_for_this_resource_gives_its_scopes() {
        let s = signer("k1");
        let scopes = verify(
            &token(&s, "ES256", claims()),
            std::slice::from_ref(&s.jwk),
            &expect(),
        );
        assert_eq!(scopes, Ok(vec!["mcp".to_owned(), "agents:a".to_owned()]));
    }

    #[test]
    fn each_claim_and_the_signature_are_checked() {
        let s = signer("k1");
        let keys = [s.jwk.clone()];
        let with = |key: &str, value: Value| {
            let mut claims = claims();
            claims[key] = value;
            verify(&token(&s, "ES256", claims), &keys, &expect())
        };
        assert_eq!(
            with("iss", json!("https://evil.example")),
            Err(Refused::Claim("iss"))
        );
        assert_eq!(
            with("aud", json!(["https://other.example"])),
            Err(Refused::Claim("aud"))
        );
        assert_eq!(with("exp", json!(NOW - 60)), Err(Refused::Claim("exp")));
        assert_eq!(with("exp", Value::Null), Err(Refused::Claim("exp")));
        assert_eq!(with("nbf", json!(NOW + 600)), Err(Refused::Claim("nbf")));
        let other = signer("k1");
        let forged = token(&other, "ES256", claims());
        assert_eq!(verify(&forged, &keys, &expect()), Err(Refused::Signature));
        let unsigned = token(&s, "none", claims());
        assert_eq!(verify(&unsigned, &keys, &expect()), Err(Refused::Signature));
        let rotated = token(&signer("k2"), "ES256", claims());
        assert_eq!(verify(&rotated, &keys, &expect()), Err(Refused::UnknownKey));
        assert_eq!(verify("a.b", &keys, &expect()), Err(Refused::Malformed));
        assert_eq!(
            verify("%%.%%.%%", &keys, &expect()),
            Err(Refused::Malformed)
        );
    }
}
