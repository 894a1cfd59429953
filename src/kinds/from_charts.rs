//! Kinds straight from Helm charts (`serve --charts DIR`): every chart in a
//! directory is scaffolded in memory, with the defaults of `kinds scaffold`,
//! and served — the chart author's inner loop. The registry re-runs this when
//! a file under the directory changes, so a new `values.schema.json` or
//! `values.yaml` is served without a restart (a change that breaks a chart is
//! refused and the previous kinds stay).
//!
//! `DIR` is one chart (it holds `Chart.yaml`) or a directory of charts:
//! sub-directories holding `Chart.yaml` and packaged charts (`*.tgz`); a
//! sub-directory without `Chart.yaml` is skipped with a warning (a typo
//! would otherwise make a chart vanish), hidden entries and other files
//! silently. A broken chart's problem is named once by its source.
//!
//! One chart found in several versions (`postgres/` beside the
//! `postgres-0.1.0.tgz` that `helm package` made of it, or two packaged
//! versions) is served once, from its newest version, a directory over a
//! package of the same version, with a warning naming what is skipped; two
//! directories of one chart and version stay an error (a copy the user
//! must pick from).

use std::path::{Path, PathBuf};

use super::chart::{self, ChartSource, LoadedChart};
use super::load::{self, LoadError, Loaded};
use super::scaffold::{self, ScaffoldOptions};
use crate::error_chain::error_chain;

