//! Whether a session's `serve` process, when it ran on this machine, is
//! gone. A session's Lease records where its process runs
//! (`kubectl-cozy.io/process`: the kernel's boot id, the PID namespace, the
//! pid, the process's start time and its user id); a `serve` started again right after
//! the first was killed finds the Lease still valid for up to its TTL, but
//! when that record names this kernel and this PID namespace, `/proc` says
//! for certain whether the process lives — a pid missing, or reused by a
//! process started at another time, is gone — and the session can be
//! reaped at once instead of refused. Only a process of this user is judged:
//! `/proc` mounted with `hidepid` hides other users' processes, which would
//! look gone. Anything else (another machine, container or user, no
//! `/proc`, an older record) leaves the Lease to judge.

use std::path::Path;

/// This process as a session records it: `BOOT_ID PIDNS PID STARTTIME
/// UID`, or `None` where `/proc` does not tell (not Linux).
pub fn this_process() -> Option<String> {
    let boot = boot_id()?;
    let namespace = pid_namespace()?;
    let pid = std::process::id();
    let started = start_time(pid)?;
    let uid = user_id()?;
    Some(format!("{boot} {namespace} {pid} {started} {uid}"))
}

/// The pid of the process `recorded` (by [`this_process`]) names when it
/// ran here and is gone; `None` when it lives, or when this machine cannot
/// tell (another kernel, PID namespace or user, an unreadable record).
pub fn gone(recorded: &str) -> Option<u32> {
    let mut parts = recorded.split_whitespace();
    let (boot, namespace, pid, started, uid) = (
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
    );
    let pid: u32 = pid.parse().ok()?;
    if boot != boot_id()? || namespace != pid_namespace()? || uid != user_id()?.to_string() {
        return None;
    }
    match start_time(pid) {
        // The pid is free, or another process has it now.
        None if !Path::new(&format!("/proc/{pid}")).exists() => Some(pid),
        Some(now) if now.to_string() != started => Some(pid),
        _ => None,
    }
}

/// The running kernel's boot id.
fn boot_id() -> Option<String> {
    let text = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(text.trim().to_owned()).filter(|id| !id.is_empty())
}

/// This process's PID namespace (`pid:[4026531836]`).
fn pid_namespace() -> Option<String> {
    let link = std::fs::read_link("/proc/self/ns/pid").ok()?;
    Some(link.to_string_lossy().into_owned())
}

/// This process's user id (the owner of `/proc/self`).
fn user_id() -> Option<u32> {
    use std::os::unix::fs::MetadataExt as _;
    Some(std::fs::metadata("/proc/self").ok()?.uid())
}

/// When process `pid` started, in clock ticks after boot (`/proc/PID/stat`'s
/// 22nd field).
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (2nd field) is in parentheses and may hold spaces:
    // the fields after it start at the 3rd.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(22 - 3)?.parse().ok()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn this_process_lives_and_a_dead_one_is_gone() {
        let me = this_process().expect("this process on Linux");
        assert_eq!(gone(&me), None, "{me}");
        // A child that exited: its pid is gone (or taken by another
        // process, started later).
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let started = start_time(pid);
        child.wait().unwrap();
        let mut parts: Vec<String> = me.split(' ').map(str::to_owned).collect();
        parts[2] = pid.to_string();
        parts[3] = started.map_or("1".to_owned(), |s| s.to_string());
        assert_eq!(gone(&parts.join(" ")), Some(pid));
        // This process under another start time: the pid was reused.
        let mut reused = me.split(' ').map(str::to_owned).collect::<Vec<_>>();
        reused[3] = "1".to_owned();
        assert_eq!(gone(&reused.join(" ")), Some(std::process::id()));
        // Another kernel, PID namespace or user, or an unreadable record:
        // cannot tell.
        let mut elsewhere = me.split(' ').map(str::to_owned).collect::<Vec<_>>();
        elsewhere[0] = "00000000-0000-0000-0000-000000000000".to_owned();
        assert_eq!(gone(&elsewhere.join(" ")), None);
        let mut other_namespace = me.split(' ').map(str::to_owned).collect::<Vec<_>>();
        other_namespace[1] = "pid:[1]".to_owned();
        other_namespace[2] = pid.to_string();
        assert_eq!(gone(&other_namespace.join(" ")), None);
        let mut other_user = parts.clone();
        other_user[4] = (user_id().unwrap() + 1).to_string();
        assert_eq!(gone(&other_user.join(" ")), None);
        assert_eq!(gone("nonsense"), None);
    }

    #[test]
    fn a_command_name_with_spaces_and_parentheses_is_read_past() {
        let me = std::process::id();
        let stat = std::fs::read_to_string(format!("/proc/{me}/stat")).unwrap();
        let started = start_time(me).unwrap();
        assert!(stat.contains(&format!(" {started} ")), "{stat}");
    }
}
