//! Reads the metadata of an object sent in Kubernetes' protobuf encoding
//! (`application/vnd.kubernetes.protobuf`): the `k8s\0` magic, the
//! `runtime.Unknown` envelope (type meta and raw object), and from the raw
//! object its `ObjectMeta` (field 1 of every top-level kind): name,
//! generateName, labels and annotations. kubectl's typed clients send
//! built-in kinds this way (`kubectl create namespace`); a Namespace needs
//! nothing more. Other fields are skipped, but for the spec of the reviews
//! kubectl makes of itself ([`review_spec`]: `kubectl auth can-i`).

use serde_json::{Map, Value, json};

/// The protobuf body's magic prefix.
const MAGIC: &[u8] = b"k8s\0";

/// The content type of Kubernetes protobuf bodies.
pub const CONTENT_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The object as JSON: `apiVersion`, `kind` and the `metadata` read.
pub fn decode(body: &[u8]) -> Result<Value, String> {
    let envelope = body
        .strip_prefix(MAGIC)
        .ok_or("the protobuf body does not start with the k8s magic")?;
    let mut api_version = String::new();
    let mut kind = String::new();
    let mut raw: &[u8] = &[];
    for field in Fields(envelope) {
        match field? {
            (1, Wire::Bytes(type_meta)) => {
                for f in Fields(type_meta) {
                    match f? {
                        (1, Wire::Bytes(b)) => api_version = text(b)?,
                        (2, Wire::Bytes(b)) => kind = text(b)?,
                        _ => {}
                    }
                }
            }
            (2, Wire::Bytes(b)) => raw = b,
            _ => {}
        }
    }
    let mut metadata = Map::new();
    for field in Fields(raw) {
        if let (1, Wire::Bytes(meta)) = field? {
            metadata = object_meta(meta)?;
        }
    }
    Ok(json!({"apiVersion": api_version, "kind": kind, "metadata": metadata}))
}

/// Which review's spec [`review_spec`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewSpec {
    /// `SelfSubjectAccessReviewSpec`: `resourceAttributes` (1) and
    /// `nonResourceAttributes` (2).
    Access,
    /// `SelfSubjectRulesReviewSpec`: `namespace` (1).
    Rules,
}

/// The `spec` (field 2 of the object) of a review sent in protobuf, as
/// JSON: `{}` when it has none.
pub fn review_spec(body: &[u8], which: ReviewSpec) -> Result<Value, String> {
    let envelope = body
        .strip_prefix(MAGIC)
        .ok_or("the protobuf body does not start with the k8s magic")?;
    let mut raw: &[u8] = &[];
    for field in Fields(envelope) {
        if let (2, Wire::Bytes(b)) = field? {
            raw = b;
        }
    }
    let mut spec = Map::new();
    for field in Fields(raw) {
        let (2, Wire::Bytes(bytes)) = field? else {
            continue;
        };
        for f in Fields(bytes) {
            match (which, f?) {
                (ReviewSpec::Access, (1, Wire::Bytes(b))) => {
                    let names = [
                        "namespace",
                        "verb",
                        "group",
                        "version",
                        "resource",
                        "subresource",
                        "name",
                    ];
                    spec.insert("resourceAttributes".into(), strings(b, &names)?);
                }
                (ReviewSpec::Access, (2, Wire::Bytes(b))) => {
                    spec.insert(
                        "nonResourceAttributes".into(),
                        strings(b, &["path", "verb"])?,
                    );
                }
                (ReviewSpec::Rules, (1, Wire::Bytes(b))) => {
                    spec.insert("namespace".into(), text(b)?.into());
                }
                _ => {}
            }
        }
    }
    Ok(Value::Object(spec))
}

/// A message of string fields numbered 1, 2, … as `names` (others skipped),
/// the empty ones left out as Go's `omitempty` leaves them.
fn strings(bytes: &[u8], names: &[&str]) -> Result<Value, String> {
    let mut out = Map::new();
    for field in Fields(bytes) {
        if let (number, Wire::Bytes(b)) = field?
            && let Some(name) = usize::try_from(number)
                .ok()
                .and_then(|n| n.checked_sub(1))
                .and_then(|i| names.get(i))
            && !b.is_empty()
        {
            out.insert((*name).to_owned(), text(b)?.into());
        }
    }
    Ok(Value::Object(out))
}

fn object_meta(bytes: &[u8]) -> Result<Map<String, Value>, String> {
    let mut meta = Map::new();
    let mut labels = Map::new();
    let mut annotations = Map::new();
    for field in Fields(bytes) {
        match field? {
            (1, Wire::Bytes(b)) => {
                meta.insert("name".into(), text(b)?.into());
            }
            (2, Wire::Bytes(b)) => {
                meta.insert("generateName".into(), text(b)?.into());
            }
            (3, Wire::Bytes(b)) => {
                meta.insert("namespace".into(), text(b)?.into());
            }
            (11, Wire::Bytes(entry)) => {
                let (k, v) = map_entry(entry)?;
                labels.insert(k, v.into());
            }
            (12, Wire::Bytes(entry)) => {
                let (k, v) = map_entry(entry)?;
                annotations.insert(k, v.into());
            }
            _ => {}
        }
    }
    if !labels.is_empty() {
        meta.insert("labels".into(), Value::Object(labels));
    }
    if !annotations.is_empty() {
        meta.insert("annotations".into(), Value::Object(annotations));
    }
    Ok(meta)
}

