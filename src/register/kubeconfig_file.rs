//! Standalone's entries in a kubeconfig file, written the way `kind` writes
//! its own: into an existing file, replacing only the entries of our names
//! (cluster and context `kubectl-cozy`, user `kubectl-cozy-admin`) and
//! making our context current, so every other cluster, context, user,
//! preference and extension stays; and, when the server stops, the
//! context that was current before made current again. A file that is not
//! a kubeconfig is left as it is and refused.

use serde_json::{Map, Value, json};

/// The name of our cluster and context.
pub const CONTEXT: &str = "kubectl-cozy";
/// The name of our user.
pub const USER: &str = "kubectl-cozy-admin";

/// Our three entries.
pub struct Entries<'a> {
    /// The server's URL.
    pub server: &'a str,
    /// The CA the server's certificate chains to, base64 PEM.
    pub ca_data: &'a str,
    /// The client certificate, base64 PEM.
    pub cert_data: &'a str,
    /// The client key, base64 PEM.
    pub key_data: &'a str,
}

/// The merged file.
#[derive(Debug)]
pub struct Merged {
    /// The kubeconfig to write, YAML.
    pub text: String,
    /// The server our cluster entry named before, when it named another.
    pub replaced_server: Option<String>,
    /// The context current before, when it was another one than ours.
    pub previous_context: Option<String>,
    /// Whether ours was current already (a server before this one did not
    /// make the previous one current again).
    pub ours_was_current: bool,
}

/// `existing` (the file's text, if there is one) with `entries` written in.
/// Errors say why `existing` is not a kubeconfig.
pub fn merge(existing: Option<&str>, entries: &Entries<'_>) -> Result<Merged, String> {
    let mut config = parse(existing)?;
    let ours_was_current = current_context(&config) == Some(CONTEXT);
    let previous_context = current_context(&config)
        .filter(|c| !c.is_empty() && *c != CONTEXT)
        .map(str::to_owned);
    let previous = named(&config, "clusters", CONTEXT)?
        .and_then(|c| c.pointer("/cluster/server"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    put(
        &mut config,
        "clusters",
        CONTEXT,
        json!({"server": entries.server, "certificate-authority-data": entries.ca_data}),
        "cluster",
    )?;
    put(
        &mut config,
        "contexts",
        CONTEXT,
        json!({"cluster": CONTEXT, "user": USER, "namespace": "default"}),
        "context",
    )?;
    put(
        &mut config,
        "users",
        USER,
        json!({"client-certificate-data": entries.cert_data, "client-key-data": entries.key_data}),
        "user",
    )?;
    config.insert("current-context".into(), CONTEXT.into());
    Ok(Merged {
        text: render(config)?,
        replaced_server: previous.filter(|p| p != entries.server),
        previous_context,
        ours_was_current,
    })
}

/// Why [`restore_context`] left a file as it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kept {
    /// Another context is current: the user moved on (or the file is gone).
    AnotherCurrent,
    /// Our context points at another server: one started since on the same file.
    AnotherServer,
    /// The context to restore is no longer in the file.
    PreviousGone,
}

/// `existing` with `previous` current again, if ours is still current and
/// still names `server` (not a server started since on the same file),
/// and `previous` is still there; else why the file is best left as it is.
pub fn restore_context(
    existing: &str,
    server: &str,
    previous: &str,
) -> Result<Result<String, Kept>, String> {
    let mut config = parse(Some(existing))?;
    if current_context(&config) != Some(CONTEXT) {
        return Ok(Err(Kept::AnotherCurrent));
    }
    let ours = named(&config, "clusters", CONTEXT)?
        .and_then(|c| c.pointer("/cluster/server"))
        .and_then(Value::as_str);
    if ours != Some(server) {
        return Ok(Err(Kept::AnotherServer));
    }
    if named(&config, "contexts", previous)?.is_none() {
        return Ok(Err(Kept::PreviousGone));
    }
    config.insert("current-context".into(), previous.into());
    render(config).map(Ok)
}

/// A kubeconfig's text as a mapping (none or blank: an empty one); errors
/// say why it is not a kubeconfig.
fn parse(existing: Option<&str>) -> Result<Map<String, Value>, String> {
    let config = match existing.filter(|t| !t.trim().is_empty()) {
        None => Map::new(),
        Some(text) => match serde_saphyr::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            Ok(Value::Null) => Map::new(),
            Ok(_) => return Err("its top level is not a mapping".into()),
            Err(e) => return Err(format!("it is not YAML: {e}")),
        },
    };
    match config.get("kind") {
        None | Some(Value::Null) => {}
        Some(Value::String(kind)) if kind == "Config" => {}
        Some(other) => return Err(format!("its kind is {other}, not Config")),
    }
    Ok(config)
}

