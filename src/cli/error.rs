//! Exit codes and the one error type the command line reports. Commands return
//! [`CliError`]; [`report`] prints `error: …` with its causes on stderr and
//! chooses the documented exit code. A broken pipe on stdout is not an error.

use std::error::Error as StdError;
use std::io::Write;
use std::process::ExitCode;

/// Documented exit codes of `kubectl cozy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// 0: the command did what was asked.
    Success,
    /// 1: the command failed.
    Error,
    /// 2: the command line was invalid.
    Usage,
    /// 3: `doctor` ran and found problems.
    ProblemsFound,
    /// 4: the cluster could not be reached.
    Unreachable,
    /// 5: `doctor` found nothing wrong but could not run every check
    /// (permissions, timeouts).
    Incomplete,
}

impl ExitStatus {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Error => 1,
            ExitStatus::Usage => 2,
            ExitStatus::ProblemsFound => 3,
            ExitStatus::Unreachable => 4,
            ExitStatus::Incomplete => 5,
        }
    }
}

/// Everything a command can fail with, as the user sees it.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The command line was well-formed for clap but makes no sense.
    #[error("{0}")]
    Usage(String),
    /// The command line made sense, but what it would change is not the
    /// command's to change (a file another tool installed): exit 1.
    #[error("{0}")]
    Refused(String),
    /// The subcommand exists but is not implemented in this build.
    #[error("`kubectl cozy {command}` is not available yet in kubectl-cozy {version}; {hint}")]
    NotAvailable {
        /// The subcommand, e.g. `doctor`.
        command: &'static str,
        /// This build's version.
        version: &'static str,
        /// What the user can do instead.
        hint: &'static str,
    },
    /// No kubeconfig, or a kubeconfig that does not select a usable context.
    #[error(transparent)]
    Kubeconfig(#[from] crate::kubeconfig::Error),
    /// The cluster did not answer.
    #[error("cannot reach the cluster at {server}")]
    Unreachable {
        /// The API server URL from the kubeconfig.
        server: String,
        /// The transport or HTTP error.
        #[source]
        source: kube::Error,
    },
    /// The server at the kubeconfig's address answered a path every
    /// Kubernetes API server serves (`/version`, `/apis`) with 404, or
    /// with something that is not its JSON: it is something else.
    #[error("{server} is not a Kubernetes API server ({request}: {answer})")]
    NotKubernetes {
        /// The API server URL from the kubeconfig.
        server: String,
        /// The request, e.g. `GET /version`.
        request: &'static str,
        /// The answer, e.g. `HTTP 404: <html>…`.
        answer: String,
    },
    /// The cluster refused the kubeconfig's credentials (401).
    #[error("the cluster at {server} refused the credentials ({request}: {answer})")]
    Unauthorized {
        /// The API server URL from the kubeconfig.
        server: String,
        /// The request, e.g. `GET /version`.
        request: &'static str,
        /// The answer, e.g. `HTTP 401 Unauthorized`.
        answer: String,
    },
    /// `doctor` could not produce a report.
    #[error("diagnose the cluster at {server}")]
    Doctor {
        /// The API server URL from the kubeconfig.
        server: String,
        /// Why.
        #[source]
        source: crate::doctor::Error,
    },
    /// Writing to stdout or a file failed.
    #[error("{what}")]
    Io {
        /// What was being written, e.g. `write completion script`.
        what: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A failure whose likely fix the command knows: printed as [`Other`]
    /// is, then `hint: …`.
    ///
    /// [`Other`]: CliError::Other
    #[error("{what}")]
    Hinted {
        /// What was being done.
        what: String,
        /// The underlying error.
        #[source]
        source: Box<dyn StdError + Send + Sync>,
        /// The likely fix.
        hint: String,
    },
    /// Any other failure, with what was being done and why it failed.
    #[error("{what}")]
    Other {
        /// What was being done, e.g. `start the async runtime`.
        what: String,
        /// The underlying error.
        #[source]
        source: Box<dyn StdError + Send + Sync>,
    },
}

impl CliError {
    /// Wraps an error with a description of what was being done.
    pub fn other(
        what: impl Into<String>,
        source: impl Into<Box<dyn StdError + Send + Sync>>,
    ) -> Self {
        CliError::Other {
            what: what.into(),
            source: source.into(),
        }
    }

    /// What the failure of a command's first request (`request`, one every
    /// Kubernetes API server serves to everyone) means: a server that is not
    /// Kubernetes (404, or an answer that is not its JSON), credentials
    /// refused (401), or a cluster that could not be reached.
    pub fn first_request_failed(
        server: String,
        request: &'static str,
        source: kube::Error,
    ) -> Self {
        match &source {
            kube::Error::Api(status) if matches!(status.code, 401 | 404) => {
                let code = status.code;
                let answer = crate::doctor::requester::CallError::from(source).to_string();
                if code == 404 {
                    CliError::NotKubernetes {
                        server,
                        request,
                        answer,
                    }
                } else {
                    CliError::Unauthorized {
                        server,
                        request,
                        answer,
                    }
                }
            }
            kube::Error::SerdeError(_) => CliError::NotKubernetes {
                server,
                request,
                answer: crate::doctor::requester::CallError::from(source).to_string(),
            },
            _ => CliError::Unreachable { server, source },
        }
    }

    /// `self` with `hint` printed after its causes (an [`CliError::Other`]
    /// becomes [`CliError::Hinted`]; other errors have their own hints and
    /// stay as they are).
    pub fn with_hint(self, hint: impl Into<String>) -> Self {
        match self {
            CliError::Other { what, source } => CliError::Hinted {
                what,
                source,
                hint: hint.into(),
            },
            other => other,
        }
    }

    /// Wraps an I/O error with a description of what was being written.
    pub fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        CliError::Io {
            what: what.into(),
            source,
        }
    }

    /// The exit status this error maps to.
    pub fn exit_status(&self) -> ExitStatus {
        match self {
            CliError::Usage(_) => ExitStatus::Usage,
            CliError::Unreachable { .. } | CliError::NotKubernetes { .. } => {
                ExitStatus::Unreachable
            }
            CliError::Doctor {
                source:
                    crate::doctor::Error::Unreachable(_) | crate::doctor::Error::NotKubernetes(_),
                ..
            } => ExitStatus::Unreachable,
            // Whatever a command was doing, if the cluster did not answer
            // that is what the exit code says (`install --apply` reading
            // its Secrets, serve configuring authentication, …).
            err if connection_failure(err).is_some() => ExitStatus::Unreachable,
            _ => ExitStatus::Error,
        }
    }

    fn is_broken_pipe(&self) -> bool {
        let mut cur: Option<&(dyn StdError + 'static)> = Some(self);
        while let Some(err) = cur {
            if let Some(io) = err.downcast_ref::<std::io::Error>()
                && io.kind() == std::io::ErrorKind::BrokenPipe
            {
                return true;
            }
            cur = err.source();
        }
        false
    }
}

/// Prints the error (if any) and returns the exit code.
///
/// Errors print as `error: <what failed>`, then their causes, one per line.
/// A failure to reach the cluster prints one line instead — what failed,
/// against which server, and the likely fix — because its cause chain (client,
/// connector, socket) says the same thing four times; `-v 1` and above print
/// the chain too. `context` is the kubeconfig context the command used,
/// when it failed: a standalone server's (`kubectl-cozy`) that refuses
/// connections is most likely stopped, which the hint says.
pub(super) fn report(
    result: Result<ExitStatus, CliError>,
    server: Option<&str>,
    context: Option<&str>,
    verbosity: u8,
) -> ExitCode {
    match result {
        Ok(status) => ExitCode::from(status.code()),
        Err(err) if err.is_broken_pipe() => ExitCode::SUCCESS,
        Err(err) => {
            let text = for_context(render(&err, server, verbosity > 0), context);
            let _ = std::io::stderr().lock().write_all(text.as_bytes());
            ExitCode::from(err.exit_status().code())
        }
    }
}

/// `text` with the hint for `context`: a standalone server's that cannot
/// be reached is most likely stopped.
fn for_context(text: String, context: Option<&str>) -> String {
    match context {
        Some(STANDALONE_CONTEXT) => text.replace(CONTEXT_HINT, STANDALONE_HINT),
        _ => text,
    }
}

/// The text [`report`] prints for `err`.
fn render(err: &CliError, server: Option<&str>, verbose: bool) -> String {
    let mut text = format!("error: {err}");
    let connection = connection_failure(err);
    if let Some(failure) = &connection {
        text.push_str(&format!(": {}", failure.summary));
        let headline = err.to_string();
        if let Some(server) = server.filter(|s| !headline.contains(s.trim_end_matches('/'))) {
            text.push_str(&format!(" (server {})", server.trim_end_matches('/')));
        }
        text.push_str(&format!("\n  hint: {}\n", failure.hint));
        if !verbose {
            return text;
        }
    } else {
        text.push('\n');
    }
    let mut source = err.source();
    while let Some(cause) = source {
        let (cause_text, said_all) = crate::error_chain::one_error(cause);
        text.push_str(&format!("  caused by: {cause_text}\n"));
        source = cause.source().filter(|_| !said_all);
    }
    if let Some(hint) = answer_hint(err) {
        text.push_str(&format!("  hint: {hint}\n"));
    }
    text
}

/// The likely fix when the server answered, but not as hoped; or the one
/// the command gave; or, for an address taken, how to choose another.
fn answer_hint(err: &CliError) -> Option<String> {
    use crate::doctor::Error as Doctor;
    if let CliError::Hinted { hint, .. } = err {
        return Some(hint.clone());
    }
    if let Some(addr) = address_in_use(err) {
        return Some(format!(
            "another server holds {addr} (kube-apiserver, k3s, another `kubectl cozy serve`): pass \
             --listen {ip}:<port> for another port, or --listen {ip}:0 for any free one",
            ip = match addr.ip() {
                std::net::IpAddr::V6(ip) => format!("[{ip}]"),
                ip => ip.to_string(),
            }
        ));
    }
    let hint = match err {
        CliError::NotKubernetes { .. }
        | CliError::Doctor {
            source: Doctor::NotKubernetes(_),
            ..
        } => Some(NOT_KUBERNETES_HINT),
        CliError::Unauthorized { .. }
        | CliError::Doctor {
            source: Doctor::Unauthorized(_),
            ..
        } => Some(UNAUTHORIZED_HINT),
        _ => None,
    };
    hint.map(str::to_owned)
}

/// The address a server could not listen on because it is taken, if that
/// is among `err`'s causes.
fn address_in_use(err: &CliError) -> Option<std::net::SocketAddr> {
    use crate::apiserver::server::ServerError;
    let mut cur: Option<&(dyn StdError + 'static)> = Some(err);
    while let Some(e) = cur {
        if let Some(ServerError::Bind { addr, source }) = e.downcast_ref::<ServerError>()
            && source.kind() == std::io::ErrorKind::AddrInUse
        {
            return Some(*addr);
        }
        cur = e.source();
    }
    None
}

/// Why a request never reached the server, in the user's terms.
#[derive(Debug, PartialEq, Eq)]
struct ConnectionFailure {
    summary: &'static str,
    hint: &'static str,
}

const CONTEXT_HINT: &str =
    "is the cluster running, and is this the right context? (--context, --kubeconfig, KUBECONFIG)";
/// The context `serve --standalone` writes
/// ([`crate::register::kubeconfig_file::CONTEXT`]).
const STANDALONE_CONTEXT: &str = "kubectl-cozy";
const STANDALONE_HINT: &str = "context kubectl-cozy is a standalone server's: start it again (`kubectl cozy serve \
                               --standalone --kinds DIR`), or choose another context (--context, --kubeconfig, KUBECONFIG)";
const NETWORK_HINT: &str = "check the network path to the server (VPN, Wi-Fi, firewall)";
const DNS_SUMMARY: &str = "the server's host name does not resolve";
const DNS_HINT: &str = "check the server address in the kubeconfig and your DNS or VPN";
const NOT_KUBERNETES_HINT: &str = "the context's server address leads somewhere else; check it with `kubectl config view --minify`";
const UNAUTHORIZED_HINT: &str = "the kubeconfig's credentials are missing, wrong or expired: log in again, or choose another context (--context)";
const TIMEOUT_HINT: &str = "check the network path to the server (VPN, firewall); raise --request-timeout if it is only slow";

/// Connection failures known by their text: (text, summary, hint, whether
/// it outranks what the socket error's kind said). A name that does not
/// resolve, or a certificate not trusted, says more than the transport
/// error it comes with.
const BY_TEXT: [(&str, &str, &str, bool); 9] = [
    (
        "Connection refused",
        "connection refused",
        CONTEXT_HINT,
        false,
    ),
    (
        "No route to host",
        "the server's network is unreachable",
        NETWORK_HINT,
        false,
    ),
    (
        "Network is unreachable",
        "the server's network is unreachable",
        NETWORK_HINT,
        false,
    ),
    (
        "no answer within",
        "the server did not answer in time",
        TIMEOUT_HINT,
        false,
    ),
    // --request-timeout's deadline, in tokio's words (never a server's:
    // kube-apiserver's own timeouts say "timed out" or "deadline exceeded").
    (
        "deadline has elapsed",
        "the server did not answer in time",
        TIMEOUT_HINT,
        false,
    ),
    (
        "TLS handshake timeout",
        "the server took the connection but never answered the TLS handshake (10 s)",
        "is this a Kubernetes API server's address, and is the port-forward, tunnel or proxy to it still up?",
        true,
    ),
    ("dns error", DNS_SUMMARY, DNS_HINT, true),
    ("failed to lookup address", DNS_SUMMARY, DNS_HINT, true),
    (
        "invalid peer certificate",
        "the server's certificate is not trusted",
        "check certificate-authority(-data) of the cluster in the kubeconfig",
        true,
    ),
];

/// For a command that goes on without the cluster (a note, not an error):
/// `cannot reach the cluster at <server>: connection refused`, in
/// [`report`]'s words, when `err` is a request that never reached the
/// server; `None` for any other failure.
pub fn unreachable_note(err: &(dyn StdError + 'static), server: Option<&str>) -> Option<String> {
    let failure = connection_failure(err)?;
    Some(match server {
        Some(server) => format!(
            "cannot reach the cluster at {}: {}",
            server.trim_end_matches('/'),
            failure.summary
        ),
        None => format!("cannot reach the cluster: {}", failure.summary),
    })
}

/// Finds, in `err`'s cause chain, a failure to connect to the server (refused,
/// unreachable, timed out, name resolution, TLS trust), if any.
fn connection_failure(err: &(dyn StdError + 'static)) -> Option<ConnectionFailure> {
    let mut cur: Option<&(dyn StdError + 'static)> = Some(err);
    let mut found = None;
    while let Some(e) = cur {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind::*;
            let failure = match io.kind() {
                ConnectionRefused => Some(("connection refused", CONTEXT_HINT)),
                TimedOut => Some(("the connection timed out", TIMEOUT_HINT)),
                HostUnreachable | NetworkUnreachable | NetworkDown => {
                    Some(("the server's network is unreachable", NETWORK_HINT))
                }
                ConnectionReset | ConnectionAborted => Some((
                    "the server closed the connection",
                    "the server may be restarting, or a proxy in between refused the connection; retry",
                )),
                _ => None,
            };
            if let Some((summary, hint)) = failure {
                found = Some(ConnectionFailure { summary, hint });
            }
        }
        // Some callers flatten the chain into one message (doctor's request
        // errors), so the socket error is also recognised by its text. Name
        // resolution and TLS trust are only ever known by their text.
        let message = e.to_string();
        for (needle, summary, hint, overrides) in BY_TEXT {
            if message.contains(needle) && (overrides || found.is_none()) {
                found = Some(ConnectionFailure { summary, hint });
                break;
            }
        }
        cur = e.source();
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broken_pipe_anywhere_in_the_chain_is_detected() {
        let err = CliError::io(
            "write table",
            std::io::Error::from(std::io::ErrorKind::BrokenPipe),
        );
        assert!(err.is_broken_pipe());
        let err = CliError::other("x", std::io::Error::other("boom"));
        assert!(!err.is_broken_pipe());
    }

    #[test]
    fn a_connection_failure_prints_one_line_with_a_hint() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let wrapped = std::io::Error::other(Wrapped("client error (Connect)", Box::new(refused)));
        let err = CliError::other("configure delegated authentication", wrapped);
        let text = render(&err, Some("https://127.0.0.1:1/"), false);
        assert_eq!(
            text,
            "error: configure delegated authentication: connection refused (server https://127.0.0.1:1)\n  \
             hint: is the cluster running, and is this the right context? (--context, --kubeconfig, KUBECONFIG)\n"
        );
        // A standalone server's context: the hint says to start it again.
        assert_eq!(
            STANDALONE_CONTEXT,
            crate::register::kubeconfig_file::CONTEXT
        );
        let standalone = for_context(text.clone(), Some(STANDALONE_CONTEXT));
        assert!(
            standalone.contains(&format!("hint: {STANDALONE_HINT}"))
                && !standalone.contains(CONTEXT_HINT),
            "{standalone}"
        );
        assert_eq!(for_context(text.clone(), Some("prod")), text);
        let verbose = render(&err, Some("https://127.0.0.1:1/"), true);
        assert!(
            verbose.contains("caused by: client error (Connect)"),
            "{verbose}"
        );
    }

    /// `--request-timeout`'s deadline reads as a server that did not answer
    /// in time; a server's own answer about a timeout does not.
    #[test]
    fn a_deadline_that_elapsed_is_a_server_that_did_not_answer_in_time() {
        let answered = kube::Error::Api(
            kube::core::Status::failure("etcdserver: request timed out", "InternalError")
                .with_code(500)
                .boxed(),
        );
        let err = CliError::other("list APIServices", answered);
        let text = render(&err, Some("https://10.0.0.1:6443/"), false);
        assert!(!text.contains("did not answer in time"), "{text}");
        let inner = std::io::Error::other("deadline has elapsed");
        let wrapped = std::io::Error::other(Wrapped("client error (Connect)", Box::new(inner)));
        let err = CliError::other("list APIServices", wrapped);
        let text = render(&err, Some("https://10.0.0.1:6443/"), false);
        assert!(
            text.starts_with(
                "error: list APIServices: the server did not answer in time (server https://10.0.0.1:6443)\n  hint: "
            ),
            "{text}"
        );
    }

    #[test]
    fn an_unreachable_note_words_a_connection_failure_as_the_report_does() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let wrapped = std::io::Error::other(Wrapped("client error (Connect)", Box::new(refused)));
        assert_eq!(
            unreachable_note(&wrapped, Some("https://127.0.0.1:9/")).as_deref(),
            Some("cannot reach the cluster at https://127.0.0.1:9: connection refused")
        );
        assert_eq!(
            unreachable_note(&wrapped, None).as_deref(),
            Some("cannot reach the cluster: connection refused")
        );
        let status =
            kube::core::Status::failure("secrets is forbidden: no", "Forbidden").with_code(403);
        assert_eq!(
            unreachable_note(&kube::Error::Api(status.boxed()), Some("https://x/")),
            None
        );
    }

    #[test]
    fn other_errors_keep_their_causes() {
        let err = CliError::other("load kind definitions", std::io::Error::other("bad file"));
        assert_eq!(
            render(&err, None, false),
            "error: load kind definitions\n  caused by: bad file\n"
        );
    }

    #[test]
    fn an_api_servers_answer_is_one_cause_as_kubectl_prints_it() {
        let status = kube::core::Status::failure("namespaces \"x\" is forbidden: no", "Forbidden")
            .with_code(403);
        let err = CliError::other("apply", kube::Error::Api(status.boxed()));
        assert_eq!(
            render(&err, None, false),
            "error: apply\n  caused by: namespaces \"x\" is forbidden: no (HTTP 403 Forbidden)\n"
        );
    }

    #[test]
    fn a_flattened_connection_error_is_recognised_by_its_text() {
        let err = CliError::other(
            "diagnose the cluster at https://127.0.0.1:1/",
            std::io::Error::other(
                "ServiceError: client error (Connect): tcp connect error: Connection refused (os error 111)",
            ),
        );
        let text = render(&err, Some("https://127.0.0.1:1/"), false);
        assert!(
            text.starts_with(
                "error: diagnose the cluster at https://127.0.0.1:1/: connection refused\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn flattened_unreachable_and_silent_servers_are_named_and_exit_4() {
        let no_route = CliError::other(
            "diagnose the cluster at https://192.0.2.77:6443/",
            std::io::Error::other(
                "ServiceError: client error (Connect): tcp connect error: No route to host (os error 113)",
            ),
        );
        let text = render(&no_route, None, false);
        assert!(
            text.contains(": the server's network is unreachable\n  hint: "),
            "{text}"
        );
        assert_eq!(no_route.exit_status(), ExitStatus::Unreachable);
        let silent = CliError::other(
            "read the install's Secrets",
            std::io::Error::other("reach the API server: no answer within 10s"),
        );
        assert!(render(&silent, None, false).contains("did not answer in time"));
        assert_eq!(silent.exit_status(), ExitStatus::Unreachable);
        let refused = CliError::other(
            "read the install's Secrets",
            std::io::Error::from(std::io::ErrorKind::ConnectionRefused),
        );
        assert_eq!(refused.exit_status(), ExitStatus::Unreachable);
        let local = CliError::other("load kind definitions", std::io::Error::other("bad file"));
        assert_eq!(local.exit_status(), ExitStatus::Error);
    }

    #[test]
    fn dns_and_tls_failures_are_named() {
        let dns = CliError::other(
            "x",
            std::io::Error::other("dns error: failed to lookup address information"),
        );
        assert!(render(&dns, None, false).contains("does not resolve"));
        let tls = CliError::other(
            "x",
            std::io::Error::other("invalid peer certificate: UnknownIssuer"),
        );
        assert!(render(&tls, None, false).contains("not trusted"));
    }

    fn api_error(code: u16, reason: &str, message: &str) -> kube::Error {
        kube::Error::Api(
            kube::core::Status::failure(message, reason)
                .with_code(code)
                .boxed(),
        )
    }

    #[test]
    fn a_server_that_is_not_kubernetes_is_named_with_a_hint() {
        let err = CliError::first_request_failed(
            "https://127.0.0.1:8443/".into(),
            "GET /version",
            api_error(404, "Failed to parse error data", "<html>not found</html>"),
        );
        assert_eq!(
            render(&err, Some("https://127.0.0.1:8443/"), false),
            "error: https://127.0.0.1:8443/ is not a Kubernetes API server (GET /version: HTTP 404: \
             <html>not found</html>)\n  hint: the context's server address leads somewhere else; check it \
             with `kubectl config view --minify`\n"
        );
        assert_eq!(err.exit_status(), ExitStatus::Unreachable);
    }

    #[test]
    fn a_server_that_answers_no_json_is_not_kubernetes_either() {
        let not_json = serde_json::from_str::<serde_json::Value>("<html>").unwrap_err();
        let err = CliError::first_request_failed(
            "https://127.0.0.1:8443/".into(),
            "GET /version",
            kube::Error::SerdeError(not_json),
        );
        assert_eq!(
            render(&err, Some("https://127.0.0.1:8443/"), false),
            "error: https://127.0.0.1:8443/ is not a Kubernetes API server (GET /version: an answer that is \
             not Kubernetes' JSON (expected value at line 1 column 1))\n  hint: the context's server address \
             leads somewhere else; check it with `kubectl config view --minify`\n"
        );
        assert_eq!(err.exit_status(), ExitStatus::Unreachable);
    }

    #[test]
    fn refused_credentials_are_named_with_a_hint() {
        let err = CliError::first_request_failed(
            "https://10.0.0.1:6443/".into(),
            "GET /version",
            api_error(401, "Unauthorized", "Unauthorized"),
        );
        let text = render(&err, None, false);
        assert!(
            text.starts_with(
                "error: the cluster at https://10.0.0.1:6443/ refused the credentials (GET /version: HTTP 401 Unauthorized"
            ) && text.contains("hint: the kubeconfig's credentials"),
            "{text}"
        );
        assert_eq!(err.exit_status(), ExitStatus::Error);
        let other = CliError::first_request_failed(
            "https://10.0.0.1:6443/".into(),
            "GET /version",
            api_error(500, "InternalError", "etcd is down"),
        );
        assert!(matches!(other, CliError::Unreachable { .. }));
    }

    #[test]
    fn a_hint_given_or_a_taken_address_is_printed_after_the_causes() {
        let err = CliError::other("configure delegated authentication", "forbidden")
            .with_hint("ask for the rights");
        assert_eq!(
            render(&err, None, false),
            "error: configure delegated authentication\n  caused by: forbidden\n  hint: ask for the rights\n"
        );
        assert_eq!(err.exit_status(), ExitStatus::Error);
        // Other errors keep their own hints.
        let usage = CliError::Usage("bad".into()).with_hint("ignored");
        assert_eq!(render(&usage, None, false), "error: bad\n");

        let bind = |addr: &str| {
            CliError::other(
                "start the API server",
                crate::apiserver::server::ServerError::Bind {
                    addr: addr.parse().unwrap(),
                    source: std::io::Error::from(std::io::ErrorKind::AddrInUse),
                },
            )
        };
        let text = render(&bind("127.0.0.1:6443"), None, false);
        assert!(
            text.starts_with("error: start the API server\n  caused by: listen on 127.0.0.1:6443\n")
                && text.ends_with(
                    "  hint: another server holds 127.0.0.1:6443 (kube-apiserver, k3s, another `kubectl cozy \
                     serve`): pass --listen 127.0.0.1:<port> for another port, or --listen 127.0.0.1:0 for any \
                     free one\n"
                ),
            "{text}"
        );
        assert!(
            render(&bind("[::1]:6443"), None, false).contains("--listen [::1]:0 for any free one")
        );
        // Another bind failure is no matter of a port taken.
        let denied = CliError::other(
            "start the API server",
            crate::apiserver::server::ServerError::Bind {
                addr: "0.0.0.0:443".parse().unwrap(),
                source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
            },
        );
        assert!(!render(&denied, None, false).contains("hint:"));
    }

    /// An error with a message and a source, like hyper's client errors.
    #[derive(Debug)]
    struct Wrapped(&'static str, Box<dyn StdError + Send + Sync>);
    impl std::fmt::Display for Wrapped {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }
    impl StdError for Wrapped {
        fn source(&self) -> Option<&(dyn StdError + 'static)> {
            Some(self.1.as_ref())
        }
    }

    #[test]
    fn codes_are_stable() {
        let codes: Vec<u8> = [
            ExitStatus::Success,
            ExitStatus::Error,
            ExitStatus::Usage,
            ExitStatus::ProblemsFound,
            ExitStatus::Unreachable,
            ExitStatus::Incomplete,
        ]
        .iter()
        .map(|s| s.code())
        .collect();
        assert_eq!(codes, vec![0, 1, 2, 3, 4, 5]);
    }
}
