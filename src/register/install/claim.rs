//! Whether an install may point its APIServices at itself: an APIService's
//! name depends only on its group/version, not on the install's namespace,
//! so the cluster may already hold one that another server uses — another
//! install of kubectl-cozy in another namespace, a `serve` session, or
//! another extension server (Cozystack's own). Server-side apply, forced,
//! would silently repoint it, and a later `install --delete` would then
//! delete it. [`refusals`] reads each one and says why the install must not
//! take it; the user decides (delete it by hand, or install elsewhere).

use kube::Client;

use super::{InstallSpec, NAME};
use crate::register::apiservice::{self, GroupVersion, Occupant};

/// Who holds each of `spec`'s APIServices that the install must not take:
/// one sentence per APIService, empty when the install may apply them all.
pub async fn refusals(client: &Client, spec: &InstallSpec) -> Result<Vec<String>, kube::Error> {
    let ours = service_of(&spec.namespace);
    let mut out = Vec::new();
    for gv in spec.served() {
        let occupant = apiservice::occupant(client, &gv.api_service_name()).await?;
        if let Some(refusal) = refusal(&occupant, &gv, &ours) {
            out.push(refusal);
        }
    }
    Ok(out)
}

/// `namespace/name` of the Service of the install in `namespace`.
pub fn service_of(namespace: &str) -> String {
    format!("{namespace}/{NAME}")
}

/// Why the install whose Service is `ours` (`namespace/name`) must not take
/// `gv`'s APIService from `occupant`, or `None` when it may (nobody holds it,
/// or this install does).
pub fn refusal(occupant: &Occupant, gv: &GroupVersion, ours: &str) -> Option<String> {
    let name = gv.api_service_name();
    let free_it = format!(
        "delete it first (`kubectl delete apiservice {name}`) if this install is to serve {gv}"
    );
    match occupant {
        Occupant::Free => None,
        Occupant::Foreign {
            service: Some(service),
            ..
        } if service == ours => None,
        Occupant::Foreign { service, object } => {
            let service = service.as_deref().unwrap_or("(none)");
            let install_there =
                object["metadata"]["labels"]["app.kubernetes.io/managed-by"].as_str() == Some(NAME)
                    && service.ends_with(&format!("/{NAME}"));
            let who = if install_there {
                let namespace = service.split('/').next().unwrap_or_default();
                format!(" (the install of kubectl-cozy in namespace {namespace})")
            } else {
                String::new()
            };
            Some(format!(
                "{gv} is already served: APIService {name} points at service {service}{who}; {free_it}"
            ))
        }
        Occupant::Session {
            id, holder, alive, ..
        } => Some(if *alive {
            format!(
                "{gv} is served by kubectl cozy serve session {id} ({}); stop that serve first",
                holder.as_deref().unwrap_or("holder unknown")
            )
        } else {
            format!(
                "APIService {name} was left by kubectl cozy serve session {id}, which has ended; \
                 remove what it left with `kubectl cozy doctor --fix` first"
            )
        }),
        Occupant::Local => Some(format!(
            "{gv} is served by kube-apiserver itself (APIService {name} has no service: built-in or CRDs)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::register::session::SessionRecord;

    fn gv() -> GroupVersion {
        GroupVersion {
            group: "apps.cozystack.io".into(),
            version: "v1alpha1".into(),
        }
    }

    fn foreign(service: &str, managed_by: Option<&str>) -> Occupant {
        Occupant::Foreign {
            service: Some(service.into()),
            object: json!({"metadata": {"labels": {"app.kubernetes.io/managed-by": managed_by}}}),
        }
    }

    #[test]
    fn nobody_or_this_install_may_be_taken() {
        let ours = service_of("cozy");
        assert_eq!(refusal(&Occupant::Free, &gv(), &ours), None);
        assert_eq!(
            refusal(&foreign("cozy/kubectl-cozy", Some(NAME)), &gv(), &ours),
            None
        );
    }

    #[test]
    fn another_install_is_named_by_its_namespace() {
        let text = refusal(
            &foreign("other/kubectl-cozy", Some(NAME)),
            &gv(),
            &service_of("cozy"),
        )
        .unwrap();
        assert_eq!(
            text,
            "apps.cozystack.io/v1alpha1 is already served: APIService v1alpha1.apps.cozystack.io points at \
             service other/kubectl-cozy (the install of kubectl-cozy in namespace other); delete it first \
             (`kubectl delete apiservice v1alpha1.apps.cozystack.io`) if this install is to serve \
             apps.cozystack.io/v1alpha1"
        );
    }

    #[test]
    fn another_server_is_named_by_its_service() {
        let text = refusal(
            &foreign("cozy-system/cozystack-api", None),
            &gv(),
            &service_of("cozy"),
        )
        .unwrap();
        assert!(
            text.contains("points at service cozy-system/cozystack-api; delete it first"),
            "{text}"
        );
    }

    #[test]
    fn serve_sessions_and_kube_apiserver_are_refused() {
        let session = |alive| Occupant::Session {
            id: "3f2a".into(),
            namespace: "kubectl-cozy-system".into(),
            holder: Some("bob@box, pid 7".into()),
            since: None,
            alive,
            gone: None,
            record: SessionRecord::default(),
            object: json!({}),
        };
        let ours = service_of("cozy");
        let live = refusal(&session(true), &gv(), &ours).unwrap();
        assert!(
            live.contains("serve session 3f2a (bob@box, pid 7); stop that serve first"),
            "{live}"
        );
        let ended = refusal(&session(false), &gv(), &ours).unwrap();
        assert!(
            ended.contains("which has ended") && ended.contains("doctor --fix"),
            "{ended}"
        );
        let local = refusal(&Occupant::Local, &gv(), &ours).unwrap();
        assert!(local.contains("kube-apiserver itself"), "{local}");
    }
}
