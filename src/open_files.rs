//! The open-file limit of the long-running server (`serve`): every client
//! connection and every watch holds a descriptor, and the usual soft limit
//! of 1,024 lets a server hold fewer than a thousand clients (past it,
//! `accept` fails and new clients wait in the kernel's queue, never served).
//! The soft limit is raised to the hard one at start, as Go's runtime does
//! for kube-apiserver. Other platforms are left alone.

/// Raises the soft `RLIMIT_NOFILE` to the hard limit; returns the limits
/// before and after when it changed anything.
pub fn raise_to_hard_limit() -> Option<(u64, u64)> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        #[expect(unsafe_code, reason = "getrlimit has no safe wrapper in std")]
        // SAFETY: getrlimit writes into the struct we own.
        let got = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
        if got != 0 || limit.rlim_cur >= limit.rlim_max {
            return None;
        }
        let before = limit.rlim_cur;
        limit.rlim_cur = limit.rlim_max;
        #[expect(unsafe_code, reason = "setrlimit has no safe wrapper in std")]
        // SAFETY: setrlimit reads the struct we own.
        let set = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) };
        (set == 0).then_some((before, limit.rlim_max))
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        None
    }
}
