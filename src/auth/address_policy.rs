//! Where an OAuth request may connect. A sign-in follows URLs a server's metadata names;
//! one naming a private, link-local, shared or cloud-metadata address would have the
//! client probe the host's own network (SSRF). So every OAuth request resolves its host
//! once, refuses such an address before anything is sent (unless the entry says
//! `oauth.allowPrivateNetwork`), and connects to exactly the address it checked: a second
//! DNS answer cannot switch it. Loopback stays allowed, as the endpoint policy allows
//! `http:` there.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use reqwest::Url;

/// How long an OAuth request may take when the caller says nothing.
const TIMEOUT: Duration = Duration::from_secs(30);

/// The most of an OAuth answer read: metadata and token responses are small.
const MAX_BODY: usize = 1 << 20;

/// Cloud metadata services by name, refused whatever they resolve to.
const METADATA_HOSTS: [&str; 3] = [
    "metadata",
    "metadata.google.internal",
    "metadata.azure.internal",
];

/// Why a request was not sent, or failed.
#[derive(Debug)]
pub enum Unsent {
    /// The host resolves to (or is) an address the policy refuses.
    Private { host: String, address: IpAddr },
    /// A cloud metadata service's name.
    MetadataHost(String),
    /// The URL has no host, the host no address, or the request failed.
    Failed(String),
}

impl std::fmt::Display for Unsent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unsent::Private { host, address } => write!(
                f,
                "its host {host} resolves to {address}, a private network address"
            ),
            Unsent::MetadataHost(host) => write!(f, "{host} is a cloud metadata service"),
            Unsent::Failed(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for Unsent {}

/// Whether `ip` is in a private (10/8, 172.16/12, 192.168/16, fc00::/7), link-local
/// (169.254/16, fe80::/10, where cloud metadata lives), shared (100.64/10) or unspecified
/// range, an IPv4 address mapped into IPv6 judged as itself. Loopback is not.
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => private_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => private_v4(v4),
            None => private_v6(v6),
        },
    }
}

fn private_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || (a == 100 && (64..128).contains(&b))
}

fn private_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    (first & 0xfe00) == 0xfc00 || (first & 0xffc0) == 0xfe80 || ip.is_unspecified()
}

/// The one address a request to `url` connects to: its host resolved once and checked.
pub async fn address(url: &Url, allow_private: bool) -> Result<SocketAddr, Unsent> {
    let lookup = |host: String, port: u16| async move {
        let found = tokio::net::lookup_host((host.as_str(), port)).await;
        found
            .map(|addresses| addresses.collect())
            .unwrap_or_default()
    };
    address_by(url, allow_private, lookup).await
}

/// `address`, with `lookup` answering what a name resolves to: asked once, its first
/// answer the one checked and connected to.
async fn address_by<F, Fut>(url: &Url, allow_private: bool, lookup: F) -> Result<SocketAddr, Unsent>
where
    F: FnOnce(String, u16) -> Fut,
    Fut: std::future::Future<Output = Vec<SocketAddr>>,
{
    let host = url
        .host_str()
        .ok_or_else(|| Unsent::Failed("the URL has no host".into()))?;
    let port = url.port_or_known_default().unwrap_or(443);
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if !allow_private
        && METADATA_HOSTS.contains(&bare.trim_end_matches('.').to_ascii_lowercase().as_str())
    {
        return Err(Unsent::MetadataHost(bare.to_owned()));
    }
    let resolved = match bare.parse::<IpAddr>() {
        Ok(ip) => SocketAddr::new(ip, port),
        Err(_) => lookup(bare.to_owned(), port)
            .await
            .into_iter()
            .next()
            .ok_or_else(|| Unsent::Failed(format!("{bare} has no address")))?,
    };
    if !allow_private && is_private(resolved.ip()) {
        return Err(Unsent::Private {
            host: bare.to_owned(),
            address: resolved.ip(),
        });
    }
    Ok(resolved)
}

