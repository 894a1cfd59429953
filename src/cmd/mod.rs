//! One module per subcommand. Each exposes its clap arguments and an async
//! `run(args, &Ctx) -> Result<ExitStatus, CliError>`. Commands that print in
//! only some `-o` formats declare them (`OUTPUT_FORMATS`), checked by the
//! command ([`crate::cli::Ctx::output_in`]) and offered by completion
//! ([`output_formats`]).

pub mod completion;
pub mod doctor;
pub mod install;
pub mod kinds;
pub mod serve;
pub mod session_guard;
pub mod tunnel_agent;
pub mod version;

use crate::output::OutputFormat;

/// The `-o` formats of the commands that declare them, by path (subcommand
/// names below the root).
const OUTPUT_FORMATS: &[(&[&str], &[OutputFormat])] = &[
    (&["serve"], serve::OUTPUT_FORMATS),
    (&["install"], install::OUTPUT_FORMATS),
    (&["doctor"], doctor::OUTPUT_FORMATS),
    (&["kinds", "list"], kinds::list::OUTPUT_FORMATS),
    (&["kinds", "scaffold"], kinds::scaffold::OUTPUT_FORMATS),
    (&["version"], version::OUTPUT_FORMATS),
];

/// The `-o` formats the command at `path` (e.g. `["kinds", "scaffold"]`)
/// prints, or `None` for one that declares none (the root, and commands that
/// print no objects).
pub fn output_formats(path: &[&str]) -> Option<&'static [OutputFormat]> {
    OUTPUT_FORMATS
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, formats)| *formats)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command the table names exists, so a renamed command cannot
    /// lose its list silently.
    #[test]
    fn declared_output_formats_name_real_commands() {
        let mut root = crate::cli::command_named("kubectl cozy");
        root.build();
        for (path, formats) in OUTPUT_FORMATS {
            let mut cmd = &root;
            for name in *path {
                cmd = cmd
                    .find_subcommand(name)
                    .unwrap_or_else(|| panic!("no command {path:?}"));
            }
            assert!(!formats.is_empty(), "{path:?}");
        }
        assert_eq!(
            output_formats(&["kinds", "scaffold"]),
            Some(kinds::scaffold::OUTPUT_FORMATS)
        );
        assert_eq!(output_formats(&[]), None);
    }
}
