//! The session Lease from `serve`'s side: created first (every namespaced
//! object of the session is owned by it), renewed every third of its duration
//! until serve stops, never renewed again after that — so once serve is gone,
//! however it went, the Lease expires and the agent (or the next `serve`, or
//! `doctor --fix`) reaps the session.
//!
//! [`Renewer`] reports its state through a watch channel: renewed, failing
//! (with the error, retried every second), or lost (the Lease is gone: the
//! session was reaped while serve could not renew it).

use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
use tokio::sync::watch;

use super::session::{self, SessionRecord};

/// The Lease's duration unless told otherwise.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(15);
/// How soon a failed renewal is retried.
const RETRY: Duration = Duration::from_secs(1);
/// Limit of one renewal request.
const REQUEST_LIMIT: Duration = Duration::from_secs(4);
/// Limit of the last renewal when renewing stops (it delays the teardown).
const FINAL_RENEWAL_LIMIT: Duration = Duration::from_secs(1);

/// Failures creating the Lease.
#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    /// The create request failed.
    #[error("create the session Lease {namespace}/{name}")]
    Create {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// Why.
        #[source]
        source: kube::Error,
    },
}

/// Who holds the Lease: `user@host, pid N` of this process.
pub fn holder() -> String {
    let user = ["USER", "LOGNAME", "USERNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()))
        .or_else(user_of_process)
        .unwrap_or_else(|| "unknown".to_owned());
    session::holder_identity(&user, &hostname(), std::process::id())
}

/// Without `$USER` (CI, containers, cron): the name `/etc/passwd` gives the
/// user owning this process (`/proc/self`), as `id -un` prints it, else
/// `uid N`.
fn user_of_process() -> Option<String> {
    use std::os::unix::fs::MetadataExt as _;
    let uid = std::fs::metadata("/proc/self").ok()?.uid();
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    Some(user_named(&passwd, uid).unwrap_or_else(|| format!("uid {uid}")))
}

/// The name of `uid` in a passwd file's text.
fn user_named(passwd: &str, uid: u32) -> Option<String> {
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        let name = fields.next()?;
        let id = fields.nth(1)?;
        (id.parse() == Ok(uid) && !name.is_empty()).then(|| name.to_owned())
    })
}

fn hostname() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            ["/proc/sys/kernel/hostname", "/etc/hostname"]
                .iter()
                .find_map(|p| std::fs::read_to_string(p).ok())
                .map(|h| h.trim().to_owned())
                .filter(|h| !h.is_empty())
        })
        .unwrap_or_else(|| "unknown-host".to_owned())
}

/// The renewal period for a Lease of `duration`: a third of it.
pub fn renew_every(duration: Duration) -> Duration {
    duration / 3
}

/// Creates session `id`'s Lease in `namespace`, held by `holder`, carrying
/// `record`.
pub async fn create(
    client: &Client,
    namespace: &str,
    id: &str,
    holder: &str,
    duration: Duration,
    record: &SessionRecord,
) -> Result<Lease, LeaseError> {
    let seconds = i32::try_from(duration.as_secs().max(1)).unwrap_or(i32::MAX);
    let lease = session::lease_object(id, namespace, holder, seconds, Timestamp::now(), record);
    Api::<Lease>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &lease)
        .await
        .map_err(|source| LeaseError::Create {
            namespace: namespace.to_owned(),
            name: session::lease_name(id),
            source,
        })
}

/// What the renewer is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RenewState {
    /// The last renewal succeeded.
    Renewed {
        /// When.
        at: Instant,
    },
    /// Renewals fail since `since` (last success, or start); retried.
    Failing {
        /// The last successful renewal (or the Lease's creation).
        since: Instant,
        /// The last error.
        error: String,
    },
    /// The Lease is gone: the session was reaped. Renewal stopped.
    Lost,
    /// Stopped on request.
    Stopped,
}

/// Renews a Lease in the background until stopped.
pub struct Renewer {
    state: watch::Receiver<RenewState>,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Renewer {
    /// Starts renewing Lease `name` in `namespace` every `every`.
    pub fn start(client: Client, namespace: &str, name: &str, every: Duration) -> Renewer {
        let (state_tx, state) = watch::channel(RenewState::Renewed { at: Instant::now() });
        let (stop, mut stop_rx) = watch::channel(false);
        let api: Api<Lease> = Api::namespaced(client, namespace);
        let name = name.to_owned();
        let task = tokio::spawn(async move {
            let mut last_ok = Instant::now();
            let mut delay = every;
            // Said once per outage (retries come every second), then once
            // more if the Lease's duration passes, and when it ends.
            let mut failing = false;
            let mut said_expired = false;
            let lapse = every * 3;
            loop {
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    _ = stop_rx.wait_for(|s| *s) => break,
                }
                match renew(&api, &name).await {
                    Ok(()) => {
                        if std::mem::take(&mut failing) {
                            tracing::info!(
                                lease = %name,
                                after = ?last_ok.elapsed(),
                                "renewed the session Lease again"
                            );
                        }
                        said_expired = false;
                        last_ok = Instant::now();
                        delay = every;
                        let _ = state_tx.send(RenewState::Renewed { at: last_ok });
                    }
                    Err(Renewal::Gone) => {
                        let _ = state_tx.send(RenewState::Lost);
                        return;
                    }
                    Err(Renewal::Failed(error)) => {
                        if !std::mem::replace(&mut failing, true) {
                            tracing::warn!(lease = %name, %error, "renew the session Lease (retrying every second)");
                        } else if !said_expired && last_ok.elapsed() >= lapse {
                            said_expired = true;
                            tracing::warn!(
                                lease = %name,
                                %error,
                                "the session Lease has not been renewed for its duration: the agent, the next serve or doctor --fix may reap the session"
                            );
                        }
                        delay = RETRY.min(every);
                        let _ = state_tx.send(RenewState::Failing {
                            since: last_ok,
                            error,
                        });
                    }
                }
            }
            // Stopped for the teardown: one last renewal (bounded) gives it
            // the Lease's whole duration before the agent or the guard
            // judges the session dead and reaps beside it.
            if *stop_rx.borrow() {
                let _ = tokio::time::timeout(FINAL_RENEWAL_LIMIT, renew(&api, &name)).await;
            }
            let _ = state_tx.send(RenewState::Stopped);
        });
        Renewer { state, stop, task }
    }

