//! YAML as Go's yaml.v2 reads it (sigs.k8s.io/yaml, under kube-apiserver's
//! YAML request bodies and server-side apply): serde-saphyr's options for
//! that — a repeated key's last value wins, `0755` is octal — with no
//! snippets in its errors (they go into one-line API messages).

/// serde-saphyr's options for reading YAML as yaml.v2 does.
pub fn yaml_v2_options() -> serde_saphyr::Options {
    let mut options = serde_saphyr::Options::default();
    options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::LastWins;
    options.legacy_octal_numbers = true;
    options.with_snippet = false;
    options
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_keys_keep_the_last_and_leading_zeros_are_octal() {
        let v: serde_json::Value =
            serde_saphyr::from_str_with_options("a: 1\na: 2\nmode: 0755\n", yaml_v2_options())
                .unwrap();
        assert_eq!(v, serde_json::json!({"a": 2, "mode": 493}));
    }
}
