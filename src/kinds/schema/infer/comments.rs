//! The comments of a `values.yaml` that describe its keys, found in the text
//! with the key path each belongs to: Bitnami readme-generator `## @param`
//! lines (and cozyvalues-gen's typed form with its `@typedef`/`@field`,
//! `@enum`/`@value` and `@x-cozystack-options` lines), and helm-docs `# --`
//! comments above a key. Only comments and key lines are looked at; the
//! values themselves are parsed elsewhere.

use std::collections::HashMap;

/// One step of a key path: a mapping key, or the items of a list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Seg {
    Key(String),
    Items,
}

/// A description found for a key path.
pub(super) struct Doc {
    pub(super) text: String,
    pub(super) modifiers: Vec<String>,
    pub(super) line: usize,
    /// cozyvalues-gen type (`{T}`), which gives the key its schema.
    pub(super) type_name: Option<String>,
    /// cozyvalues-gen `name=default`, used when the value is null.
    pub(super) default: Option<String>,
    /// The `source` of an `@x-cozystack-options` line below it.
    pub(super) options_source: Option<String>,
}

/// A `## @field {type} [name]=default - description` line of a
/// cozyvalues-gen `@typedef` (`@property` is a synonym).
pub(super) struct Field {
    pub(super) name: String,
    pub(super) type_name: String,
    pub(super) text: String,
    /// Written `[name]`: may be left out (not required).
    pub(super) optional: bool,
    pub(super) default: Option<String>,
    pub(super) options_source: Option<String>,
}

/// A cozyvalues-gen `## @enum {base} Name - description` with its
/// `## @value v` lines.
#[derive(Default)]
pub(super) struct EnumDef {
    pub(super) base: String,
    pub(super) values: Vec<String>,
}

/// What the last annotation line opened, for the lines that continue it.
#[derive(Default)]
pub(super) enum Open {
    #[default]
    Nothing,
    Param,
    Typedef(String),
    Enum(String),
}

/// Everything `scan_comments` finds.
#[derive(Default)]
pub(super) struct Comments {
    pub(super) params: Docs,
    pub(super) helm_docs: Docs,
    pub(super) typedefs: HashMap<String, Vec<Field>>,
    pub(super) enums: HashMap<String, EnumDef>,
    pub(super) open: Open,
    /// The key paths of `## @skip` lines: the chart's own business (an
    /// image tag, internal settings), not the kind's to pin.
    pub(super) skipped: Vec<Vec<Seg>>,
}

/// Parses a readme-generator key path such as `a.b`, `list[0].name` or
/// `list[].name` (`\.` is a literal dot).
fn parse_param_path(p: &str) -> Vec<Seg> {
    let mut segs = Vec::new();
    let mut cur = String::new();
    let mut chars = p.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'.') => {
                cur.push('.');
                chars.next();
            }
            '.' => {
                if !cur.is_empty() {
                    segs.push(Seg::Key(std::mem::take(&mut cur)));
                }
            }
            '[' => {
                if !cur.is_empty() {
                    segs.push(Seg::Key(std::mem::take(&mut cur)));
                }
                for d in chars.by_ref() {
                    if d == ']' {
                        break;
                    }
                }
                segs.push(Seg::Items);
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        segs.push(Seg::Key(cur));
    }
    segs
}

pub(super) type Docs = Vec<(Vec<Seg>, Doc)>;