fn map_entry(bytes: &[u8]) -> Result<(String, String), String> {
    let (mut key, mut value) = (String::new(), String::new());
    for field in Fields(bytes) {
        match field? {
            (1, Wire::Bytes(b)) => key = text(b)?,
            (2, Wire::Bytes(b)) => value = text(b)?,
            _ => {}
        }
    }
    Ok((key, value))
}

fn text(bytes: &[u8]) -> Result<String, String> {
    String::from_utf8(bytes.to_vec()).map_err(|_| "a protobuf string is not UTF-8".to_owned())
}

/// A field's value by wire type.
enum Wire<'a> {
    Varint,
    Fixed,
    Bytes(&'a [u8]),
}

/// The fields of a protobuf message, in order.
struct Fields<'a>(&'a [u8]);

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u64, Wire<'a>), String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.0.is_empty() {
            return None;
        }
        Some(self.read())
    }
}

impl<'a> Fields<'a> {
    fn read(&mut self) -> Result<(u64, Wire<'a>), String> {
        let key = self.varint()?;
        let (number, wire) = (key >> 3, key & 7);
        let value = match wire {
            0 => {
                self.varint()?;
                Wire::Varint
            }
            1 => {
                self.take(8)?;
                Wire::Fixed
            }
            2 => {
                let len = usize::try_from(self.varint()?).map_err(|_| "length overflow")?;
                Wire::Bytes(self.take(len)?)
            }
            5 => {
                self.take(4)?;
                Wire::Fixed
            }
            other => {
                self.0 = &[];
                return Err(format!("unsupported protobuf wire type {other}"));
            }
        };
        Ok((number, value))
    }

    fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let Some((&byte, rest)) = self.0.split_first() else {
                self.0 = &[];
                return Err("truncated protobuf varint".into());
            };
            self.0 = rest;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        self.0 = &[];
        Err("protobuf varint too long".into())
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8], String> {
        if len > self.0.len() {
            self.0 = &[];
            return Err("truncated protobuf field".into());
        }
        let (head, rest) = self.0.split_at(len);
        self.0 = rest;
        Ok(head)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(number: u8, bytes: &[u8]) -> Vec<u8> {
        let mut out = vec![(number << 3) | 2, u8::try_from(bytes.len()).unwrap()];
        out.extend_from_slice(bytes);
        out
    }

    #[test]
    fn reads_a_namespace_as_kubectl_sends_it() {
        let label = [field(1, b"team"), field(2, b"a")].concat();
        let meta = [field(1, b"team-a"), field(11, &label), vec![0x28, 0x07]].concat();
        let raw = [field(1, &meta), field(2, b"")].concat();
        let type_meta = [field(1, b"v1"), field(2, b"Namespace")].concat();
        let body = [MAGIC.to_vec(), field(1, &type_meta), field(2, &raw)].concat();
        assert_eq!(
            decode(&body).unwrap(),
            json!({"apiVersion": "v1", "kind": "Namespace",
                   "metadata": {"name": "team-a", "labels": {"team": "a"}}})
        );
    }

    #[test]
    fn reads_the_spec_of_kubectl_auth_can_i() {
        let attributes = [
            field(2, b"create"),
            field(3, b"apps.cozystack.io"),
            field(5, b"postgreses"),
        ]
        .concat();
        let spec = field(1, &attributes);
        let raw = [field(1, b""), field(2, &spec)].concat();
        let body = [MAGIC.to_vec(), field(2, &raw)].concat();
        assert_eq!(
            review_spec(&body, ReviewSpec::Access).unwrap(),
            json!({"resourceAttributes": {"verb": "create", "group": "apps.cozystack.io", "resource": "postgreses"}})
        );
        let rules = [MAGIC.to_vec(), field(2, &field(2, &field(1, b"team-a")))].concat();
        assert_eq!(
            review_spec(&rules, ReviewSpec::Rules).unwrap(),
            json!({"namespace": "team-a"})
        );
        for input in crate::apimachinery::garbage_inputs(2000) {
            let _ = review_spec(&[MAGIC, input.as_bytes()].concat(), ReviewSpec::Access);
        }
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(decode(b"{}").is_err());
        assert!(decode(b"k8s\0\x0a\xff").is_err());
        assert!(decode(b"k8s\0\x0f").is_err());
        for input in crate::apimachinery::garbage_inputs(2000) {
            let _ = decode(&[MAGIC, input.as_bytes()].concat());
        }
    }
}
