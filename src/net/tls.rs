//! The roots remote servers' certificates are checked against: the system's, which reqwest
//! loads through rustls-platform-verifier (on Linux the distribution's CA bundle, found as
//! OpenSSL finds it, `SSL_CERT_FILE` and `SSL_CERT_DIR` included), and the PEM file that
//! `NODE_EXTRA_CA_CERTS` names, which Node users expect every client in their process to
//! trust as Node itself does.

mod anchors;
mod validity;

use std::path::Path;
use std::sync::{Arc, OnceLock};

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use rustls::{CertificateError, ClientConfig, OtherError, RootCertStore};

use self::anchors::OwnAnchors;

const VARIABLE: &str = "NODE_EXTRA_CA_CERTS";

/// The TLS configuration of every HTTP client, when `NODE_EXTRA_CA_CERTS` gives roots:
/// the platform's verifier with them added, and each of them accepted as a server's own
/// certificate (see `anchors`); made once per process, as Node reads the variable once.
/// `None` leaves reqwest's own configuration, the platform's verifier alone.
pub fn client_config() -> Option<&'static ClientConfig> {
    static CONFIG: OnceLock<Option<ClientConfig>> = OnceLock::new();
    let config = CONFIG.get_or_init(|| {
        let roots = std::env::var_os(VARIABLE).map(|path| read(Path::new(&path)))?;
        (!roots.is_empty()).then(|| with_roots(roots)).flatten()
    });
    config.as_ref()
}

fn with_roots(roots: Vec<CertificateDer<'static>>) -> Option<ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let platform =
        rustls_platform_verifier::Verifier::new_with_extra_roots(roots.clone(), provider.clone());
    let verifier = OwnAnchors {
        inner: Arc::new(platform.ok()?),
        anchors: roots,
    };
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .ok()?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    // As reqwest offers them with its own configuration: HTTP/2 where the server has it.
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Some(config)
}

/// The usable certificates of the PEM file at `path`, up to its first malformed block (as
/// Node reads it). A missing or unreadable file, and any certificate that cannot be a root,
/// leave the system's roots alone, silently: Node has already warned about this same file
/// when the process started, and reqwest refuses to build a client at all when one of its
/// extra roots does not parse, which would fail every remote server, `http://` ones too.
fn read(path: &Path) -> Vec<CertificateDer<'static>> {
    let Ok(pem) = std::fs::read(path) else {
        return Vec::new();
    };
    CertificateDer::pem_slice_iter(&pem)
        .map_while(Result::ok)
        .filter(|der| RootCertStore::empty().add(der.clone()).is_ok())
        .collect()
}

/// What to do about a TLS failure among `error`'s causes, when there is something to do
/// (a certificate that was not trusted, or a CA's in a server's place); empty otherwise.
pub fn certificate_advice(error: &reqwest::Error) -> &'static str {
    match tls_error(error) {
        Some(rustls::Error::InvalidCertificate(CertificateError::Other(other)))
            if is_a_ca(other) =>
        {
            CA_CERTIFICATE_ADVICE
        }
        Some(rustls::Error::InvalidCertificate(_)) => CERTIFICATE_ADVICE,
        _ => "",
    }
}

/// Whether webpki refused the server's certificate for being a CA's (`openssl req -x509`
/// makes one unless told otherwise): trusting it changes nothing, unlike in Node.
fn is_a_ca(other: &OtherError) -> bool {
    matches!(
        other.0.downcast_ref::<webpki::Error>(),
        Some(webpki::Error::CaUsedAsEndEntity)
    )
}

/// The TLS error somewhere among `error`'s causes: an I/O error carries it inside.
fn tls_error<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
    if let Some(tls) = error.downcast_ref::<rustls::Error>() {
        return Some(tls);
    }
    let inner = error
        .downcast_ref::<std::io::Error>()
        .and_then(|io| io.get_ref());
    let inner = inner.map(|inner| inner as &(dyn std::error::Error + 'static));
    inner
        .and_then(tls_error)
        .or_else(|| error.source().and_then(tls_error))
}

const CA_CERTIFICATE_ADVICE: &str = "; the server's certificate is a CA's (basicConstraints CA:TRUE), which is trusted only as itself: name that very certificate in NODE_EXTRA_CA_CERTS, or give the server one that is not a CA's (`-addext basicConstraints=critical,CA:FALSE` to `openssl req -x509`) and name it, or the CA that signed it, there";
const CERTIFICATE_ADVICE: &str = "; if the server's certificate is signed by a private CA, name that CA's PEM file in NODE_EXTRA_CA_CERTS";

#[cfg(test)]
mod tests {
    use super::read;
    use std::path::Path;

    #[test]
    fn a_missing_file_gives_no_roots() {
        assert!(read(Path::new("/nonexistent/toolnexus-ca.pem")).is_empty());
    }

    #[test]
    fn blocks_that_are_no_certificate_are_skipped() {
        let path = std::env::temp_dir().join(format!("toolnexus-tls-{}.pem", std::process::id()));
        let text = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\nnot PEM\n";
        std::fs::write(&path, text).expect("write a temporary file");
        let roots = read(&path);
        let _ = std::fs::remove_file(&path);
        assert!(roots.is_empty());
    }
}
