//! Where the benchmark's processes run (`BENCH_CORES=split`): the control
//! plane (etcd, kube-apiserver, kube-controller-manager: every child
//! process of this one) on CPU 0, and this process (the benchmark's client,
//! the server under test and the pass-through proxy) on the other CPUs, as
//! on two machines: `serve` on a laptop and the cluster elsewhere. On a
//! 2-core machine it tells whether what the server adds to a write is the
//! CPU it takes from kube-apiserver on shared cores, or its own.
//!
//! Unset, nothing is pinned: everything shares every core, the worst case
//! and the default. Affinity is set once per thread through
//! `sched_setaffinity`; threads started later inherit their creator's.

use std::collections::BTreeSet;

/// How the cores were shared, as the benchmark reports it.
pub fn arrangement() -> String {
    if split_asked() {
        let rest = match cpus() {
            2 => "CPU 1".to_owned(),
            n => format!("CPUs 1–{}", n - 1),
        };
        format!("BENCH_CORES=split: the control plane on CPU 0, this process on {rest}")
    } else {
        format!(
            "shared: every process on all {} CPUs (BENCH_CORES=split pins the control plane to one)",
            cpus()
        )
    }
}

/// With `BENCH_CORES=split` and two CPUs or more, pins every child process's
/// threads to CPU 0 and this process's to the others; otherwise does nothing.
/// Call once the control plane is up, before starting runtimes.
pub fn split_if_asked() {
    if !split_asked() {
        return;
    }
    let cpus = cpus();
    assert!(cpus >= 2, "BENCH_CORES=split needs two CPUs or more");
    let children = children_of(std::process::id());
    assert!(
        !children.is_empty(),
        "BENCH_CORES=split: no control-plane process found"
    );
    // Twice: a thread a Go runtime starts during the first pass inherits
    // its creator's old mask.
    for _ in 0..2 {
        for &pid in &children {
            pin_threads(pid, &[0]);
        }
    }
    pin_threads(std::process::id(), &(1..cpus).collect::<Vec<_>>());
}

fn split_asked() -> bool {
    std::env::var("BENCH_CORES").is_ok_and(|v| v == "split")
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The pids whose parent is `parent`.
fn children_of(parent: u32) -> BTreeSet<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return BTreeSet::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                // `pid (comm) state ppid …`; comm may hold spaces and parens.
                .and_then(|stat| {
                    let after = &stat[stat.rfind(')')? + 1..];
                    after.split_whitespace().nth(1)?.parse::<u32>().ok()
                })
                == Some(parent)
        })
        .collect()
}

/// Sets the affinity of every thread of `pid` to `cpus`.
fn pin_threads(pid: u32, cpus: &[usize]) {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return; // exited
    };
    // SAFETY: cpu_set_t is plain bits; zeroed is the empty set.
    #[expect(unsafe_code, reason = "building a cpu_set_t for sched_setaffinity")]
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        // SAFETY: `cpu` is below the CPU count, within cpu_set_t's 1,024 bits.
        #[expect(unsafe_code, reason = "CPU_SET on a local cpu_set_t")]
        unsafe {
            libc::CPU_SET(cpu, &mut set);
        }
    }
    for tid in tasks.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<libc::pid_t>().ok()) {
        // SAFETY: sched_setaffinity reads `set` for its size; a thread that
        // exited in between fails with ESRCH, which is ignored.
        #[expect(unsafe_code, reason = "sched_setaffinity has no safe wrapper")]
        unsafe {
            libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
    }
}
