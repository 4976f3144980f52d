//! Peer addresses given by name (`/dns/host/tcp/15600`, `/dns4/…`, `/dns6/…`), resolved with
//! the system resolver at each dial (`docs/peering.md` §1), so a peer that moves to another
//! address is found again; the transport itself dials only IP addresses.

use std::net::IpAddr;

use libp2p::{multiaddr::Protocol, Multiaddr};

/// Which address family a name may resolve to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Any,
    V4,
    V6,
}

/// The host name and TCP port of `addr` when it starts with a `/dns*` component followed by
/// `/tcp`; `None` for IP addresses.
pub fn name_of(addr: &Multiaddr) -> Option<(String, u16)> {
    let mut parts = addr.iter();
    let host = match parts.next()? {
        Protocol::Dns(h) | Protocol::Dns4(h) | Protocol::Dns6(h) => h.to_string(),
        _ => return None,
    };
    match parts.next()? {
        Protocol::Tcp(port) => Some((host, port)),
        _ => None,
    }
}

fn family(addr: &Multiaddr) -> Family {
    match addr.iter().next() {
        Some(Protocol::Dns4(_)) => Family::V4,
        Some(Protocol::Dns6(_)) => Family::V6,
        _ => Family::Any,
    }
}

/// `addr` with its name replaced by `ip` (the rest, e.g. `/p2p/<id>`, kept).
fn with_ip(addr: &Multiaddr, ip: IpAddr) -> Multiaddr {
    addr.iter()
        .enumerate()
        .map(|(i, p)| match (i, ip) {
            (0, IpAddr::V4(v4)) => Protocol::Ip4(v4),
            (0, IpAddr::V6(v6)) => Protocol::Ip6(v6),
            _ => p,
        })
        .collect()
}

/// Every address of `addrs` with names resolved (IP addresses as they are); a name that
/// does not resolve contributes nothing.
pub async fn resolve_all(addrs: &[Multiaddr]) -> Vec<Multiaddr> {
    let mut out = Vec::new();
    for addr in addrs {
        let Some((host, port)) = name_of(addr) else {
            out.push(addr.clone());
            continue;
        };
        match tokio::net::lookup_host(format!("{host}:{port}")).await {
            Ok(found) => {
                let want = family(addr);
                for sock in found {
                    let fits = match want {
                        Family::Any => true,
                        Family::V4 => sock.is_ipv4(),
                        Family::V6 => sock.is_ipv6(),
                    };
                    let resolved = with_ip(addr, sock.ip());
                    if fits && !out.contains(&resolved) {
                        out.push(resolved);
                    }
                }
            }
            Err(e) => tracing::info!(%addr, error = %e, "peer address does not resolve"),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ma(s: &str) -> Multiaddr {
        s.parse().expect("multiaddr")
    }

    #[test]
    fn names_are_found_only_in_dns_addresses() {
        assert_eq!(
            name_of(&ma("/dns/node.example/tcp/15600")),
            Some(("node.example".into(), 15600))
        );
        assert_eq!(
            name_of(&ma("/dns4/localhost/tcp/1")),
            Some(("localhost".into(), 1))
        );
        assert_eq!(name_of(&ma("/ip4/127.0.0.1/tcp/15600")), None);
        assert_eq!(name_of(&ma("/dns/x/udp/1")), None);
    }

    #[tokio::test]
    async fn localhost_resolves_to_loopback_keeping_the_rest() {
        let addrs =
            resolve_all(&[ma("/dns4/localhost/tcp/15600"), ma("/ip4/10.0.0.1/tcp/1")]).await;
        assert_eq!(
            addrs,
            vec![ma("/ip4/127.0.0.1/tcp/15600"), ma("/ip4/10.0.0.1/tcp/1")]
        );
    }
}
