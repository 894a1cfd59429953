//! The actions of a `doctor --fix` plan, applied one at a time
//! ([`apply_one`]), each re-reading its target before acting and after and
//! saying what it did and what it verified ([`ActionResult`]): reap an
//! expired `serve` session ([`crate::register::reap`]), delete an
//! unavailable APIService (uid-preconditioned, and only while it is still
//! not Available), remove named finalizers with a resourceVersion-guarded
//! merge patch, delete again a Terminating namespace with no finalizer
//! left (uid-preconditioned), and clear a namespace's `spec.finalizers`
//! through `/finalize`.

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PostParams, Preconditions,
};

use crate::doctor::findings::{Action, ActionOutcome, ActionResult, ObjectRef, PlannedAction};
use crate::doctor::requester::Requester;
use crate::doctor::sessions::session_object;
use crate::error_chain::error_chain;
use crate::register::reap::{self, ReapReport, Reaped, Target};
use crate::register::session::{self as contract, SessionObject};

pub(super) async fn apply_one(req: &Requester, a: &PlannedAction) -> ActionResult {
    match &a.action {
        Action::ReapSession {
            session,
            namespace,
            objects,
        } => reap_session(req, a.id, session, namespace, objects).await,
        Action::DeleteApiService { name, uid } => {
            delete_api_service(req, a.id, name, uid.as_deref()).await
        }
        Action::RemoveFinalizers {
            object,
            remove,
            resource_version,
        } => remove_finalizers(req, a.id, object, remove, resource_version.as_deref()).await,
        Action::DeleteNamespace { name, uid } => {
            delete_namespace(req, a.id, name, uid.as_deref()).await
        }
        Action::FinalizeNamespace { name } => finalize_namespace(req, a.id, name).await,
    }
}

/// Deletes a Terminating namespace with no finalizer left (uid-guarded,
/// and only while it still has none) and checks that it is gone.
async fn delete_namespace(
    req: &Requester,
    id: usize,
    name: &str,
    uid: Option<&str>,
) -> ActionResult {
    let api: Api<Namespace> = Api::all(req.client().clone());
    let current = match reread_namespace(req, &api, id, name, "is gone").await {
        Ok(ns) => ns,
        Err(said) => return said,
    };
    let spec_finalizers = current
        .spec
        .as_ref()
        .and_then(|s| s.finalizers.clone())
        .unwrap_or_default();
    let finalizers = current.metadata.finalizers.clone().unwrap_or_default();
    if uid.is_some() && current.metadata.uid.as_deref() != uid {
        return result(
            id,
            ActionOutcome::Skipped,
            format!("namespace {name} was recreated since the diagnosis (another uid); left alone"),
            None,
        );
    }
    if current.metadata.deletion_timestamp.is_none()
        || !spec_finalizers.is_empty()
        || !finalizers.is_empty()
    {
        return result(
            id,
            ActionOutcome::Skipped,
            format!(
                "namespace {name} changed since the diagnosis (spec.finalizers {spec_finalizers:?}, finalizers \
                 {finalizers:?}); left alone"
            ),
            None,
        );
    }
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            uid: current.metadata.uid.clone(),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    if let Err(err) = req.call(api.delete(name, &params)).await {
        let outcome = if err.is_not_found() {
            ActionOutcome::AlreadyDone
        } else {
            ActionOutcome::Failed
        };
        return result(id, outcome, format!("delete namespace {name}: {err}"), None);
    }
    let detail = format!("deleted namespace {name} again");
    let reread = req.call(api.get_opt(name)).await;
    verified_gone(
        id,
        detail,
        reread,
        "namespace gone",
        "the namespace is still there",
    )
}

/// The result of a delete, from the re-read after it: done when the object
/// is gone (`gone` says so), not verified when it is still there (`still`)
/// or could not be read.
fn verified_gone<T>(
    id: usize,
    detail: String,
    reread: Result<Option<T>, impl std::fmt::Display>,
    gone: &str,
    still: &str,
) -> ActionResult {
    match reread {
        Ok(None) => result(id, ActionOutcome::Done, detail, Some(gone.to_owned())),
        Ok(Some(_)) => result(
            id,
            ActionOutcome::NotVerified,
            detail,
            Some(still.to_owned()),
        ),
        Err(err) => result(
            id,
            ActionOutcome::NotVerified,
            detail,
            Some(format!("re-read failed: {err}")),
        ),
    }
}

