//! A certificate the user trusts as a root (`NODE_EXTRA_CA_CERTS`) that a server presents
//! as its own: Node accepts it, as its own anchor, even when it is a CA's (what
//! `openssl req -x509` makes by default), while webpki refuses a CA's certificate in a
//! server's place whatever the roots. Accepting it trusts nothing new: the user named this
//! very certificate as one to trust, and the handshake's signature, which rustls checks
//! with the certificate's key as ever, proves the server holds its private key. The name
//! and the dates are still checked.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, Error, SignatureScheme};

use super::validity::validity;

/// The platform's verifier (with the extra roots), and the extra roots a server may
/// present as themselves.
#[derive(Debug)]
pub struct OwnAnchors {
    pub inner: Arc<dyn ServerCertVerifier>,
    pub anchors: Vec<CertificateDer<'static>>,
}

impl ServerCertVerifier for OwnAnchors {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let verified = (self.inner).verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        );
        match verified {
            Err(refused)
                if self
                    .anchors
                    .iter()
                    .any(|a| a.as_ref() == end_entity.as_ref()) =>
            {
                own_anchor(end_entity, server_name, now).map_err(|_| refused)
            }
            verified => verified,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// A trusted certificate presented as itself: valid for `server_name`, and now.
fn own_anchor(
    certificate: &CertificateDer<'_>,
    server_name: &ServerName<'_>,
    now: UnixTime,
) -> Result<ServerCertVerified, Error> {
    let parsed = webpki::EndEntityCert::try_from(certificate)
        .map_err(|_| Error::InvalidCertificate(CertificateError::BadEncoding))?;
    parsed
        .verify_is_valid_for_subject_name(server_name)
        .map_err(|_| Error::InvalidCertificate(CertificateError::NotValidForName))?;
    let (not_before, not_after) = validity(certificate.as_ref())
        .ok_or(Error::InvalidCertificate(CertificateError::BadEncoding))?;
    let now = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
    if now < not_before {
        return Err(Error::InvalidCertificate(CertificateError::NotValidYet));
    }
    if now > not_after {
        return Err(Error::InvalidCertificate(CertificateError::Expired));
    }
    Ok(ServerCertVerified::assertion())
}
