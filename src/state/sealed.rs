//! Secrets as they leave the host: AES-256-GCM under the fleet's 32-byte key, a fresh
//! random nonce per value, and the value's whole key as associated data, so that a value
//! copied under another key or into another namespace does not open.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};

use super::StateError;

/// What a sealed value starts with: its format's version.
const PREFIX: &str = "tn-sealed-1:";

pub struct Seal {
    key: LessSafeKey,
    random: SystemRandom,
}

impl Seal {
    /// A seal from 64 hex digits (32 bytes). The error never repeats the text given.
    pub fn from_hex(hex: &str) -> Result<Seal, StateError> {
        let bad = || {
            StateError::Config(
                "the state's encryption key must be 64 hex digits (32 bytes), as `openssl rand -hex 32` prints".to_owned(),
            )
        };
        let hex = hex.trim();
        if hex.len() != 64 {
            return Err(bad());
        }
        let mut bytes = [0u8; 32];
        for (i, byte) in bytes.iter_mut().enumerate() {
            let pair = hex.get(2 * i..2 * i + 2).ok_or_else(bad)?;
            *byte = u8::from_str_radix(pair, 16).map_err(|_| bad())?;
        }
        let key = UnboundKey::new(&AES_256_GCM, &bytes).map_err(|_| bad())?;
        Ok(Seal {
            key: LessSafeKey::new(key),
            random: SystemRandom::new(),
        })
    }

    /// `plain`, sealed for the state key `key`.
    pub fn seal(&self, key: &str, plain: &str) -> Option<String> {
        let mut nonce = [0u8; NONCE_LEN];
        self.random.fill(&mut nonce).ok()?;
        let mut data = plain.as_bytes().to_vec();
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(key.as_bytes()),
                &mut data,
            )
            .ok()?;
        let mut whole = nonce.to_vec();
        whole.extend_from_slice(&data);
        Some(format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(whole)))
    }

    /// The plain text of a value sealed for `key`; `None` for anything else (another
    /// key's value, another fleet's, a corrupt or plain one).
    pub fn open(&self, key: &str, sealed: &str) -> Option<String> {
        let encoded = sealed.strip_prefix(PREFIX)?;
        let mut whole = URL_SAFE_NO_PAD.decode(encoded).ok()?;
        if whole.len() < NONCE_LEN {
            return None;
        }
        let mut data = whole.split_off(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(&whole).ok()?;
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(key.as_bytes()), &mut data)
            .ok()?;
        String::from_utf8(plain.to_vec()).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

    #[test]
    fn a_sealed_value_opens_only_under_its_own_key() {
        let seal = Seal::from_hex(KEY).expect("a key");
        let sealed = seal
            .seal("toolnexus:a:oauth:x", "secret-token")
            .expect("sealed");
        assert!(!sealed.contains("secret-token"));
        assert_eq!(
            seal.open("toolnexus:a:oauth:x", &sealed).as_deref(),
            Some("secret-token")
        );
        assert_eq!(seal.open("toolnexus:b:oauth:x", &sealed), None);
        let other = Seal::from_hex(&KEY.replace("1f", "ff")).expect("a key");
        assert_eq!(other.open("toolnexus:a:oauth:x", &sealed), None);
        assert_eq!(seal.open("toolnexus:a:oauth:x", "secret-token"), None);
        let mut tampered = sealed.clone();
        tampered.push('A');
        assert_eq!(seal.open("toolnexus:a:oauth:x", &tampered), None);
    }

    #[test]
    fn every_seal_has_its_own_nonce() {
        let seal = Seal::from_hex(KEY).expect("a key");
        assert_ne!(seal.seal("k", "v"), seal.seal("k", "v"));
    }

    #[test]
    fn a_bad_key_is_refused_without_being_repeated() {
        for bad in ["", "abc", &KEY.replace('0', "g"), &format!("{KEY}00")] {
            let error = Seal::from_hex(bad).err().map(|e| e.to_string());
            let error = error.unwrap_or_default();
            assert!(error.contains("64 hex digits"), "{error}");
            assert!(bad.is_empty() || !error.contains(bad));
        }
    }
}
