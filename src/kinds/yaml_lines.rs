//! Lines of YAML nodes, so that a problem found in a kind definition after
//! parsing (a field's value refused, a structural rule broken in its schema,
//! a pattern or CEL rule that does not compile) names the line of the field
//! it is about, not only the first line of the definition's document.
//!
//! [`split_documents`] cuts a file into its YAML documents with their first
//! lines; [`line_of`] walks granit-parser's events (the parser under serde-saphyr)
//! to the node at a path of mapping keys and sequence indices;
//! [`field_line`] finds the line of the field a problem begins with
//! (`release.prefix: …`, an `openAPISchema` pointer) in the document the
//! loader has; [`at_field`] does it for a `FILE:LINE: …` problem found later
//! (a schema that does not compile), reading the file again (only problems
//! pay for it).

use granit_parser::{Event, Parser};

/// Splits a YAML stream at `---` markers into `(first line, text)` pairs,
/// leaving out documents with nothing but blanks and comments.
pub(crate) fn split_documents(text: &str) -> Vec<(usize, &str)> {
    let mut documents = Vec::new();
    let mut start = 0;
    let mut start_line = 1;
    let mut offset = 0;
    for (index, line) in text.split_inclusive('\n').enumerate() {
        if is_document_marker(line.trim_end_matches(['\n', '\r'])) {
            documents.push((start_line, &text[start..offset]));
            start = offset + line.len();
            start_line = index + 2;
        }
        offset += line.len();
    }
    documents.push((start_line, &text[start..]));
    documents.retain(|(_, doc)| {
        doc.lines().any(|l| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with('#')
        })
    });
    documents
}

fn is_document_marker(line: &str) -> bool {
    line == "---" || line.starts_with("--- ") || line.starts_with("---\t")
}

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

/// The line in `text` (YAML, or JSON, which is YAML) of the node a JSON
/// `pointer` (RFC 6901) names, or of its nearest ancestor that is there (a
/// pointer made by a conversion may go deeper than the file: into a
/// `$ref`'s target, or to a keyword it added); `None` for the root or a
/// text this cannot follow.
pub(crate) fn pointer_line(text: &str, pointer: &str) -> Option<usize> {
    let mut path: Vec<String> = pointer
        .strip_prefix('/')?
        .split('/')
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect();
    while !path.is_empty() {
        if let Some(line) = line_of(text, &path) {
            return Some(line);
        }
        path.pop();
    }
    None
}

/// `problem`, a `FILE:LINE: …` line whose `LINE` is the first line of a
/// definition's document and whose text begins with the field it is about
/// ([`field_path`]), with `LINE` moved to that field's line; unchanged when
/// it names no field or the field is not in the file (a default).
pub(crate) fn at_field(problem: &str) -> String {
    relocated(problem).unwrap_or_else(|| problem.to_owned())
}

fn relocated(problem: &str) -> Option<String> {
    let (file, rest) = problem.split_once(':')?;
    let (line, rest) = rest.split_once(':')?;
    let start_line: usize = line.parse().ok()?;
    // The file is read only for a problem that names a field.
    let path = field_path(rest.strip_prefix(' ')?)?;
    let text = std::fs::read_to_string(file).ok()?;
    let (_, document) = split_documents(&text)
        .into_iter()
        .find(|(first, _)| *first == start_line)?;
    let found = line_of(document, &path)?;
    Some(format!("{file}:{}:{rest}", start_line + found - 1))
}

/// The line (in the whole file) of the field `problem` begins with, in the
/// definition `document` that starts at the file's line `start_line` (the
/// loader's, which has the text at hand); that line when it names no field
/// the document has.
pub(crate) fn field_line(document: &str, start_line: usize, problem: &str) -> usize {
    field_path(problem)
        .and_then(|path| line_of(document, &path))
        .map_or(start_line, |found| start_line + found - 1)
}

/// The path a problem's text begins with: an `openAPISchema` JSON pointer
/// (`openAPISchema/properties/x/type: …`, `openAPISchema: /properties/x: …`)
/// or a dotted field (`release.prefix: …`, `printerColumns[1].type: …`).
fn field_path(text: &str) -> Option<Vec<String>> {
    if let Some(after) = text.strip_prefix("openAPISchema") {
        let pointer = after.strip_prefix(": ").unwrap_or(after);
        let pointer = pointer.strip_prefix('/')?.split(": ").next()?;
        let mut path = vec!["openAPISchema".to_owned()];
        path.extend(
            pointer
                .split('/')
                .map(|s| s.replace("~1", "/").replace("~0", "~")),
        );
        return Some(path);
    }
    let (field, _) = text.split_once(": ")?;
    if field.is_empty() || field.contains(char::is_whitespace) {
        return None;
    }
    let mut path = Vec::new();
    for part in field.split('.') {
        let (name, indices) = part.split_once('[').unwrap_or((part, ""));
        path.push(name.to_owned());
        for index in indices.split('[') {
            if let Some(i) = index.strip_suffix(']') {
                path.push(i.parse::<usize>().ok()?.to_string());
            }
        }
    }
    Some(path)
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
    fn document_boundaries() {
        assert_eq!(
            split_documents("a: 1\n---\nb: 2\n"),
            [(1, "a: 1\n"), (3, "b: 2\n")]
        );
        assert_eq!(
            split_documents("---\na: 1\n---\n# c\n---\nb: 2\n"),
            [(2, "a: 1\n"), (6, "b: 2\n")]
        );
    }

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
            at_field(&format!(
                "{f}:3: openAPISchema/properties/size/minimum: must be a number"
            )),
            format!("{f}:7: openAPISchema/properties/size/minimum: must be a number")
        );
        assert_eq!(
            at_field(&format!(
                "{f}:3: openAPISchema: /properties/tags/x-kubernetes-validations/0/rule: compilation failed: x"
            )),
            format!(
                "{f}:11: openAPISchema: /properties/tags/x-kubernetes-validations/0/rule: compilation failed: x"
            )
        );
        assert_eq!(
            at_field(&format!(
                "{f}:3: release.chartRef.name: \"widget\" is not a chart"
            )),
            format!("{f}:13: release.chartRef.name: \"widget\" is not a chart")
        );
        assert_eq!(
            at_field(&format!(
                "{f}:3: openAPISchema/properties/tags/x-kubernetes-validations[1].message: m"
            )),
            format!("{f}:3: openAPISchema/properties/tags/x-kubernetes-validations[1].message: m"),
            "a pointer is not a dotted path"
        );
        // Nothing to move: as it was.
        for same in [
            format!("{f}:3: version: \"x\" must look like v1"),
            format!("{f}:3: kind Widget in a/v1 is defined twice: x and y"),
            format!("{f}:3: openAPISchema: the schema of spec must have type: object"),
            format!("{f}:3: openAPISchema/properties/nope: not there"),
            "missing.yaml:1: openAPISchema/properties/size: x".to_owned(),
        ] {
            assert_eq!(at_field(&same), same);
        }
    }
}