async fn reap_session(
    req: &Requester,
    id: usize,
    session: &str,
    namespace: &str,
    objects: &[ObjectRef],
) -> ActionResult {
    let target = Target {
        id: session.to_owned(),
        namespace: if namespace.is_empty() {
            contract::DEFAULT_NAMESPACE.to_owned()
        } else {
            namespace.to_owned()
        },
        objects: objects.iter().map(session_object).collect(),
    };
    match reap::reap(req.client(), &target, req.timeout()).await {
        Ok(Reaped::Alive { .. }) => result(
            id,
            ActionOutcome::Skipped,
            format!(
                "serve session {session} renewed its Lease since the diagnosis; nothing deleted"
            ),
            None,
        ),
        Err(err @ reap::ReapError::ReadLease { .. }) => result(
            id,
            ActionOutcome::Failed,
            format!(
                "could not re-read the Lease of session {session}: {}",
                error_chain(&err)
            ),
            None,
        ),
        Err(err) => result(
            id,
            ActionOutcome::Failed,
            format!(
                "nothing of serve session {session} was touched: {}",
                error_chain(&err)
            ),
            None,
        ),
        Ok(Reaped::Reaped(report)) => reap_result(id, session, &report),
    }
}

/// What a reap did, as an action result.
fn reap_result(id: usize, session: &str, report: &ReapReport) -> ActionResult {
    let describe = |items: &[(SessionObject, String)]| {
        items
            .iter()
            .map(|(o, why)| format!("{}: {why}", o.describe()))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let mut detail = format!(
        "deleted {} object(s) of serve session {session}",
        report.deleted.len()
    );
    if !report.restored.is_empty() {
        detail.push_str(&format!(
            "; restored APIService(s) {} from their saved originals",
            report.restored.join(", ")
        ));
    }
    if !report.left.is_empty() {
        detail.push_str(&format!("; left alone: {}", describe(&report.left)));
    }
    if !report.failed.is_empty() {
        return result(
            id,
            ActionOutcome::Failed,
            format!("{detail}; failed: {}", describe(&report.failed)),
            None,
        );
    }
    if !report.unverified.is_empty() {
        return result(
            id,
            ActionOutcome::NotVerified,
            detail,
            Some(format!("still present: {}", describe(&report.unverified))),
        );
    }
    let gone = if report.deleting.is_empty() {
        "exists any more".to_owned()
    } else {
        format!(
            "exists any more but {}, still being deleted",
            report
                .deleting
                .iter()
                .map(SessionObject::describe)
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let verified = if report.restored.is_empty() {
        format!("none of them {gone}")
    } else {
        format!(
            "none of the deleted ones {gone}; the restored APIServices match their saved originals"
        )
    };
    let outcome = if report.left.is_empty() {
        ActionOutcome::Done
    } else {
        ActionOutcome::NotVerified
    };
    result(id, outcome, detail, Some(verified))
}

async fn delete_api_service(
    req: &Requester,
    id: usize,
    name: &str,
    uid: Option<&str>,
) -> ActionResult {
    let api: Api<APIService> = Api::all(req.client().clone());
    let current = match req.call(api.get_opt(name)).await {
        Ok(Some(current)) => current,
        Ok(None) => {
            return result(
                id,
                ActionOutcome::AlreadyDone,
                format!("APIService {name} is already gone"),
                None,
            );
        }
        Err(err) => {
            return result(
                id,
                ActionOutcome::Failed,
                format!("could not re-read APIService {name}: {err}"),
                None,
            );
        }
    };
    if uid.is_some() && current.metadata.uid.as_deref() != uid {
        return result(
            id,
            ActionOutcome::Skipped,
            format!("APIService {name} was replaced since the diagnosis (new uid); re-run doctor"),
            None,
        );
    }
    let available = current
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Available"))
        .map(|c| c.status.clone());
    if available.as_deref() == Some("True") {
        return result(
            id,
            ActionOutcome::Skipped,
            format!("APIService {name} became Available since the diagnosis; not deleted"),
            None,
        );
    }
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            uid: current.metadata.uid.clone(),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    if let Err(err) = req.call(api.delete(name, &params)).await
        && !err.is_not_found()
    {
        return result(
            id,
            ActionOutcome::Failed,
            format!("delete APIService {name}: {err}"),
            None,
        );
    }
    let detail = format!(
        "deleted APIService {name} (uid {}, Available={})",
        current.metadata.uid.clone().unwrap_or_default(),
        available.unwrap_or_else(|| "unset".into())
    );
    let reread = req.call(api.get_opt(name)).await;
    verified_gone(
        id,
        detail,
        reread,
        &format!("GET apiservice {name}: NotFound"),
        "it still exists",
    )
}

async fn remove_finalizers(
    req: &Requester,
    id: usize,
    object: &ObjectRef,
    remove: &[String],
    planned_rv: Option<&str>,
) -> ActionResult {
    let api = dynamic_api(req, object);
    let target = object.kubectl_args();
    let mut attempts = 0;
    let (removed, rv) = loop {
        attempts += 1;
        let current = match req.call(api.get_metadata_opt(&object.name)).await {
            Ok(Some(current)) => current,
            Ok(None) => {
                return result(
                    id,
                    ActionOutcome::AlreadyDone,
                    format!("{target} is already gone"),
                    None,
                );
            }
            Err(err) => {
                return result(
                    id,
                    ActionOutcome::Failed,
                    format!("could not re-read {target}: {err}"),
                    None,
                );
            }
        };
        let finalizers = current.metadata.finalizers.clone().unwrap_or_default();
        let present: Vec<String> = remove
            .iter()
            .filter(|f| finalizers.contains(f))
            .cloned()
            .collect();
        if present.is_empty() {
            return result(
                id,
                ActionOutcome::AlreadyDone,
                format!("{target} no longer has {}", remove.join(", ")),
                Some(format!("finalizers now {finalizers:?}")),
            );
        }
        let keep: Vec<&String> = finalizers.iter().filter(|f| !remove.contains(f)).collect();
        let rv = current
            .metadata
            .resource_version
            .clone()
            .unwrap_or_default();
        // The resourceVersion in a merge patch is a precondition: 409 if the
        // object changed after it was read.
        let patch = serde_json::json!({"metadata": {"finalizers": keep, "resourceVersion": rv}});
        match req
            .call(api.patch_metadata(&object.name, &PatchParams::default(), &Patch::Merge(&patch)))
            .await
        {
            Ok(_) => break (present, rv),
            Err(err) if err.is_not_found() => {
                return result(
                    id,
                    ActionOutcome::AlreadyDone,
                    format!("{target} is already gone"),
                    None,
                );
            }
            Err(err) if err.is_conflict() && attempts < 3 => continue,
            Err(err) => {
                return result(
                    id,
                    ActionOutcome::Failed,
                    format!("patch {target} (resourceVersion {rv}): {err}"),
                    None,
                );
            }
        }
    };
    let mut detail = format!(
        "removed {} from {target} (merge patch guarded by resourceVersion {rv}",
        removed.join(", ")
    );
    match planned_rv {
        Some(p) if p != rv => detail.push_str(&format!("; it was {p} when planned")),
        _ => {}
    }
    detail.push(')');
    match req.call(api.get_metadata_opt(&object.name)).await {
        Ok(None) => result(
            id,
            ActionOutcome::Done,
            detail,
            Some(format!("{target} is gone: its deletion completed")),
        ),
        Ok(Some(m)) => {
            let now = m.metadata.finalizers.unwrap_or_default();
            if removed.iter().any(|f| now.contains(f)) {
                result(
                    id,
                    ActionOutcome::NotVerified,
                    detail,
                    Some(format!("finalizers still {now:?}")),
                )
            } else {
                result(
                    id,
                    ActionOutcome::Done,
                    detail,
                    Some(format!("finalizers now {now:?}")),
                )
            }
        }
        Err(err) => result(
            id,
            ActionOutcome::NotVerified,
            detail,
            Some(format!("re-read failed: {err}")),
        ),
    }
}

/// The namespace as it is now, or the action's result: already done when
/// it is gone (`gone` says how), failed when it cannot be read.
async fn reread_namespace(
    req: &Requester,
    api: &Api<Namespace>,
    id: usize,
    name: &str,
    gone: &str,
) -> Result<Namespace, ActionResult> {
    match req.call(api.get_opt(name)).await {
        Ok(Some(ns)) => Ok(ns),
        Ok(None) => Err(result(
            id,
            ActionOutcome::AlreadyDone,
            format!("namespace {name} {gone}"),
            None,
        )),
        Err(err) => Err(result(
            id,
            ActionOutcome::Failed,
            format!("could not re-read namespace {name}: {err}"),
            None,
        )),
    }
}

pub(super) async fn finalize_namespace(req: &Requester, id: usize, name: &str) -> ActionResult {
    let api: Api<Namespace> = Api::all(req.client().clone());
    let mut ns =
        match reread_namespace(req, &api, id, name, "finished deleting without /finalize").await {
            Ok(ns) => ns,
            Err(said) => return said,
        };
    let before = ns
        .spec
        .as_ref()
        .and_then(|s| s.finalizers.clone())
        .unwrap_or_default();
    if before.is_empty() {
        return result(
            id,
            ActionOutcome::AlreadyDone,
            format!("namespace {name} has no spec.finalizers left"),
            None,
        );
    }
    ns.spec.get_or_insert_with(Default::default).finalizers = Some(Vec::new());
    // The body keeps the resourceVersion just read: a conflict if it changed.
    if let Err(err) = req
        .call(api.replace_subresource("finalize", name, &PostParams::default(), &ns))
        .await
    {
        let outcome = if err.is_not_found() {
            ActionOutcome::AlreadyDone
        } else {
            ActionOutcome::Failed
        };
        return result(
            id,
            outcome,
            format!("PUT /api/v1/namespaces/{name}/finalize: {err}"),
            None,
        );
    }
    let detail =
        format!("cleared spec.finalizers {before:?} of namespace {name} through /finalize");
    match req.call(api.get_opt(name)).await {
        Ok(None) => result(
            id,
            ActionOutcome::Done,
            detail,
            Some("namespace gone".into()),
        ),
        Ok(Some(n)) => {
            let left = n.spec.and_then(|s| s.finalizers).unwrap_or_default();
            if left.is_empty() {
                result(
                    id,
                    ActionOutcome::Done,
                    detail,
                    Some("spec.finalizers now []; the namespace is removed once metadata.finalizers are empty".into()),
                )
            } else {
                result(
                    id,
                    ActionOutcome::NotVerified,
                    detail,
                    Some(format!("spec.finalizers still {left:?}")),
                )
            }
        }
        Err(err) => result(
            id,
            ActionOutcome::NotVerified,
            detail,
            Some(format!("re-read failed: {err}")),
        ),
    }
}

fn dynamic_api(req: &Requester, o: &ObjectRef) -> Api<DynamicObject> {
    let ar = ApiResource {
        group: o.group().to_owned(),
        version: o.version().to_owned(),
        api_version: o.api_version.clone(),
        kind: o.kind.clone(),
        plural: o.resource.clone(),
    };
    match &o.namespace {
        Some(ns) => Api::namespaced_with(req.client().clone(), ns, &ar),
        None => Api::all_with(req.client().clone(), &ar),
    }
}

pub(super) fn result(
    action: usize,
    outcome: ActionOutcome,
    detail: String,
    verified: Option<String>,
) -> ActionResult {
    ActionResult {
        action,
        outcome,
        detail,
        verified,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reap_results_say_what_was_restored_and_what_is_left() {
        let cm = SessionObject::of(&contract::CONFIG_MAP, Some("kubectl-cozy-system"), "x");
        let done = reap_result(
            1,
            "abc",
            &ReapReport {
                restored: vec!["v1alpha1.apps.cozystack.io".into()],
                deleted: vec![cm.clone()],
                ..ReapReport::default()
            },
        );
        assert_eq!(done.outcome, ActionOutcome::Done);
        assert_eq!(
            done.detail,
            "deleted 1 object(s) of serve session abc; restored APIService(s) v1alpha1.apps.cozystack.io from their \
             saved originals"
        );
        let failed = reap_result(
            1,
            "abc",
            &ReapReport {
                failed: vec![(cm.clone(), "HTTP 403 Forbidden: no".into())],
                ..ReapReport::default()
            },
        );
        assert_eq!(failed.outcome, ActionOutcome::Failed);
        assert!(
            failed
                .detail
                .ends_with("failed: configmaps/x -n kubectl-cozy-system: HTTP 403 Forbidden: no"),
            "{}",
            failed.detail
        );
        let left = reap_result(
            1,
            "abc",
            &ReapReport {
                left: vec![(cm, "kept".into())],
                ..ReapReport::default()
            },
        );
        assert_eq!(left.outcome, ActionOutcome::NotVerified);
        // A namespace still Terminating is said so, not "gone".
        let ns = SessionObject::of(&contract::NAMESPACE, None, "kubectl-cozy-system");
        let deleting = reap_result(
            1,
            "abc",
            &ReapReport {
                deleted: vec![ns.clone()],
                deleting: vec![ns],
                ..ReapReport::default()
            },
        );
        assert_eq!(deleting.outcome, ActionOutcome::Done);
        assert_eq!(
            deleting.verified.as_deref(),
            Some(
                "none of them exists any more but namespaces/kubectl-cozy-system, still being deleted"
            )
        );
    }
}