fn current_context(config: &Map<String, Value>) -> Option<&str> {
    config.get("current-context").and_then(Value::as_str)
}

/// `config` as YAML, `apiVersion` and `kind` first (a fresh file gets the
/// usual head).
fn render(config: Map<String, Value>) -> Result<String, String> {
    let mut ordered = Map::new();
    ordered.insert("apiVersion".into(), "v1".into());
    ordered.insert("kind".into(), "Config".into());
    for (key, value) in config {
        ordered.insert(key, value);
    }
    serde_saphyr::to_string(&Value::Object(ordered))
        .map_err(|e| format!("it cannot be written back as YAML: {e}"))
}

/// The entry of `list` named `name`; an error when `list` is not a list.
fn named<'a>(
    config: &'a Map<String, Value>,
    list: &str,
    name: &str,
) -> Result<Option<&'a Value>, String> {
    match config.get(list) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => Ok(items
            .iter()
            .find(|item| item.get("name").and_then(Value::as_str) == Some(name))),
        Some(_) => Err(format!("its {list} are not a list")),
    }
}

/// Replaces the entry of `list` named `name` (in place), or appends one.
fn put(
    config: &mut Map<String, Value>,
    list: &str,
    name: &str,
    body: Value,
    field: &str,
) -> Result<(), String> {
    let entry = json!({"name": name, field: body});
    let items = config
        .entry(list.to_owned())
        .or_insert_with(|| Value::Array(Vec::new()));
    if items.is_null() {
        *items = Value::Array(Vec::new());
    }
    let Value::Array(items) = items else {
        return Err(format!("its {list} are not a list"));
    };
    match items
        .iter_mut()
        .find(|item| item.get("name").and_then(Value::as_str) == Some(name))
    {
        Some(item) => *item = entry,
        None => items.push(entry),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ours(server: &str) -> Entries<'_> {
        Entries {
            server,
            ca_data: "Q0E=",
            cert_data: "Q0VSVA==",
            key_data: "S0VZ",
        }
    }

    fn parse(text: &str) -> Value {
        serde_saphyr::from_str(text).unwrap()
    }

    #[test]
    fn a_new_file_holds_our_entries_and_context() {
        let merged = merge(None, &ours("https://127.0.0.1:6443")).unwrap();
        let config = parse(&merged.text);
        assert_eq!(config["apiVersion"], "v1");
        assert_eq!(config["kind"], "Config");
        assert_eq!(config["current-context"], CONTEXT);
        assert_eq!(
            config["clusters"][0]["cluster"]["server"],
            "https://127.0.0.1:6443"
        );
        assert_eq!(config["contexts"][0]["context"]["user"], USER);
        assert_eq!(config["users"][0]["user"]["client-key-data"], "S0VZ");
        assert!(merged.replaced_server.is_none());
        assert!(merged.previous_context.is_none());
        assert!(!merged.ours_was_current);
        // Again, ours was current: nothing to restore later.
        let again = merge(Some(&merged.text), &ours("https://127.0.0.1:6443")).unwrap();
        assert!(again.previous_context.is_none() && again.ours_was_current);
    }

    #[test]
    fn an_existing_kubeconfig_keeps_everything_else() {
        let existing = "\
apiVersion: v1
kind: Config
preferences:
  colors: true
current-context: work
clusters:
- name: work
  cluster:
    server: https://10.0.0.1:6443
    insecure-skip-tls-verify: true
contexts:
- name: work
  context:
    cluster: work
    user: me
    namespace: team-a
users:
- name: me
  user:
    token: abc
";
        let merged = merge(Some(existing), &ours("https://127.0.0.1:6443")).unwrap();
        let config = parse(&merged.text);
        assert_eq!(config["current-context"], CONTEXT);
        assert_eq!(config["preferences"]["colors"], true);
        let names = |list: &str| -> Vec<String> {
            config[list]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["name"].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(names("clusters"), ["work", CONTEXT]);
        assert_eq!(names("contexts"), ["work", CONTEXT]);
        assert_eq!(names("users"), ["me", USER]);
        assert_eq!(
            config["clusters"][0]["cluster"]["insecure-skip-tls-verify"],
            true
        );
        assert_eq!(config["contexts"][0]["context"]["namespace"], "team-a");
        assert_eq!(config["users"][0]["user"]["token"], "abc");
        assert_eq!(merged.previous_context.as_deref(), Some("work"));

        // When the server stops, `work` is current again, the rest as merged.
        let server = "https://127.0.0.1:6443";
        let restored = restore_context(&merged.text, server, "work")
            .unwrap()
            .unwrap();
        let mut want = config.clone();
        want["current-context"] = "work".into();
        assert_eq!(parse(&restored), want);
        // Not once the user made another context current,
        let moved_on = merged
            .text
            .replace("current-context: kubectl-cozy", "current-context: home");
        assert_eq!(
            restore_context(&moved_on, server, "work").unwrap(),
            Err(Kept::AnotherCurrent)
        );
        // nor once a server started since points our context at itself,
        let later = merge(Some(&merged.text), &ours("https://127.0.0.1:7000")).unwrap();
        assert_eq!(
            restore_context(&later.text, server, "work").unwrap(),
            Err(Kept::AnotherServer)
        );
        // nor to a context deleted meanwhile.
        assert_eq!(
            restore_context(&merged.text, server, "gone").unwrap(),
            Err(Kept::PreviousGone)
        );
    }

    #[test]
    fn our_entries_are_replaced_in_place_and_a_moved_server_is_reported() {
        let first = merge(None, &ours("https://127.0.0.1:6443")).unwrap().text;
        let again = merge(Some(&first), &ours("https://127.0.0.1:6443")).unwrap();
        assert!(again.replaced_server.is_none());
        assert_eq!(parse(&again.text), parse(&first));
        let moved = merge(Some(&first), &ours("https://127.0.0.1:7000")).unwrap();
        assert_eq!(
            moved.replaced_server.as_deref(),
            Some("https://127.0.0.1:6443")
        );
        let config = parse(&moved.text);
        assert_eq!(config["clusters"].as_array().unwrap().len(), 1);
        assert_eq!(
            config["clusters"][0]["cluster"]["server"],
            "https://127.0.0.1:7000"
        );
    }

    #[test]
    fn an_empty_file_is_a_new_one() {
        assert!(merge(Some("\n"), &ours("https://127.0.0.1:1")).is_ok());
    }

    #[test]
    fn what_is_not_a_kubeconfig_is_refused() {
        let e = merge(Some("- a\n- b\n"), &ours("https://x")).unwrap_err();
        assert!(e.contains("not a mapping"), "{e}");
        let e = merge(Some("kind: Pod\n"), &ours("https://x")).unwrap_err();
        assert!(e.contains("not Config"), "{e}");
        let e = merge(Some("clusters: {}\n"), &ours("https://x")).unwrap_err();
        assert!(e.contains("clusters are not a list"), "{e}");
        let e = merge(Some("a: [\n"), &ours("https://x")).unwrap_err();
        assert!(e.contains("not YAML"), "{e}");
    }
}
