//! `--print-rbac`: the RBAC objects an in-cluster server and its users need.

use super::args::ServeArgs;
use crate::cli::{CliError, Ctx, ExitStatus};
use crate::kinds::Registry;
use crate::register::manifests::{self, RbacOptions, RbacSubject};

/// `--print-rbac`: the objects for the loaded kinds, as YAML on stdout.
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
    let text =
        manifests::to_yaml(&objects).map_err(|e| CliError::io("render the RBAC objects", e))?;
    let mut out = ctx.stdout();
    std::io::Write::write_all(&mut out, text.as_bytes())
        .map_err(|e| CliError::io("write the RBAC objects", e))?;
    Ok(ExitStatus::Success)
}
