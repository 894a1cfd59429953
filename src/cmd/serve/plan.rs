//! What a session will be: the group/versions the kinds are in, the
//! external-name host (given or detected), the session [`Plan`], and
//! `--dry-run`, which prints the plan's objects and creates nothing.

use std::io::Write as _;

use super::args::{RouteArg, ServeArgs};
use crate::cli::{CliError, Ctx, ExitStatus};
use crate::kinds::Registry;
use crate::output::OutputFormat;
use crate::register::apiservice::GroupVersion;
use crate::register::lease;
use crate::register::plan::{Plan, Route};
use crate::register::{certs, route, session};

/// The group/versions the kinds are in.
pub(super) fn served(registry: &Registry) -> Vec<GroupVersion> {
    let mut out: Vec<GroupVersion> = registry
        .snapshot()
        .kinds()
        .iter()
        .map(|k| GroupVersion {
            group: k.resolved.definition.group.clone(),
            version: k.resolved.definition.version.clone(),
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The external-name host: `--host`, else detected from the kubeconfig.
pub(super) fn external_host(args: &ServeArgs, ctx: &Ctx) -> Result<String, CliError> {
    if let Some(host) = &args.host {
        return Ok(host.clone());
    }
    let selection = ctx.selection();
    let kubeconfig = crate::kubeconfig::read(&selection)?;
    let context_name = selection
        .context
        .clone()
        .or(kubeconfig.current_context.clone());
    let cluster_name = selection.cluster.clone().or_else(|| {
        kubeconfig
            .contexts
            .iter()
            .find(|c| Some(&c.name) == context_name.as_ref())
            .and_then(|c| c.context.as_ref())
            .map(|c| c.cluster.clone())
    });
    match route::detect(context_name.as_deref(), cluster_name.as_deref()) {
        Some(found) => {
            crate::stderr_line!(
                "Route: external-name to {} (detected: {}; --host to choose another)",
                found.host,
                found.because
            );
            Ok(found.host.to_owned())
        }
        None => Err(CliError::Usage(format!(
            "--route external-name needs --host: no local cluster (kind, minikube, k3d) recognised in context {}",
            context_name.as_deref().unwrap_or("(none)")
        ))),
    }
}

/// The plan of a session, with serve's `port` for the external-name route.
pub(super) fn plan(
    args: &ServeArgs,
    route: RouteArg,
    served: Vec<GroupVersion>,
    host: Option<String>,
    port: u16,
    ca_pem: String,
) -> Plan {
    let route = match route {
        RouteArg::ExternalName => Route::ExternalName {
            host: host.unwrap_or_default(),
            port,
        },
        _ => Route::Tunnel {
            image: args.agent_image.clone(),
            service_external_name: args.agent_service_external_name.clone(),
        },
    };
    Plan {
        id: session::generate_id(),
        namespace: args.session_namespace.clone(),
        holder: lease::holder(),
        started: k8s_openapi::jiff::Timestamp::now(),
        lease_duration: args.lease_duration,
        served,
        route,
        ca_pem,
    }
}

/// `--dry-run`: the objects, on stdout; nothing written anywhere.
pub(super) async fn dry_run(
    args: &ServeArgs,
    registry: &Registry,
    route: RouteArg,
    ctx: &Ctx,
) -> Result<ExitStatus, CliError> {
    if route == RouteArg::None {
        return Err(CliError::Usage(
            "--dry-run shows what a registered session creates; --route none creates nothing"
                .into(),
        ));
    }
    let served = served(registry);
    let host = match route {
        RouteArg::ExternalName => Some(external_host(args, ctx)?),
        _ => None,
    };
    let port = args.listen.map(|a| a.port()).unwrap_or(0);
    let mut plan = plan(args, route, served, host, port, String::new());
    let certs = certs::ephemeral(&session::object_name(&plan.id), &plan.namespace)
        .map_err(|e| CliError::other("make certificates", e))?;
    plan.ca_pem = certs.ca_pem;
    let format = ctx.output_or(OutputFormat::Yaml);
    let mut out = ctx.stdout();
    let header = format!(
        "# kubectl cozy serve --dry-run: what session {id} would create (nothing was created).\n\
         # The namespace only if it is missing; namespaced objects are owned by the Lease (ownerReferences are set at\n\
         # creation); caBundle here is a throw-away CA (a real session uses the one kept under the state directory).\n\
         # With --takeover, APIServices that exist are replaced and kept in ConfigMap {saved}.\n{port_note}",
        id = plan.id,
        saved = session::saved_api_services_name(&plan.id),
        port_note = if route == RouteArg::ExternalName && port == 0 {
            "# The APIService port is serve's port, chosen when it starts (--listen to fix it): shown as 0.\n"
        } else {
            ""
        }
    );
    // The header is YAML comments: only YAML has room for it.
    if format == OutputFormat::Yaml {
        out.write_all(header.as_bytes())
            .map_err(|e| CliError::io("write the manifests", e))?;
    }
    crate::output::write_objects(&mut out, format, &plan.manifests())
        .map_err(|e| CliError::io("write the manifests", e))?;
    Ok(ExitStatus::Success)
}
