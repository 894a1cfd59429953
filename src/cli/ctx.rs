//! The resolved invocation context handed to every subcommand: global flags,
//! output settings, and lazy access to the cluster (commands that work on local
//! files never touch a kubeconfig).

use std::io::Write;

use serde::Serialize;
use tokio::sync::OnceCell;

use super::{CliError, GlobalArgs};
use crate::kubeconfig::{self, Selection};
use crate::output::{self, OutputFormat};

/// What every subcommand gets: flags, output settings and the cluster.
pub struct Ctx {
    global: GlobalArgs,
    config: OnceCell<kube::Config>,
}

impl Ctx {
    /// Builds the context from the parsed global flags.
    pub fn new(global: GlobalArgs) -> Self {
        Ctx {
            global,
            config: OnceCell::new(),
        }
    }

    /// The global flags as given.
    pub fn global(&self) -> &GlobalArgs {
        &self.global
    }

    /// The requested output format, or `default` when `-o` was not given.
    pub fn output_or(&self, default: OutputFormat) -> OutputFormat {
        self.global.output.as_ref().map_or(default, |o| o.format)
    }

    /// The template of `-o jsonpath=TEMPLATE`, the spec of `-o
    /// custom-columns=SPEC` or the text of `-o custom-columns-file=FILE`
    /// (empty without one).
    pub fn template(&self) -> &str {
        self.global
            .output
            .as_ref()
            .and_then(|o| o.template.as_deref())
            .unwrap_or_default()
    }

    /// Prints `value` by the template format `-o` chose (one of
    /// [`OutputFormat::TEMPLATES`]): what rendered before an error too, as
    /// kubectl prints it, then the error.
    pub fn write_template<T: Serialize + ?Sized>(
        &self,
        out: &mut impl Write,
        value: &T,
        format: OutputFormat,
    ) -> Result<(), CliError> {
        let mut text = String::new();
        let rendered = output::render_template(
            value,
            format,
            self.template(),
            self.global.allow_missing_template_keys.0,
            &mut text,
        );
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| CliError::io(format!("print -o {}", format.name()), e))?;
        rendered.map_err(|e| CliError::other(format!("print -o {}", format.name()), e))
    }

    /// The requested output format, or `default` when `-o` was not given; a
    /// usage error when `command` does not print that format (`accepted`,
    /// the command's `OUTPUT_FORMATS`, which completion offers too).
    pub fn output_in(
        &self,
        default: OutputFormat,
        accepted: &[OutputFormat],
        command: &str,
    ) -> Result<OutputFormat, CliError> {
        let format = self.output_or(default);
        if accepted.contains(&format) {
            return Ok(format);
        }
        Err(CliError::Usage(format!(
            "-o {}: {command} prints {}",
            format.name(),
            crate::output::describe_formats(accepted)
        )))
    }

    /// Whether stdout may be colored.
    pub fn color(&self) -> bool {
        self.global.stdout_color()
    }

    /// Standard output, for commands to write their results to.
    pub fn stdout(&self) -> impl Write {
        std::io::stdout().lock()
    }

    /// The kubeconfig selection the global flags describe.
    pub fn selection(&self) -> Selection {
        Selection {
            kubeconfig: self.global.kubeconfig.clone(),
            context: self.global.context.clone(),
            cluster: self.global.cluster.clone(),
            user: self.global.user.clone(),
            namespace: self.global.namespace.clone(),
            request_timeout: self.global.request_timeout,
        }
    }

    /// The client configuration of the selected kubeconfig context, loaded once.
    pub async fn kube_config(&self) -> Result<&kube::Config, CliError> {
        self.config
            .get_or_try_init(|| async { kubeconfig::load(&self.selection()).await })
            .await
            .map_err(CliError::from)
    }

    /// The name of the selected context: `--context`, else the kubeconfig's
    /// current one (read again: for an error's hint).
    pub fn context_name(&self) -> Option<String> {
        self.global
            .context
            .clone()
            .or_else(|| kubeconfig::current_context(&self.selection()))
    }

    /// The API server URL of the selected context, once a command loaded it.
    pub fn server_url(&self) -> Option<String> {
        self.config.get().map(|c| c.cluster_url.to_string())
    }

    /// A client for the selected cluster.
    pub async fn client(&self) -> Result<kube::Client, CliError> {
        let config = self.kube_config().await?.clone();
        crate::kube_client::client(config)
            .map_err(|e| CliError::other("build the Kubernetes client", e))
    }

    /// The namespace commands act in: `-n`, else the context's namespace.
    pub async fn namespace(&self) -> Result<String, CliError> {
        if let Some(ns) = &self.global.namespace {
            return Ok(ns.clone());
        }
        Ok(self.kube_config().await?.default_namespace.clone())
    }
}