/// Sends `request` to the address `address` checked, following no redirect, and reads a
/// bounded answer.
pub async fn send(
    request: http::Request<Vec<u8>>,
    timeout: Option<Duration>,
    allow_private: bool,
) -> Result<http::Response<Vec<u8>>, Unsent> {
    let failed = |why: String| Unsent::Failed(why);
    let url = Url::parse(&request.uri().to_string()).map_err(|e| failed(e.to_string()))?;
    let pinned = address(&url, allow_private).await?;
    let mut client = crate::net::client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(timeout.unwrap_or(TIMEOUT));
    if let Some(host) = url.host_str().filter(|h| h.parse::<IpAddr>().is_err()) {
        client = client.resolve(host, pinned);
    }
    let client = client
        .build()
        .map_err(|e| failed(format!("cannot build an HTTP client: {e}")))?;
    let request = reqwest::Request::try_from(request).map_err(|e| failed(e.to_string()))?;
    let mut response = client
        .execute(request)
        .await
        .map_err(|e| failed(e.to_string()))?;
    let mut answer = http::Response::builder().status(response.status());
    for (name, value) in response.headers() {
        answer = answer.header(name, value);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| failed(e.to_string()))? {
        if body.len() + chunk.len() > MAX_BODY {
            return Err(failed(format!("the answer is over {MAX_BODY} bytes")));
        }
        body.extend_from_slice(&chunk);
    }
    answer.body(body).map_err(|e| failed(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_ranges_and_their_mapped_forms() {
        for ip in [
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.255",
            "0.0.0.0",
            "fc00::1",
            "fd00:ec2::254",
            "fe80::1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "::",
        ] {
            assert!(is_private(ip.parse().expect("an address")), "{ip}");
        }
        for ip in [
            "127.0.0.1",
            "::1",
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "192.169.0.1",
            "2001:db8::1",
            "::ffff:8.8.8.8",
        ] {
            assert!(!is_private(ip.parse().expect("an address")), "{ip}");
        }
    }

    #[tokio::test]
    async fn a_name_is_resolved_once_and_its_first_answer_is_the_one_kept() {
        let url = Url::parse("https://auth.example/token").expect("a URL");
        let answers = |first: &str, then: &str| {
            let all: Vec<SocketAddr> = [first, then]
                .iter()
                .map(|a| a.parse().expect("an address"))
                .collect();
            let asked = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let counted = asked.clone();
            let lookup = move |_: String, _: u16| {
                counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                std::future::ready(all)
            };
            (lookup, asked)
        };
        // A public first answer is kept; the private one after it is never used.
        let (lookup, asked) = answers("93.184.216.34:443", "10.0.0.1:443");
        let kept = address_by(&url, false, lookup).await.expect("allowed");
        assert_eq!(
            (
                kept.to_string().as_str(),
                asked.load(std::sync::atomic::Ordering::Relaxed)
            ),
            ("93.184.216.34:443", 1)
        );
        // A private first answer is refused, not skipped for a public one after it.
        let (lookup, _) = answers("169.254.169.254:443", "93.184.216.34:443");
        let refused = address_by(&url, false, lookup).await;
        assert!(
            matches!(refused, Err(Unsent::Private { .. })),
            "{refused:?}"
        );
    }

    #[tokio::test]
    async fn the_address_checked_is_the_one_resolved_and_loopback_passes() {
        let url = |u: &str| Url::parse(u).expect("a URL");
        let refused = address(&url("https://10.0.0.7/token"), false).await;
        assert!(
            matches!(refused, Err(Unsent::Private { .. })),
            "{refused:?}"
        );
        let allowed = address(&url("https://10.0.0.7/token"), true).await;
        assert_eq!(allowed.expect("allowed").to_string(), "10.0.0.7:443");
        let local = address(&url("http://localhost:8080/t"), false)
            .await
            .expect("loopback");
        assert!(local.ip().is_loopback());
        let metadata = address(&url("http://metadata.google.internal/x"), false).await;
        assert!(
            matches!(metadata, Err(Unsent::MetadataHost(_))),
            "{metadata:?}"
        );
        let mapped = address(&url("https://[::ffff:192.168.0.1]/x"), false).await;
        assert!(matches!(mapped, Err(Unsent::Private { .. })), "{mapped:?}");
    }
}