/// Finds `## @param` lines and `# --` comments (with the key path they sit
/// above) in the YAML text.
pub(super) fn scan_comments(src: &str) -> Comments {
    let mut found = Comments::default();
    // (indent, path, is a list-item marker)
    let mut stack: Vec<(usize, Vec<Seg>, bool)> = Vec::new();
    let mut pending: Option<(String, usize)> = None;
    let mut block_scalar: Option<usize> = None;
    for (i, raw) in src.lines().enumerate() {
        let lineno = i + 1;
        let indent = raw.len() - raw.trim_start_matches(' ').len();
        let trimmed = raw.trim();
        if let Some(bi) = block_scalar {
            if trimmed.is_empty() || indent > bi {
                continue;
            }
            block_scalar = None;
        }
        if trimmed.is_empty() {
            pending = None;
            continue;
        }
        if trimmed.starts_with('#') {
            comment(trimmed, lineno, &mut pending, &mut found);
            continue;
        }
        if trimmed == "---" || trimmed == "..." || trimmed.starts_with('%') {
            pending = None;
            continue;
        }
        // Strip list-item dashes ("- ", possibly repeated).
        let mut content = trimmed;
        let mut dash_indents = Vec::new();
        let mut col = indent;
        while let Some(rest) = content.strip_prefix('-') {
            if !(rest.is_empty() || rest.starts_with(' ')) {
                break;
            }
            dash_indents.push(col);
            let r = rest.trim_start_matches(' ');
            col += content.len() - r.len();
            content = r;
        }
        for &d in &dash_indents {
            while let Some((ti, _, items)) = stack.last() {
                if *ti > d || (*ti == d && *items) {
                    stack.pop();
                } else {
                    break;
                }
            }
            let mut path = stack.last().map(|(_, p, _)| p.clone()).unwrap_or_default();
            path.push(Seg::Items);
            stack.push((d, path, true));
        }
        if content.starts_with('#') {
            // "- # -- text": a comment after a list dash.
            comment(content, lineno, &mut pending, &mut found);
            continue;
        }
        let Some((key, rest)) = split_key(content) else {
            pending = None;
            continue;
        };
        while let Some((ti, _, _)) = stack.last() {
            if *ti >= col {
                stack.pop();
            } else {
                break;
            }
        }
        let mut path = stack.last().map(|(_, p, _)| p.clone()).unwrap_or_default();
        path.push(Seg::Key(key));
        if let Some((text, line)) = pending.take() {
            found.helm_docs.push((
                path.clone(),
                Doc {
                    text,
                    modifiers: Vec::new(),
                    line,
                    type_name: None,
                    default: None,
                    options_source: None,
                },
            ));
        }
        let value = rest.trim_start();
        if value.starts_with('|') || value.starts_with('>') {
            block_scalar = Some(col);
        }
        stack.push((col, path, false));
    }
    found
}

/// Handles one comment: collects `## @param` lines, starts (`# --`) or
/// continues a helm-docs description.
fn comment(
    trimmed: &str,
    lineno: usize,
    pending: &mut Option<(String, usize)>,
    found: &mut Comments,
) {
    let body = trimmed.trim_start_matches('#').trim();
    if let Some(rest) = body.strip_prefix('@') {
        let (directive, rest) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let rest = rest.trim();
        match directive {
            "skip" => {
                found.open = Open::Nothing;
                if !rest.is_empty() {
                    found.skipped.push(parse_param_path(rest));
                }
            }
            "param" => {
                found.open = Open::Param;
                if let Some(t) = split_typed(rest) {
                    // cozyvalues-gen: `@param {type} name=default - description`.
                    let (modifiers, text) = split_modifiers(t.text);
                    found.params.push((
                        parse_param_path(t.name),
                        Doc {
                            text: text.to_string(),
                            modifiers,
                            line: lineno,
                            type_name: Some(t.type_name.to_string()),
                            default: t.default.map(str::to_string),
                            options_source: None,
                        },
                    ));
                    return;
                }
                let (path, text) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                let (modifiers, text) = split_modifiers(text.trim());
                if !path.is_empty() {
                    found.params.push((
                        parse_param_path(path),
                        Doc {
                            text: text.to_string(),
                            modifiers,
                            line: lineno,
                            type_name: None,
                            default: None,
                            options_source: None,
                        },
                    ));
                }
            }
            "typedef" => {
                found.open = match split_typed(rest) {
                    Some(t) => {
                        found.typedefs.entry(t.name.to_string()).or_default();
                        Open::Typedef(t.name.to_string())
                    }
                    None => Open::Nothing,
                };
            }
            "field" | "property" => {
                if let (Open::Typedef(td), Some(t)) = (&found.open, split_typed(rest)) {
                    found.typedefs.entry(td.clone()).or_default().push(Field {
                        name: t.name.to_string(),
                        type_name: t.type_name.to_string(),
                        text: t.text.to_string(),
                        optional: t.optional,
                        default: t.default.map(str::to_string),
                        options_source: None,
                    });
                }
            }
            "enum" => {
                found.open = match split_typed(rest) {
                    Some(t) => {
                        found.enums.insert(
                            t.name.to_string(),
                            EnumDef {
                                base: t.type_name.to_string(),
                                values: Vec::new(),
                            },
                        );
                        Open::Enum(t.name.to_string())
                    }
                    None => Open::Nothing,
                };
            }
            "value" => {
                if let Open::Enum(name) = &found.open
                    && let Some(e) = found.enums.get_mut(name)
                    && !rest.is_empty()
                {
                    e.values.push(rest.to_string());
                }
            }
            "x-cozystack-options" => {
                let source = options_source(rest);
                match &found.open {
                    Open::Typedef(td) => {
                        if let Some(f) = found.typedefs.get_mut(td).and_then(|f| f.last_mut()) {
                            f.options_source = source;
                        }
                    }
                    Open::Param => {
                        if let Some((_, d)) = found.params.last_mut() {
                            d.options_source = source;
                        }
                    }
                    _ => {}
                }
            }
            "section" | "param-section" => found.open = Open::Nothing,
            _ => {}
        }
        return;
    }
    if let Some(rest) = trimmed.strip_prefix("# --") {
        *pending = Some((rest.trim().to_string(), lineno));
    } else if let Some((text, _)) = pending.as_mut()
        && !body.is_empty()
    {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(body);
    }
}