/// The charts under `dir`, in name order, and a warning for each
/// sub-directory skipped because it holds no `Chart.yaml`.
pub(crate) fn chart_sources(dir: &Path) -> Result<(Vec<ChartSource>, Vec<String>), LoadError> {
    let read_error = |source| LoadError::Read {
        path: dir.to_owned(),
        source,
    };
    if dir.join("Chart.yaml").is_file() {
        return Ok((vec![ChartSource::Dir(dir.to_owned())], Vec::new()));
    }
    if dir.is_file() && dir.extension().is_some_and(|e| e == "tgz") {
        return Ok((vec![ChartSource::Archive(dir.to_owned())], Vec::new()));
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(read_error)?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(read_error)?;
    entries.sort();
    let mut skipped = Vec::new();
    let sources: Vec<ChartSource> = entries
        .into_iter()
        .filter_map(|path| {
            let hidden = path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'));
            if path.join("Chart.yaml").is_file() {
                Some(ChartSource::Dir(path))
            } else if path.is_file() && path.extension().is_some_and(|e| e == "tgz") {
                Some(ChartSource::Archive(path))
            } else {
                if path.is_dir() && !hidden {
                    skipped.push(format!(
                        "{}: not a chart (no Chart.yaml); skipped",
                        path.display()
                    ));
                }
                None
            }
        })
        .collect();
    if sources.is_empty() {
        return Err(LoadError::Empty {
            path: dir.to_owned(),
            found: "no chart directories (with a Chart.yaml) or packaged charts (.tgz)".to_owned(),
        });
    }
    Ok((sources, skipped))
}

/// `{origin}: {message}`, unless the message already starts with the origin.
fn named(origin: &str, message: String) -> String {
    if message.starts_with(&format!("{origin}: ")) {
        message
    } else {
        format!("{origin}: {message}")
    }
}

/// Of the charts read, the ones to serve: per chart name, the newest
/// version, and of equal versions a directory over packages (what `helm
/// package` made of it). Each chart left out is a warning naming the one
/// served. Two directories of one name and version are both kept (the set
/// then fails as a kind defined twice).
fn newest_of_each_chart(
    charts: Vec<(ChartSource, LoadedChart)>,
    warnings: &mut Vec<String>,
) -> Vec<(ChartSource, LoadedChart)> {
    let version = |c: &LoadedChart| semver::Version::parse(&c.metadata.version).ok();
    let is_dir = |s: &ChartSource| matches!(s, ChartSource::Dir(_));
    // Whether `a` is served rather than `b` (same chart name).
    let serves_over = |a: &(ChartSource, LoadedChart), b: &(ChartSource, LoadedChart)| match (
        version(&a.1),
        version(&b.1),
    ) {
        (Some(va), Some(vb)) if va != vb => va > vb,
        _ => is_dir(&a.0) && !is_dir(&b.0),
    };
    let mut kept: Vec<(ChartSource, LoadedChart)> = Vec::with_capacity(charts.len());
    let mut skipped: Vec<(ChartSource, LoadedChart)> = Vec::new();
    for chart in charts {
        let same_name = kept
            .iter()
            .position(|k| k.1.metadata.name == chart.1.metadata.name);
        match same_name {
            Some(i) if serves_over(&chart, &kept[i]) => {
                skipped.push(std::mem::replace(&mut kept[i], chart))
            }
            Some(i) if serves_over(&kept[i], &chart) => skipped.push(chart),
            _ => kept.push(chart),
        }
    }
    for (source, chart) in skipped {
        let Some((served, newest)) = kept
            .iter()
            .find(|k| k.1.metadata.name == chart.metadata.name)
        else {
            continue;
        };
        warnings.push(format!(
            "{source}: chart {} {} skipped: {served} serves version {}{}",
            chart.metadata.name,
            chart.metadata.version,
            newest.metadata.version,
            if newest.metadata.version == chart.metadata.version {
                " (a directory over a package of the same version)"
            } else {
                " (the newest)"
            }
        ));
    }
    kept
}

/// Scaffolds every chart under `dir` and validates the set. Every broken
/// chart is reported (one problem each, naming the chart); warnings name
/// their chart too.
pub(crate) fn load_charts(dir: &Path) -> Result<Loaded, LoadError> {
    let mut kinds = Vec::new();
    let mut problems = Vec::new();
    let (sources, mut warnings) = chart_sources(dir)?;
    let mut charts = Vec::with_capacity(sources.len());
    for source in sources {
        match chart::load(&source) {
            Ok(loaded) => charts.push((source, loaded)),
            Err(err) => problems.push(named(&source.to_string(), error_chain(&err))),
        }
    }
    for (source, loaded) in newest_of_each_chart(charts, &mut warnings) {
        let origin = source.to_string();
        let scaffolded = match scaffold::scaffold(&loaded, &ScaffoldOptions::default()) {
            Ok(s) => s,
            Err(err) => {
                problems.push(named(&origin, error_chain(&err)));
                continue;
            }
        };
        warnings.extend(
            scaffolded
                .warnings
                .into_iter()
                .map(|w| format!("{origin}: {w}")),
        );
        match scaffolded.definition.resolve(origin.clone()) {
            Ok(kind) => kinds.push(kind),
            Err(found) => problems.extend(found.into_iter().map(|p| format!("{origin}: {p}"))),
        }
    }
    if !problems.is_empty() {
        return Err(LoadError::Invalid { problems });
    }
    load::from_resolved(kinds, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn examples() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/charts")
    }

    fn write(dir: &Path, file: &str, text: &str) {
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn every_example_chart_becomes_a_kind() {
        let loaded = load_charts(&examples()).unwrap();
        let mut kinds: Vec<&str> = loaded
            .kinds
            .iter()
            .map(|k| k.definition.kind.as_str())
            .collect();
        kinds.sort();
        let charts = std::fs::read_dir(examples())
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().join("Chart.yaml").is_file())
            .count();
        assert_eq!(kinds.len(), charts, "one kind per chart: {kinds:?}");
        for kind in ["Bucket", "Postgres", "Redis"] {
            assert!(kinds.contains(&kind), "{kinds:?}");
        }
        // The chart without a schema says its schema was inferred, naming it.
        assert!(
            loaded
                .warnings
                .iter()
                .any(|w| w.contains("bucket") && w.contains("inferred")),
            "{:?}",
            loaded.warnings
        );
    }

    #[test]
    fn one_chart_directory_is_served_alone() {
        let loaded = load_charts(&examples().join("redis")).unwrap();
        assert_eq!(loaded.kinds.len(), 1);
        assert_eq!(loaded.kinds[0].definition.plural, "redises");
    }

    /// `serve --charts postgres-0.1.0.tgz`: a packaged chart alone, as a
    /// chart directory alone (it was "Not a directory").
    #[test]
    fn one_packaged_chart_is_served_alone() {
        let dir = tempfile::tempdir().unwrap();
        let archive = dir.path().join("postgres-0.1.0.tgz");
        crate::kinds::chart::test_support::chart_tgz(&archive, |_| {});
        let loaded = load_charts(&archive).unwrap();
        assert_eq!(loaded.kinds.len(), 1);
        assert_eq!(loaded.kinds[0].definition.plural, "postgreses");
        let other = dir.path().join("notes.txt");
        write(dir.path(), "notes.txt", "x");
        assert!(load_charts(&other).is_err());
    }

    #[test]
    fn a_broken_chart_is_named_and_nothing_loads() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "good/Chart.yaml",
            "apiVersion: v2\nname: good\nversion: 0.1.0\n",
        );
        write(dir.path(), "good/values.yaml", "size: 1Gi\n");
        write(
            dir.path(),
            "bad/Chart.yaml",
            "apiVersion: v2\nname: bad\nversion: 0.1.0\n",
        );
        write(dir.path(), "bad/values.schema.json", "{\"type\": ");
        write(dir.path(), "notes.txt", "not a chart");
        let err = load_charts(dir.path()).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("chart directory"), "{text}");
        assert!(text.contains("bad"), "{text}");
        assert!(text.contains("values.schema.json"), "{text}");
        assert!(!text.contains("good"), "{text}");
        // The source is named once.
        let bad = format!("chart directory {}", dir.path().join("bad").display());
        assert_eq!(text.matches(&bad).count(), 1, "{text}");
    }

    /// A chart whose name makes no kind: `serve --charts` has no --kind, so
    /// its problem names only the annotation.
    #[test]
    fn a_chart_named_no_kind_is_told_of_the_annotation() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "9lives/Chart.yaml",
            "apiVersion: v2\nname: 9lives\nversion: 0.1.0\n",
        );
        write(dir.path(), "9lives/values.yaml", "size: 1Gi\n");
        let text = load_charts(dir.path()).unwrap_err().to_string();
        assert!(
            text.contains("name it with the kubectl-cozy.io/kind annotation in Chart.yaml")
                && !text.contains("--kind"),
            "{text}"
        );
    }

    #[test]
    fn a_sub_directory_without_chart_yaml_is_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "good/Chart.yaml",
            "apiVersion: v2\nname: good\nversion: 0.1.0\n",
        );
        write(
            dir.path(),
            "good/values.yaml",
            "## @param size Volume size\nsize: 1Gi\n",
        );
        write(
            dir.path(),
            "typo/Chart.yml",
            "apiVersion: v2\nname: typo\nversion: 0.1.0\n",
        );
        write(dir.path(), ".git/HEAD", "ref: refs/heads/main\n");
        write(dir.path(), "README.md", "# charts\n");
        let loaded = load_charts(dir.path()).unwrap();
        assert_eq!(loaded.kinds.len(), 1);
        let skipped: Vec<&String> = loaded
            .warnings
            .iter()
            .filter(|w| w.contains("skipped"))
            .collect();
        assert_eq!(
            skipped,
            [&format!(
                "{}: not a chart (no Chart.yaml); skipped",
                dir.path().join("typo").display()
            )]
        );
    }

    #[test]
    fn a_directory_without_charts_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "README.md", "# no charts\n");
        assert!(matches!(
            load_charts(dir.path()),
            Err(LoadError::Empty { .. })
        ));
        assert!(matches!(
            load_charts(&dir.path().join("missing")),
            Err(LoadError::Read { .. })
        ));
    }

    /// `helm package postgres` in the charts directory puts
    /// `postgres-0.1.0.tgz` beside `postgres/`: the directory is served,
    /// and of two versions the newer, each skip a warning.
    #[test]
    fn one_chart_in_several_versions_is_served_from_the_newest() {
        let dir = tempfile::tempdir().unwrap();
        crate::kinds::chart::test_support::chart_tgz(
            &dir.path().join("postgres-0.1.0.tgz"),
            |_| {},
        );
        let chart_dir = |version: &str| {
            write(
                dir.path(),
                "postgres/Chart.yaml",
                &format!("apiVersion: v2\nname: postgres\nversion: {version}\n"),
            );
            write(dir.path(), "postgres/values.yaml", "size: 1Gi\n");
        };
        let served = |loaded: &Loaded| {
            assert_eq!(loaded.kinds.len(), 1, "{:?}", loaded.warnings);
            loaded.kinds[0].source.clone()
        };
        let skips = |loaded: &Loaded| -> Vec<String> {
            loaded
                .warnings
                .iter()
                .filter(|w| w.contains("skipped"))
                .cloned()
                .collect()
        };
        let archive = format!(
            "chart archive {}",
            dir.path().join("postgres-0.1.0.tgz").display()
        );
        let directory = format!("chart directory {}", dir.path().join("postgres").display());

        chart_dir("0.1.0");
        let loaded = load_charts(dir.path()).unwrap();
        assert_eq!(served(&loaded), directory);
        assert_eq!(
            skips(&loaded),
            [format!(
                "{archive}: chart postgres 0.1.0 skipped: {directory} serves version 0.1.0 \
                 (a directory over a package of the same version)"
            )]
        );

        chart_dir("0.2.0-rc.1");
        let loaded = load_charts(dir.path()).unwrap();
        assert_eq!(served(&loaded), directory);
        assert_eq!(
            skips(&loaded),
            [format!(
                "{archive}: chart postgres 0.1.0 skipped: {directory} serves version 0.2.0-rc.1 (the newest)"
            )]
        );

        chart_dir("0.0.9");
        let loaded = load_charts(dir.path()).unwrap();
        assert_eq!(served(&loaded), archive);
        assert_eq!(
            skips(&loaded),
            [format!(
                "{directory}: chart postgres 0.0.9 skipped: {archive} serves version 0.1.0 (the newest)"
            )]
        );
    }

    #[test]
    fn two_charts_with_one_name_collide_like_two_definitions() {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["a", "b"] {
            write(
                dir.path(),
                &format!("{sub}/Chart.yaml"),
                "apiVersion: v2\nname: cache\nversion: 0.1.0\n",
            );
            write(dir.path(), &format!("{sub}/values.yaml"), "size: 1\n");
        }
        let err = load_charts(dir.path()).unwrap_err().to_string();
        assert!(err.contains("caches") || err.contains("Cache"), "{err}");
    }
}
