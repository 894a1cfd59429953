//! Lines of YAML nodes, so that a problem found in a kind's schema after
//! parsing (a structural rule, a pattern or CEL rule that does not compile)
//! names the line of the field it is about, not only the first line of the
//! definition's document.
//!
//! [`line_of`] walks granit-parser's events (the parser under serde-saphyr)
//! to the node at a path of mapping keys and sequence indices;
//! [`at_schema_field`] rewrites a `FILE:LINE: …` problem that names an
//! `openAPISchema` pointer to that field's line, reading the file again (only
//! problems pay for it).

use granit_parser::{Event, Parser};

/// The line (1-based, within `text`) of the node at `path` in the YAML
/// document `text`: for a mapping entry, its key's line; for a sequence
/// item, where the item starts. `None` when it is not there, or the text is
/// not YAML this can follow (complex keys).
pub(crate) fn line_of(text: &str, path: &[String]) -> Option<usize> {
    enum Frame {
        /// A mapping, and the key whose value is being read.
        Map(Option<String>),
        /// A sequence, and the index of the next item.
        Seq(usize),
    }
    let mut stack: Vec<Frame> = Vec::new();
    // The path of the container on top of `stack`.
    let mut here: Vec<String> = Vec::new();
    let at = |here: &mut Vec<String>, segment: String| {
        here.push(segment);
        let found = here.as_slice() == path;
        here.pop();
        found
    };
    for next in Parser::new_from_str(text) {
        let (event, span) = next.ok()?;
        let line = span.start.line();
        match event {
            Event::Scalar(..) | Event::Alias(_) => match stack.last_mut() {
                Some(Frame::Map(key @ None)) => {
                    let Event::Scalar(value, ..) = event else {
                        return None;
                    };
                    let value = value.into_owned();
                    if at(&mut here, value.clone()) {
                        return Some(line);
                    }
                    *key = Some(value);
                }
                Some(Frame::Map(key)) => *key = None,
                Some(Frame::Seq(next)) => {
                    if at(&mut here, next.to_string()) {
                        return Some(line);
                    }
                    *next += 1;
                }
                None => {}
            },
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                match stack.last() {
                    Some(Frame::Map(Some(key))) => here.push(key.clone()),
                    Some(Frame::Map(None)) => return None,
                    Some(Frame::Seq(next)) => {
                        here.push(next.to_string());
                        if here.as_slice() == path {
                            return Some(line);
                        }
                    }
                    None => {}
                }
                stack.push(if matches!(event, Event::MappingStart(..)) {
                    Frame::Map(None)
                } else {
                    Frame::Seq(0)
                });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                stack.pop();
                match stack.last_mut() {
                    Some(Frame::Map(key)) => {
                        *key = None;
                        here.pop();
                    }
                    Some(Frame::Seq(next)) => {
                        *next += 1;
                        here.pop();
                    }
                    None => {}
                }
            }
            _ => {}
        }
    }
    None
}

/// `problem`, a `FILE:LINE: …` line whose `LINE` is the first line of a
/// definition's document and which names a field of its `openAPISchema`
/// (`openAPISchema/properties/x/type: …`, or `openAPISchema: /properties/x/…:
/// …`), with `LINE` moved to that field's line; unchanged when it names no
/// such field or the field cannot be found.
pub(crate) fn at_schema_field(problem: &str) -> String {
    relocated(problem).unwrap_or_else(|| problem.to_owned())
}

fn relocated(problem: &str) -> Option<String> {
    let (file, rest) = problem.split_once(':')?;
    let (line, rest) = rest.split_once(':')?;
    let start_line: usize = line.parse().ok()?;
    let (_, after) = rest.split_once("openAPISchema")?;
    let pointer = match after.strip_prefix(": ") {
        Some(quoted) => quoted,
        None => after,
    };
    let pointer = pointer.strip_prefix('/')?.split(": ").next()?;
    let mut path = vec!["openAPISchema".to_owned()];
    path.extend(
        pointer
            .split('/')
            .map(|s| s.replace("~1", "/").replace("~0", "~")),
    );
    let text = std::fs::read_to_string(file).ok()?;
    let (_, document) = super::load::split_documents(&text)
        .into_iter()
        .find(|(first, _)| *first == start_line)?;
    let found = line_of(document, &path)?;
    Some(format!("{file}:{}:{rest}", start_line + found - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &str) -> Vec<String> {
        p.split('/').map(str::to_owned).collect()
    }

    const DOC: &str = "kind: Widget\n\
                       openAPISchema:\n  \
                         type: object\n  \
                         properties:\n    \
                           size: {type: integer, minimum: 5}\n    \
                           tags:\n      \
                             type: array\n      \
                             x-kubernetes-validations:\n      \
                             - rule: self.size() < 3\n      \
                             - {rule: 'true', message: m}\n\
                       release: {chartRef: {kind: ExternalArtifact, name: widget}}\n";

    #[test]
    fn keys_items_and_flow_nodes_have_their_lines() {
        let line = |p: &str| line_of(DOC, &path(p));
        assert_eq!(line("kind"), Some(1));
        assert_eq!(line("openAPISchema"), Some(2));
        assert_eq!(line("openAPISchema/properties/size"), Some(5));
        assert_eq!(line("openAPISchema/properties/size/minimum"), Some(5));
        assert_eq!(line("openAPISchema/properties/tags/type"), Some(7));
        assert_eq!(
            line("openAPISchema/properties/tags/x-kubernetes-validations/0/rule"),
            Some(9)
        );
        assert_eq!(
            line("openAPISchema/properties/tags/x-kubernetes-validations/1"),
            Some(10)
        );
        assert_eq!(line("release/chartRef/name"), Some(11));
        assert_eq!(line("openAPISchema/properties/color"), None);
        assert_eq!(line_of("a: [\n", &path("b")), None);
    }

    #[test]
    fn problems_move_to_the_schema_field_they_name() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("widget.yaml");
        std::fs::write(&file, format!("# a comment\n---\n{DOC}")).unwrap();
        let f = file.display();
        assert_eq!(
            at_schema_field(&format!(
                "{f}:3: openAPISchema/properties/size/minimum: must be a number"
            )),
            format!("{f}:7: openAPISchema/properties/size/minimum: must be a number")
        );
        assert_eq!(
            at_schema_field(&format!(
                "{f}:3: openAPISchema: /properties/tags/x-kubernetes-validations/0/rule: compilation failed: x"
            )),
            format!(
                "{f}:11: openAPISchema: /properties/tags/x-kubernetes-validations/0/rule: compilation failed: x"
            )
        );
        // Nothing to move: as it was.
        for same in [
            format!("{f}:3: version: \"x\" must look like v1"),
            format!("{f}:3: openAPISchema: the schema of spec must have type: object"),
            format!("{f}:3: openAPISchema/properties/nope: not there"),
            "missing.yaml:1: openAPISchema/properties/size: x".to_owned(),
        ] {
            assert_eq!(at_schema_field(&same), same);
        }
    }
}
