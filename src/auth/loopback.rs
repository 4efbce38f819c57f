//! The loopback listener that receives the browser's redirect (RFC 8252 §7.3): bound on
//! 127.0.0.1 before the flow starts, so that the redirect URI it names is registered.

use std::fmt;

use rmcp::transport::auth::AuthError;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// The path the redirect URI names.
const PATH: &str = "/callback";
/// A redirect's request head is a line and a few headers; more is not a browser's.
const MAX_HEAD: usize = 16 * 1024;

pub struct Loopback {
    listener: TcpListener,
    port: u16,
}

/// Why the loopback listener failed.
#[derive(Debug)]
pub enum LoopbackError {
    Bind { port: u16, error: std::io::Error },
    Address(std::io::Error),
    Accept(std::io::Error),
}

impl fmt::Display for LoopbackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoopbackError::Bind { port, error } => {
                let advice = match error.kind() {
                    std::io::ErrorKind::AddrInUse => {
                        ": another program holds that port; stop it, or set \"callbackPort\" to a free one"
                    }
                    _ => "",
                };
                write!(
                    f,
                    "cannot listen on 127.0.0.1:{port} for the sign-in redirect: {error}{advice}"
                )
            }
            LoopbackError::Address(e) => write!(f, "cannot listen for the sign-in redirect: {e}"),
            LoopbackError::Accept(e) => write!(f, "the sign-in listener failed: {e}"),
        }
    }
}

impl std::error::Error for LoopbackError {}

/// A sign-in's failure, in these words.
impl From<LoopbackError> for AuthError {
    fn from(error: LoopbackError) -> AuthError {
        AuthError::AuthorizationFailed(error.to_string())
    }
}

impl Loopback {
    /// Listens on `port` (0: one the system picks).
    pub async fn bind(port: u16) -> Result<Loopback, LoopbackError> {
        let listener = TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|error| LoopbackError::Bind { port, error })?;
        let port = listener
            .local_addr()
            .map_err(LoopbackError::Address)?
            .port();
        Ok(Loopback { listener, port })
    }

    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{PATH}", self.port)
    }

    /// The URL of the first request for the redirect path, answered with a page that
    /// tells the person to go back; other requests (a browser's favicon) get a 404.
    pub async fn redirect(&self) -> Result<String, LoopbackError> {
        loop {
            let (mut socket, _) = self
                .listener
                .accept()
                .await
                .map_err(LoopbackError::Accept)?;
            let Some(target) = request_target(&mut socket).await else {
                continue;
            };
            if target.split('?').next() != Some(PATH) {
                let _ = socket
                    .write_all(
                        b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                    )
                    .await;
                continue;
            }
            let body =
                "<!doctype html><title>toolnexus</title><p>Signed in. You can close this window.";
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = socket.write_all(format!("{head}{body}").as_bytes()).await;
            return Ok(format!("http://127.0.0.1:{}{target}", self.port));
        }
    }
}

/// The target of a `GET` request line, once the head has arrived.
async fn request_target(socket: &mut tokio::net::TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut chunk = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 || head.len() + n > MAX_HEAD {
            return None;
        }
        head.extend_from_slice(&chunk[..n]);
    }
    let line = std::str::from_utf8(&head).ok()?.lines().next()?;
    let mut parts = line.split(' ');
    (parts.next()? == "GET").then_some(())?;
    let target = parts.next()?;
    target.starts_with('/').then(|| target.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpStream;

    async fn get(port: u16, target: &str) -> String {
        let mut socket = TcpStream::connect(("127.0.0.1", port))
            .await
            .expect("connects");
        let request = format!("GET {target} HTTP/1.1\r\nhost: x\r\n\r\n");
        socket.write_all(request.as_bytes()).await.expect("writes");
        let mut answer = String::new();
        let _ = socket.read_to_string(&mut answer).await;
        answer
    }

    #[tokio::test]
    async fn takes_the_redirect_and_ignores_other_paths() {
        let loopback = Loopback::bind(0).await.expect("binds");
        let port = loopback.port;
        assert_eq!(
            loopback.redirect_uri(),
            format!("http://127.0.0.1:{port}/callback")
        );
        let browser = tokio::spawn(async move {
            let favicon = get(port, "/favicon.ico").await;
            let page = get(port, "/callback?code=c&state=s").await;
            (favicon, page)
        });
        let url = loopback.redirect().await.expect("a redirect");
        assert_eq!(
            url,
            format!("http://127.0.0.1:{port}/callback?code=c&state=s")
        );
        let (favicon, page) = browser.await.expect("joins");
        assert!(favicon.starts_with("HTTP/1.1 404"));
        assert!(page.starts_with("HTTP/1.1 200") && page.contains("Signed in"));
    }
}
