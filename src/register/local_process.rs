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
/// ran here and is gone (a zombie, exited but not yet reaped by its parent,
/// is gone); `None` when it lives, or when this machine cannot tell
/// (another kernel, PID namespace or user, an unreadable record).
pub fn gone(recorded: &str) -> Option<u32> {
    match look(recorded)? {
        (pid, None) => Some(pid),
        (pid, Some(state)) => matches!(state, 'Z' | 'X').then_some(pid),
    }
}

/// The pid of the process `recorded` names when it runs here and is
/// stopped (SIGSTOP, a debugger, Ctrl-Z): alive, but renewing nothing.
pub fn stopped(recorded: &str) -> Option<u32> {
    match look(recorded)? {
        (pid, Some(state)) => matches!(state, 'T' | 't').then_some(pid),
        (_, None) => None,
    }
}

/// Whether process `pid` exited and waits to be reaped by its parent (a
/// zombie): it still answers signals, but runs nothing.
pub fn exited(pid: u32) -> bool {
    stat(pid).is_some_and(|(state, _)| matches!(state, 'Z' | 'X'))
}

/// The recorded process's pid and, while it is the same process, its state
/// (`/proc/PID/stat`'s 3rd field); `None` inside when it is gone, `None`
/// when this machine cannot tell.
fn look(recorded: &str) -> Option<(u32, Option<char>)> {
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
    match stat(pid) {
        // The pid is free, or another process has it now.
        None if !Path::new(&format!("/proc/{pid}")).exists() => Some((pid, None)),
        Some((_, now)) if now.to_string() != started => Some((pid, None)),
        Some((state, _)) => Some((pid, Some(state))),
        None => None,
    }
}

/// Process `pid` (of this user, here) as [`this_process`] records a
/// process, for tests that record another one.
#[cfg(test)]
pub(crate) fn recorded(pid: u32) -> Option<String> {
    let (_, started) = stat(pid)?;
    Some(format!(
        "{} {} {pid} {started} {}",
        boot_id()?,
        pid_namespace()?,
        user_id()?
    ))
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
    stat(pid).map(|(_, started)| started)
}

/// Process `pid`'s state (`R`, `S`, `T`, `Z`, …, the 3rd field of
/// `/proc/PID/stat`) and start time.
fn stat(pid: u32) -> Option<(char, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (2nd field) is in parentheses and may hold spaces:
    // the fields after it start at the 3rd.
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = fields.next()?.chars().next()?;
    let started = fields.nth(22 - 4)?.parse().ok()?;
    Some((state, started))
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

    /// A child that exited but was not waited for (a zombie) is gone; one
    /// stopped by SIGSTOP is stopped, not gone.
    #[test]
    fn a_zombie_is_gone_and_a_stopped_process_stopped() {
        let me = this_process().expect("this process on Linux");
        let record = |pid: u32| {
            let mut parts: Vec<String> = me.split(' ').map(str::to_owned).collect();
            parts[2] = pid.to_string();
            parts[3] = start_time(pid).unwrap().to_string();
            parts.join(" ")
        };
        let mut sleeper = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = sleeper.id();
        let recorded = record(pid);
        assert_eq!((gone(&recorded), stopped(&recorded)), (None, None));
        let signal = |name: &str| {
            let status = std::process::Command::new("kill")
                .args([name, &pid.to_string()])
                .status()
                .unwrap();
            assert!(status.success());
        };
        signal("-STOP");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while stopped(&recorded).is_none() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!((gone(&recorded), stopped(&recorded)), (None, Some(pid)));
        signal("-KILL");
        while gone(&recorded).is_none() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        // Not waited for yet: a zombie, gone all the same.
        assert_eq!(stat(pid).map(|(state, _)| state), Some('Z'));
        assert_eq!(gone(&recorded), Some(pid));
        sleeper.wait().unwrap();
    }

    #[test]
    fn a_command_name_with_spaces_and_parentheses_is_read_past() {
        let me = std::process::id();
        let stat = std::fs::read_to_string(format!("/proc/{me}/stat")).unwrap();
        let started = start_time(me).unwrap();
        assert!(stat.contains(&format!(" {started} ")), "{stat}");
    }
}
