//! serde-saphyr's parse errors in the user's terms: the message of
//! [`serde_saphyr::UserMessageFormatter`] (the crate's default formatter
//! gives developer hints such as `set DuplicateKeyPolicy in Options`), with
//! a repeated key said plainly. No location: callers put `file:line:column`
//! in front.

use serde_saphyr::MessageFormatter as _;

/// The message of a YAML parse error, for people editing the file.
pub(crate) fn yaml_message(err: &serde_saphyr::Error) -> String {
    let inner = err.without_snippet();
    let text = match inner {
        serde_saphyr::Error::DuplicateMappingKey { key: Some(k), .. } => {
            format!("the key `{k}` appears twice in the same mapping")
        }
        serde_saphyr::Error::DuplicateMappingKey { key: None, .. } => {
            "a key appears twice in the same mapping".to_owned()
        }
        other => serde_saphyr::UserMessageFormatter
            .format_message(other)
            .into_owned(),
    };
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_speak_of_the_file_not_the_library() {
        let err = serde_saphyr::from_str::<serde_json::Value>("a: 1\nb: 2\na: 3\n").unwrap_err();
        let message = yaml_message(&err);
        assert_eq!(message, "the key `a` appears twice in the same mapping");
        let err = serde_saphyr::from_str::<serde_json::Value>("a: [1, 2\n").unwrap_err();
        let message = yaml_message(&err);
        assert!(
            !message.is_empty() && !message.contains("Options"),
            "{message}"
        );
    }
}
