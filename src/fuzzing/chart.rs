//! Fuzz target of packaged charts: `.tgz` reading and what `kinds
//! scaffold` does with the files it finds.

use std::io::Write;

use flate2::Compression;
use flate2::write::GzEncoder;

use crate::kinds::chart::{Limits, load_archive_bytes, pluralize, propose_kind};
use crate::kinds::schema::{CompiledSchema, check_structural, infer_from_values, to_structural};

/// Limits small enough that one run stays fast, large enough for real
/// charts (the example charts are a few KiB).
const LIMITS: Limits = Limits {
    max_file_bytes: 256 * 1024,
    max_total_bytes: 1024 * 1024,
    max_entries: 1_000,
    max_archive_bytes: 1024 * 1024,
    max_index_bytes: 1024 * 1024,
};

/// `chart_archive`: a `.tgz` as is when the input starts with the gzip
/// magic, otherwise the input is the *tar* stream and is gzipped first
/// (mutations of compressed bytes rarely get past the CRC, so the tar
/// layer is fuzzed through its plain bytes).
///
/// A chart that loads goes on as in `kinds scaffold`: its schema is
/// converted, or inferred from `values.yaml`; a result without errors must
/// be structural and compile.
pub fn chart_archive(data: &[u8]) {
    let gzipped;
    let bytes = if data.starts_with(&[0x1f, 0x8b]) {
        data
    } else {
        let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
        gz.write_all(data).expect("gzip into memory");
        gzipped = gz.finish().expect("gzip into memory");
        &gzipped
    };
    let Ok(chart) = load_archive_bytes(bytes, "fuzz.tgz", &LIMITS) else {
        return;
    };
    let meta = &chart.metadata;
    let (kind, _) = propose_kind(&meta.name, meta.description.as_deref(), &meta.annotations);
    let _ = pluralize(&kind.to_lowercase());
    let schema = if let Some(text) = &chart.values_schema_json {
        let parsed = serde_json::from_str(text).expect("a loaded chart's schema is JSON");
        let conversion = to_structural(&parsed);
        conversion.is_ok().then_some(conversion.schema)
    } else if let Some(values) = &chart.values_yaml {
        infer_from_values(values)
            .ok()
            .map(|inferred| inferred.schema)
    } else {
        None
    };
    if let Some(schema) = schema {
        let problems = check_structural(&schema);
        assert!(
            problems.is_empty(),
            "a scaffolded schema is not structural: {problems:?}\n{schema}"
        );
        if let Err(e) = CompiledSchema::new(&schema) {
            panic!("a scaffolded schema does not compile: {e}\n{schema}");
        }
    }
}
