//! `--print-rbac`: the RBAC objects an in-cluster server and its users need.

use super::args::ServeArgs;
use crate::cli::{CliError, Ctx, ExitStatus};
use crate::kinds::Registry;
use crate::output::OutputFormat;
use crate::register::manifests::{self, RbacOptions, RbacSubject};

/// `--print-rbac`: the objects for the loaded kinds on stdout, as YAML (or
/// `-o json|name`).
pub(super) fn print_rbac(
    args: &ServeArgs,
    registry: &Registry,
    ctx: &Ctx,
) -> Result<ExitStatus, CliError> {
    let snapshot = registry.snapshot();
    let options = RbacOptions {
        subject: RbacSubject::parse(&args.rbac_subject).map_err(CliError::Usage)?,
        impersonate: args.impersonate,
        ..RbacOptions::default()
    };
    let objects = manifests::rbac(snapshot.kinds().iter().map(|k| &k.resolved), &options);
    let objects = objects
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| CliError::other("render the RBAC objects", e))?;
    let format = ctx.output_or(OutputFormat::Yaml);
    crate::output::write_objects(&mut ctx.stdout(), format, &objects)
        .map_err(|e| CliError::io("write the RBAC objects", e))?;
    Ok(ExitStatus::Success)
}
