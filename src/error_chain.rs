//! An error and its causes on one line, for messages, logs and reports, and
//! the text of one error of a chain ([`one_error`]).

/// `err` and each of its causes, `: `-separated (`a: b: c`). A cause whose
/// text the line already holds is left out: many errors (kube's, hyper's)
/// repeat their source in their own message.
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let (mut text, mut said_all) = one_error(err);
    let mut source = err.source();
    while let Some(cause) = source.filter(|_| !said_all) {
        let (cause_text, all) = one_error(cause);
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        said_all = all;
        source = cause.source();
    }
    text
}

/// The text of `err` alone, and whether it says its causes too. An API
/// server's answer (kube's `Error::Api`) reads as kubectl prints one, its
/// message and status (`… is invalid: spec.x: Invalid value … (HTTP 422
/// Invalid)`), where kube's own text repeats it with a `Status { … }` dump.
pub fn one_error(err: &(dyn std::error::Error + 'static)) -> (String, bool) {
    // A boxed kube error (a `#[source] Box<kube::Error>`) is one too.
    let kube_error = err
        .downcast_ref::<kube::Error>()
        .or_else(|| err.downcast_ref::<Box<kube::Error>>().map(|boxed| &**boxed));
    match kube_error {
        Some(kube::Error::Api(status)) => {
            let reason = if status.reason.is_empty() {
                String::new()
            } else {
                format!(" {}", status.reason)
            };
            (
                format!("{} (HTTP {}{reason})", status.message, status.code),
                true,
            )
        }
        _ => (err.to_string(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl std::fmt::Display for Layer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|l| l as _)
        }
    }

    #[test]
    fn causes_follow_and_repeats_are_left_out() {
        let err = Layer(
            "list the session Leases",
            Some(Box::new(Layer(
                "ApiError: forbidden",
                Some(Box::new(Layer("forbidden", None))),
            ))),
        );
        assert_eq!(
            error_chain(&err),
            "list the session Leases: ApiError: forbidden"
        );
        assert_eq!(error_chain(&Layer("alone", None)), "alone");
    }

    #[test]
    fn an_api_servers_answer_reads_as_kubectl_prints_it() {
        let status = kube::core::Status::failure(
            "APIService.apiregistration.k8s.io \"v1.x\" is invalid: spec.insecureSkipTLSVerify: Invalid value: true",
            "Invalid",
        )
        .with_code(422);
        let err = kube::Error::Api(status.boxed());
        let want = "APIService.apiregistration.k8s.io \"v1.x\" is invalid: spec.insecureSkipTLSVerify: Invalid value: true (HTTP 422 Invalid)";
        assert_eq!(error_chain(&err), want);
        // Boxed as a cause (install's apply errors hold it so).
        #[derive(Debug, thiserror::Error)]
        #[error("apply ClusterRole x")]
        struct Apply(#[source] Box<kube::Error>);
        assert_eq!(
            error_chain(&Apply(Box::new(err))),
            format!("apply ClusterRole x: {want}")
        );
    }
}
