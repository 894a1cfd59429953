//! Choosing the host of the `external-name` route when `--host` is not
//! given: local clusters that run in containers or VMs on this machine name
//! it for their nodes, and so for kube-apiserver's aggregator.
//!
//! | cluster (kubeconfig context) | host | where the name comes from |
//! |---|---|---|
//! | kind (`kind-<name>`), Docker Desktop (`docker-desktop`) | `host.docker.internal` | Docker Desktop's DNS; on Linux with Docker Engine it does not resolve (pass `--host` with the kind network's gateway) |
//! | minikube (`minikube`, or a profile whose cluster is named so) | `host.minikube.internal` | minikube writes it into the node's `/etc/hosts` |
//! | k3d (`k3d-<name>`) | `host.k3d.internal` | k3d injects it into the nodes' `/etc/hosts` (and CoreDNS) |
//!
//! Anything else needs `--host`.

/// A chosen host and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detected {
    /// The host name.
    pub host: &'static str,
    /// Which cluster it was taken for, in words.
    pub because: String,
}

/// The host a cluster on this machine reaches it by, from the kubeconfig's
/// context and cluster names.
pub fn detect(context: Option<&str>, cluster: Option<&str>) -> Option<Detected> {
    let names = [context, cluster];
    let found = |pred: &dyn Fn(&str) -> bool| names.iter().flatten().find(|n| pred(n)).copied();
    if let Some(n) = found(&|n| n.starts_with("kind-")) {
        return Some(Detected {
            host: "host.docker.internal",
            because: format!("kind cluster ({n})"),
        });
    }
    if let Some(n) = found(&|n| n.starts_with("k3d-")) {
        return Some(Detected {
            host: "host.k3d.internal",
            because: format!("k3d cluster ({n})"),
        });
    }
    if let Some(n) = found(&|n| n == "minikube" || n.starts_with("minikube-")) {
        return Some(Detected {
            host: "host.minikube.internal",
            because: format!("minikube ({n})"),
        });
    }
    if let Some(n) = found(&|n| n == "docker-desktop") {
        return Some(Detected {
            host: "host.docker.internal",
            because: format!("Docker Desktop's Kubernetes ({n})"),
        });
    }
    None
}

/// Parses `HOST:PORT` (a DNS name or an IPv4 address; the port 1–65535).
pub fn parse_host_port(text: &str) -> Result<(String, u16), String> {
    let (host, port) = text
        .rsplit_once(':')
        .ok_or_else(|| format!("{text:?} is not HOST:PORT"))?;
    if host.is_empty() {
        return Err(format!("{text:?} has no host"));
    }
    let port: u16 = port
        .parse()
        .ok()
        .filter(|p| *p != 0)
        .ok_or_else(|| format!("{text:?} has no valid port (1-65535)"))?;
    Ok((host.to_owned(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_clusters_are_recognised_by_their_context_names() {
        assert_eq!(
            detect(Some("kind-dev"), Some("kind-dev")).unwrap().host,
            "host.docker.internal"
        );
        assert_eq!(
            detect(Some("k3d-lab"), None).unwrap(),
            Detected {
                host: "host.k3d.internal",
                because: "k3d cluster (k3d-lab)".into()
            }
        );
        assert_eq!(
            detect(Some("dev"), Some("minikube")).unwrap().host,
            "host.minikube.internal"
        );
        assert_eq!(
            detect(Some("docker-desktop"), None).unwrap().host,
            "host.docker.internal"
        );
        assert_eq!(detect(Some("prod-eu"), Some("prod-eu")), None);
        assert_eq!(detect(None, None), None);
    }

    #[test]
    fn host_and_port() {
        assert_eq!(
            parse_host_port("localhost:4242"),
            Ok(("localhost".into(), 4242))
        );
        assert!(parse_host_port("localhost").is_err());
        assert!(parse_host_port(":4242").is_err());
        assert!(parse_host_port("h:0").is_err());
        assert!(parse_host_port("h:70000").is_err());
    }
}
