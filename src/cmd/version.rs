//! `kubectl cozy version`: the client version and, with a reachable cluster,
//! the server's, printed as kubectl prints them.

use clap::Args;
use serde::Serialize;

use crate::cli::{CliError, Ctx, ExitStatus};
use crate::output::{self, OutputFormat};

/// The `-o` formats `version` prints: kubectl's text (`table`, the default),
/// `json`, `yaml` and the template formats (`jsonpath=`, `custom-columns=`).
pub const OUTPUT_FORMATS: &[OutputFormat] = &[
    OutputFormat::Table,
    OutputFormat::Json,
    OutputFormat::Yaml,
    OutputFormat::JsonPath,
    OutputFormat::JsonPathFile,
    OutputFormat::JsonPathAsJson,
    OutputFormat::GoTemplate,
    OutputFormat::GoTemplateFile,
    OutputFormat::CustomColumns,
    OutputFormat::CustomColumnsFile,
];

/// Arguments of `kubectl cozy version`.
#[derive(Debug, Args)]
pub struct VersionArgs {
    /// Print only the client version; do not contact the cluster
    #[arg(long)]
    pub client: bool,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Versions {
    client_version: ClientVersion,
    #[serde(skip_serializing_if = "Option::is_none")]
    server_version: Option<k8s_openapi::apimachinery::pkg::version::Info>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ClientVersion {
    git_version: String,
    platform: String,
}

/// Runs `version`.
pub async fn run(args: VersionArgs, ctx: &Ctx) -> Result<ExitStatus, CliError> {
    let format = ctx.output_in(OutputFormat::Table, OUTPUT_FORMATS, "version")?;
    let mut versions = Versions {
        client_version: ClientVersion {
            git_version: format!("v{}", env!("CARGO_PKG_VERSION")),
            platform: crate::version::platform(),
        },
        server_version: None,
    };
    // Like kubectl, print what we know before reporting a cluster error.
    let server = if args.client {
        None
    } else {
        Some(server_version(ctx).await)
    };
    if let Some(Ok(info)) = &server {
        versions.server_version = Some(info.clone());
    }
    let mut out = ctx.stdout();
    let written = match format {
        OutputFormat::Json => output::write_json(&mut out, &versions),
        f if OutputFormat::TEMPLATES.contains(&f) => {
            ctx.write_template(&mut out, &versions, f)?;
            Ok(())
        }
        OutputFormat::Yaml => output::write_yaml(&mut out, &versions),
        _ => {
            let mut text = format!("Client Version: {}\n", versions.client_version.git_version);
            if let Some(info) = &versions.server_version {
                text.push_str(&format!("Server Version: {}\n", info.git_version));
            }
            std::io::Write::write_all(&mut out, text.as_bytes())
        }
    };
    written.map_err(|e| CliError::io("write version", e))?;
    match server {
        Some(Err(err)) => Err(err),
        _ => Ok(ExitStatus::Success),
    }
}

async fn server_version(
    ctx: &Ctx,
) -> Result<k8s_openapi::apimachinery::pkg::version::Info, CliError> {
    let config = ctx.kube_config().await?;
    let server = config.cluster_url.to_string();
    let client = ctx.client().await?;
    client
        .apiserver_version()
        .await
        .map_err(|source| CliError::first_request_failed(server, "GET /version", source))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_platform_is_named_as_go_names_it() {
        let platform = crate::version::platform();
        assert!(
            !platform.contains("x86_64") && !platform.contains("aarch64"),
            "{platform}"
        );
        #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
        assert_eq!(platform, "linux/amd64");
    }
}
