//! The open-file limit of the long-running server (`serve`): every client
//! connection and every watch holds a descriptor, and the usual soft limit
//! of 1,024 lets a server hold fewer than a thousand clients (past it,
//! `accept` fails and new clients wait in the kernel's queue, never served).
//! The soft limit is raised to the hard one at start, as Go's runtime does
//! for kube-apiserver. Other platforms are left alone.

/// Raises the soft `RLIMIT_NOFILE` to the hard limit; returns the limits
/// before and after when it changed anything (nothing when the hard limit
/// is unlimited: Linux refuses that for open files).
pub fn raise_to_hard_limit() -> Option<(u64, u64)> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
        let limit = getrlimit(Resource::Nofile);
        let (current, maximum) = (limit.current?, limit.maximum?);
        if current >= maximum {
            return None;
        }
        let raised = Rlimit {
            current: Some(maximum),
            maximum: Some(maximum),
        };
        setrlimit(Resource::Nofile, raised).ok()?;
        Some((current, maximum))
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        None
    }
}