/// A cozyvalues-gen `{type} [name]=default - description`.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Typed<'s> {
    pub(super) type_name: &'s str,
    pub(super) name: &'s str,
    pub(super) optional: bool,
    /// The text after `=`, quotes included (`"7%"`, `{}`, `no`).
    pub(super) default: Option<&'s str>,
    pub(super) text: &'s str,
}

/// Splits cozyvalues-gen `{type} name - description`, where the name may be
/// written `[name]` (optional) and followed by `=default`. Without the ` - `,
/// the name is the first word and the description the rest, as in an
/// untyped `@param name Description`.
fn split_typed(rest: &str) -> Option<Typed<'_>> {
    let inner = rest.strip_prefix('{')?;
    let close = inner.find('}')?;
    let type_name = inner[..close].trim();
    let after = inner[close + 1..].trim_start();
    let (name_part, text) = match after.find(" - ") {
        Some(i) => (&after[..i], after[i + 3..].trim()),
        None => match after.split_once(char::is_whitespace) {
            // `[name` alone is an optional name with a space inside its brackets.
            Some((word, text)) if !word.starts_with('[') || word.contains(']') => {
                (word, text.trim())
            }
            _ => (after.trim_end(), ""),
        },
    };
    let name_part = name_part.trim();
    let (optional, name, default) = match name_part.strip_prefix('[') {
        Some(r) => {
            let (name, after) = r.split_once(']').unwrap_or((r, ""));
            (true, name, after.trim().strip_prefix('='))
        }
        None => match name_part.split_once('=') {
            Some((name, d)) => (false, name, Some(d)),
            None => (false, name_part, None),
        },
    };
    let name = name.trim();
    (!name.is_empty()).then_some(Typed {
        type_name,
        name,
        optional,
        default: default.map(str::trim),
        text,
    })
}

/// The `source` of an `@x-cozystack-options {source: gpu}` line.
fn options_source(rest: &str) -> Option<String> {
    let body = rest.trim().trim_start_matches('{').trim_end_matches('}');
    body.split(',').find_map(|kv| {
        let (k, v) = kv.split_once(':')?;
        (k.trim().trim_matches('"') == "source")
            .then(|| v.trim().trim_matches(['"', '\'']).to_string())
            .filter(|s| !s.is_empty())
    })
}

/// Splits leading `[mod1, mod2]` modifiers off a readme-generator description.
fn split_modifiers(text: &str) -> (Vec<String>, &str) {
    if let Some(rest) = text.strip_prefix('[')
        && let Some(end) = rest.find(']')
    {
        let mods = rest[..end]
            .split(',')
            .map(|m| m.trim().to_string())
            .filter(|m| !m.is_empty())
            .collect();
        return (mods, rest[end + 1..].trim());
    }
    (Vec::new(), text)
}