    /// The renewer's state, updated on every attempt.
    pub fn state(&self) -> watch::Receiver<RenewState> {
        self.state.clone()
    }

    /// Stops renewing, after one last renewal (the Lease then expires
    /// unless deleted).
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

enum Renewal {
    Gone,
    Failed(String),
}

async fn renew(api: &Api<Lease>, name: &str) -> Result<(), Renewal> {
    let patch = serde_json::json!({"spec": {"renewTime": MicroTime(Timestamp::now())}});
    match tokio::time::timeout(
        REQUEST_LIMIT,
        api.patch(name, &PatchParams::default(), &Patch::Merge(&patch)),
    )
    .await
    {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(kube::Error::Api(status))) if status.code == 404 => Err(Renewal::Gone),
        Ok(Err(err)) => Err(Renewal::Failed(err.to_string())),
        Err(_) => Err(Renewal::Failed(format!(
            "no answer within {REQUEST_LIMIT:?}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cluster whose Lease PATCHes fail `failures` times (HTTP 500), then
    /// succeed; counts them in `calls`.
    fn flaky_cluster(
        failures: usize,
        calls: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    ) -> Client {
        let service = tower::service_fn(move |_req: http::Request<kube::client::Body>| {
            let n = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async move {
                let (code, body) = if n < failures {
                    (
                        500,
                        serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                              "code": 500, "reason": "InternalError", "message": "etcd is away"}),
                    )
                } else {
                    (
                        200,
                        serde_json::json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                              "metadata": {"name": "kubectl-cozy-a", "namespace": "ns"}}),
                    )
                };
                Ok::<_, std::convert::Infallible>(
                    http::Response::builder()
                        .status(code)
                        .header("content-type", "application/json")
                        .body(kube::client::Body::from(body.to_string().into_bytes()))
                        .unwrap(),
                )
            }
        });
        Client::new(service, "ns")
    }

    /// An outage is said once when it begins (renewals are retried every
    /// second, each would be a line), once when the Lease's duration has
    /// passed (a reaper may act), and once when renewing works again.
    #[tokio::test]
    async fn an_outage_is_said_when_it_begins_when_the_lease_lapses_and_when_it_ends() {
        let (subscriber, log) = crate::test_log::subscriber(None);
        let _guard = tracing::subscriber::set_default(subscriber);
        let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let renewer = Renewer::start(
            flaky_cluster(8, calls.clone()),
            "ns",
            "kubectl-cozy-a",
            Duration::from_millis(30),
        );
        let mut state = renewer.state();
        tokio::time::timeout(Duration::from_secs(10), async {
            while calls.load(std::sync::atomic::Ordering::SeqCst) < 9
                || !matches!(*state.borrow_and_update(), RenewState::Renewed { .. })
            {
                let _ = state.changed().await;
            }
        })
        .await
        .expect("renewed again");
        renewer.stop().await;
        let text = log.text();
        let count = |needle: &str| text.matches(needle).count();
        assert_eq!(
            count("renew the session Lease (retrying every second)"),
            1,
            "{text}"
        );
        assert_eq!(count("has not been renewed for its duration"), 1, "{text}");
        assert_eq!(count("renewed the session Lease again"), 1, "{text}");
    }

    /// Stopping renews once more: the teardown that follows gets the
    /// Lease's whole duration before a reaper judges the session dead.
    #[tokio::test]
    async fn stopping_renews_once_more() {
        let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let renewer = Renewer::start(
            flaky_cluster(0, calls.clone()),
            "ns",
            "kubectl-cozy-a",
            Duration::from_secs(3600),
        );
        renewer.stop().await;
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn a_user_is_named_from_the_passwd_file() {
        let passwd =
            "root:x:0:0:root:/root:/bin/bash\n# comment\nalice:x:1000:1000::/home/alice:/bin/sh\n";
        assert_eq!(user_named(passwd, 0).as_deref(), Some("root"));
        assert_eq!(user_named(passwd, 1000).as_deref(), Some("alice"));
        assert_eq!(user_named(passwd, 1001), None);
    }

    #[test]
    fn renewal_is_a_third_of_the_duration_and_the_holder_names_this_process() {
        assert_eq!(renew_every(DEFAULT_DURATION), Duration::from_secs(5));
        let holder = holder();
        assert!(holder.contains('@'), "{holder}");
        assert!(
            holder.ends_with(&format!(", pid {}", std::process::id())),
            "{holder}"
        );
    }
}
