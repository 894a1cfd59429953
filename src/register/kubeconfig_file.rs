//! Standalone's entries in a kubeconfig file, written the way `kind` writes
//! its own: into an existing file, replacing only the entries of our names
//! (cluster and context `kubectl-cozy`, user `kubectl-cozy-admin`) and
//! making our context current, so every other cluster, context, user,
//! preference and extension stays. A file that is not a kubeconfig is left
//! as it is and refused.

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
}

/// `existing` (the file's text, if there is one) with `entries` written in.
/// Errors say why `existing` is not a kubeconfig.
pub fn merge(existing: Option<&str>, entries: &Entries<'_>) -> Result<Merged, String> {
    let mut config = match existing.filter(|t| !t.trim().is_empty()) {
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
    // A fresh file gets the usual head first.
    let mut ordered = Map::new();
    ordered.insert("apiVersion".into(), "v1".into());
    ordered.insert("kind".into(), "Config".into());
    for (key, value) in config {
        ordered.insert(key, value);
    }
    let text = serde_saphyr::to_string(&Value::Object(ordered))
        .map_err(|e| format!("it cannot be written back as YAML: {e}"))?;
    Ok(Merged {
        text,
        replaced_server: previous.filter(|p| p != entries.server),
    })
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