/// The key of a `key: value` line, if it is one.
fn split_key(content: &str) -> Option<(String, &str)> {
    let (key, after) = if let Some(rest) = content.strip_prefix('"') {
        let mut end = None;
        let mut escaped = false;
        for (i, c) in rest.char_indices() {
            match c {
                '\\' if !escaped => escaped = true,
                '"' if !escaped => {
                    end = Some(i);
                    break;
                }
                _ => escaped = false,
            }
        }
        let end = end?;
        let raw = &rest[..end];
        let key = serde_json::from_str::<String>(&format!("\"{raw}\""))
            .unwrap_or_else(|_| raw.to_string());
        (key, &rest[end + 1..])
    } else if let Some(rest) = content.strip_prefix('\'') {
        let mut i = 0;
        let b = rest.as_bytes();
        let end = loop {
            match b.get(i) {
                None => return None,
                Some(b'\'') if b.get(i + 1) == Some(&b'\'') => i += 2,
                Some(b'\'') => break i,
                Some(_) => i += 1,
            }
        };
        (rest[..end].replace("''", "'"), &rest[end + 1..])
    } else {
        if content.starts_with(['[', '{', '#', '&', '*', '!', '|', '>', '%', '@', '`', '?']) {
            return None;
        }
        let bytes = content.as_bytes();
        let pos = (0..bytes.len()).find(|&i| {
            bytes[i] == b':'
                && (i + 1 == bytes.len() || bytes[i + 1] == b' ' || bytes[i + 1] == b'\t')
        })?;
        let key = content[..pos].trim_end();
        if key.contains(" #") {
            return None;
        }
        (key.to_string(), &content[pos..])
    };
    let after = after.trim_start();
    let rest = after.strip_prefix(':')?;
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    Some((key, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn param_paths() {
        assert_eq!(
            parse_param_path("a.b[0].c"),
            [
                Seg::Key("a".into()),
                Seg::Key("b".into()),
                Seg::Items,
                Seg::Key("c".into())
            ]
        );
        assert_eq!(
            parse_param_path("a[].c"),
            [Seg::Key("a".into()), Seg::Items, Seg::Key("c".into())]
        );
        assert_eq!(
            parse_param_path(r"annotations.prometheus\.io/scrape"),
            [
                Seg::Key("annotations".into()),
                Seg::Key("prometheus.io/scrape".into())
            ]
        );
        assert_eq!(
            split_key("\"quoted: key\": 1").map(|(k, _)| k),
            Some("quoted: key".into())
        );
        assert_eq!(split_key("'it''s': 1").map(|(k, _)| k), Some("it's".into()));
        assert_eq!(
            split_key("url: http://x").map(|(k, _)| k),
            Some("url".into())
        );
        assert_eq!(split_key("just a scalar"), None);
    }

    #[test]
    fn typed_params_name_the_key() {
        assert_eq!(
            split_typed("{string} [evictionHardMemory]=\"7%\" - Hard threshold."),
            Some(Typed {
                type_name: "string",
                name: "evictionHardMemory",
                optional: true,
                default: Some("\"7%\""),
                text: "Hard threshold."
            })
        );
        assert_eq!(
            split_typed("{int} replicas=3 - How many."),
            Some(Typed {
                type_name: "int",
                name: "replicas",
                optional: false,
                default: Some("3"),
                text: "How many."
            })
        );
        assert_eq!(split_typed("replicas - untyped"), None);
        // Without ` - `, the first word is the name.
        assert_eq!(
            split_typed("{quantity} memory Memory limit per replica"),
            Some(Typed {
                type_name: "quantity",
                name: "memory",
                optional: false,
                default: None,
                text: "Memory limit per replica"
            })
        );
        assert_eq!(
            split_typed("{int} [replicas]=2 How many."),
            Some(Typed {
                type_name: "int",
                name: "replicas",
                optional: true,
                default: Some("2"),
                text: "How many."
            })
        );
        assert_eq!(
            split_typed("{string} name").map(|t| (t.name, t.text)),
            Some(("name", ""))
        );
        assert_eq!(options_source("{source: gpu}"), Some("gpu".into()));
        assert_eq!(
            options_source("{\"source\": \"storageclass\"}"),
            Some("storageclass".into())
        );
        assert_eq!(options_source("{}"), None);
    }
}
