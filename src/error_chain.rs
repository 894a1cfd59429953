//! An error and its causes on one line, for messages, logs and reports.

/// `err` and each of its causes, `: `-separated (`a: b: c`). A cause whose
/// text the line already holds is left out: many errors (kube's, hyper's)
/// repeat their source in their own message.
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
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
}
