//! Tests over the example charts shipped in `examples/charts/` (postgres,
//! redis, bucket): loading them as directories, as packaged archives and
//! through a repository index, and deriving their kind names.

use std::fs::File;
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::write::GzEncoder;
use sha2::{Digest, Sha256};

use super::test_support::write_file;
use super::{ChartSource, LoadedChart, load, pluralize, propose_kind};

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/charts");

fn example(name: &str) -> PathBuf {
    Path::new(EXAMPLES).join(name)
}

fn load_example(name: &str) -> LoadedChart {
    load(&ChartSource::Dir(example(name))).unwrap_or_else(|err| panic!("{name}: {err}"))
}

/// Packs an example chart the way `helm package` lays it out.
fn package(name: &str, dest: &Path) -> PathBuf {
    let chart = load_example(name);
    let path = dest.join(format!("{name}-{}.tgz", chart.metadata.version));
    let mut builder = tar::Builder::new(GzEncoder::new(
        File::create(&path).unwrap(),
        Compression::default(),
    ));
    builder.append_dir_all(name, example(name)).unwrap();
    builder.into_inner().unwrap().finish().unwrap();
    path
}

#[test]
fn postgres_example() {
    let chart = load_example("postgres");
    assert_eq!(chart.metadata.name, "postgres");
    assert_eq!(chart.metadata.api_version, "v2");
    assert_eq!(chart.metadata.chart_type.as_deref(), Some("application"));
    let values = chart.values_yaml.unwrap();
    assert!(values.contains("synchronousCommit: \"on\""));
    let schema: serde_json::Value =
        serde_json::from_str(&chart.values_schema_json.unwrap()).unwrap();
    assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
    let props = &schema["properties"];
    assert_eq!(props["replicas"]["maximum"], 9);
    assert_eq!(
        props["storageClass"]["type"],
        serde_json::json!(["string", "null"])
    );
    assert_eq!(
        props["version"]["enum"],
        serde_json::json!(["16", "17", "18"])
    );
    assert_eq!(
        props["synchronousCommit"]["enum"],
        serde_json::json!(["on", "off", "remote_apply"])
    );
    assert_eq!(props["resources"]["$ref"], "#/$defs/resources");
    assert!(schema["$defs"]["resources"].is_object());
    assert!(props["backup"]["if"].is_object() && props["backup"]["then"].is_object());
    assert!(props["users"]["additionalProperties"]["properties"]["role"].is_object());
}

#[test]
fn redis_example() {
    let chart = load_example("redis");
    assert_eq!(chart.metadata.name, "redis");
    let values = chart.values_yaml.unwrap();
    assert!(values.contains("appendonly: \"no\""));
    let schema: serde_json::Value =
        serde_json::from_str(&chart.values_schema_json.unwrap()).unwrap();
    let props = &schema["properties"];
    assert_eq!(
        props["size"]["type"],
        serde_json::json!(["integer", "string"])
    );
    assert_eq!(
        props["appendonly"]["enum"],
        serde_json::json!(["yes", "no"])
    );
    assert_eq!(props["maxmemoryPolicy"]["default"], "noeviction");
    assert_eq!(props["authEnabled"]["default"], true);
}

#[test]
fn bucket_example_has_no_schema() {
    let chart = load_example("bucket");
    assert_eq!(chart.metadata.name, "bucket");
    assert_eq!(chart.values_schema_json, None);
    let values = chart.values_yaml.unwrap();
    for needle in [
        "## @param storageClass Storage class of the bucket",
        "## @param versioning Keep object versions",
        "## @param lifecycle.expireDays Days before objects expire",
        "## @param users List of users with access",
        "encryption: \"yes\"",
        "labels: {}",
    ] {
        assert!(values.contains(needle), "missing {needle:?}");
    }
}

#[test]
fn example_kind_names() {
    for (chart, kind, plural) in [
        ("postgres", "Postgres", "postgreses"),
        ("redis", "Redis", "redises"),
        ("bucket", "Bucket", "buckets"),
    ] {
        let meta = load_example(chart).metadata;
        let (proposed, _) =
            propose_kind(&meta.name, meta.description.as_deref(), &meta.annotations);
        let plural_of = pluralize(&proposed.to_lowercase());
        assert_eq!((proposed.as_str(), plural_of.as_str()), (kind, plural));
    }
}

#[test]
fn examples_load_the_same_from_archives_and_an_index() {
    let tmp = tempfile::tempdir().unwrap();
    let mut index = String::from("apiVersion: v1\nentries:\n");
    for name in ["postgres", "redis", "bucket"] {
        let from_dir = load_example(name);
        let archive = package(name, tmp.path());
        let from_archive = load(&ChartSource::Archive(archive.clone())).unwrap();
        assert_eq!(from_archive.metadata, from_dir.metadata);
        assert_eq!(from_archive.values_yaml, from_dir.values_yaml);
        assert_eq!(from_archive.values_schema_json, from_dir.values_schema_json);

        let digest: String = Sha256::digest(std::fs::read(&archive).unwrap())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let file = archive.file_name().unwrap().to_string_lossy().into_owned();
        index.push_str(&format!(
            "  {name}:\n  - name: {name}\n    version: {}\n    urls: [{file}]\n    digest: {digest}\n",
            from_dir.metadata.version
        ));
    }
    let index_path = tmp.path().join("index.yaml");
    write_file(&index_path, &index);
    for name in ["postgres", "redis", "bucket"] {
        let from_index = load(&ChartSource::repo_index(&index_path, name)).unwrap();
        assert_eq!(from_index.metadata, load_example(name).metadata);
        assert!(from_index.repo_url.is_some());
    }
}
