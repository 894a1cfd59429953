//! Allocator settings for the long-running server (`serve`), so that its
//! resident memory follows what it holds rather than what it once handled.
//!
//! glibc's malloc, untuned, keeps up to eight arenas per core and raises its
//! mmap threshold after each large free; a server that builds one 10 MB list
//! response then holds on to that memory, fragmented across arenas, for good
//! (measured: 90 MiB after one list of 10,000 apps instead of 67 MiB). Two
//! arenas and a fixed 256 KiB mmap threshold (large buffers are mapped and
//! unmapped) keep RSS near the live set at no measurable cost in throughput.
//!
//! Even so, glibc hands freed small blocks back to the system only from the
//! top of the heap: after large transient work (10 rounds of creating and
//! deleting 1,000 apps) RSS stayed at three times its fresh size with no
//! objects left. [`spawn_trimmer`] checks every few seconds how much freed
//! memory malloc is holding and, once that grew past a threshold since its
//! last trim, returns it with `malloc_trim`, which also releases free pages
//! in the middle of the heap. The watch cache also calls [`trim`] right
//! after its list (each HelmRelease is parsed and only its compact JSON
//! kept), so the idle figure does not wait for the trimmer's next look.
//!
//! Which thread allocates in which arena matters too: glibc gives a thread
//! an arena at its first allocation, a new one while under the limit, else
//! the next existing one in turn, starting with the main thread's. The
//! runtime's two workers have made theirs before `serve` sets the limit
//! (they allocate as they start; checked with gdb on a running `serve`);
//! the watch cache's thread (`storage::cache_thread`), started right after,
//! is the first to reuse one and gets the main thread's. So what the cache
//! keeps stays out of the workers' arenas, where each request's short-lived
//! blocks would otherwise sit among it (`docs/performance.md`).
//!
//! Other allocators and platforms are left alone; `MALLOC_ARENA_MAX`,
//! `MALLOC_MMAP_THRESHOLD_` and `GLIBC_TUNABLES` set in the environment
//! take precedence over these settings.

use std::time::Duration;

/// How often the trimmer looks.
const TRIM_EVERY: Duration = Duration::from_secs(5);
/// Freed memory malloc may gather, beyond what it held right after the
/// last trim, before the trimmer returns it.
const TRIM_THRESHOLD: usize = 2 * 1024 * 1024;

/// Applies the settings; a no-op where the allocator is not glibc's. A
/// setting the environment makes (`MALLOC_ARENA_MAX`,
/// `MALLOC_MMAP_THRESHOLD_`, or any `GLIBC_TUNABLES`) is left as glibc read
/// it, so an operator can tune malloc without a rebuild.
pub fn tune_for_server() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        const ARENAS: libc::c_int = 2;
        const MMAP_THRESHOLD: libc::c_int = 256 * 1024;
        let tuned = std::env::var_os("GLIBC_TUNABLES").is_some();
        let set = |name: &str| tuned || std::env::var_os(name).is_some();
        for (param, value, env) in [
            (libc::M_ARENA_MAX, ARENAS, "MALLOC_ARENA_MAX"),
            (
                libc::M_MMAP_THRESHOLD,
                MMAP_THRESHOLD,
                "MALLOC_MMAP_THRESHOLD_",
            ),
        ] {
            if set(env) {
                continue;
            }
            // SAFETY: mallopt takes plain integers and only adjusts malloc's
            // parameters; glibc serialises it against allocation.
            #[expect(unsafe_code, reason = "glibc's mallopt has no safe wrapper")]
            unsafe {
                libc::mallopt(param, value);
            }
        }
    }
}

/// Freed memory malloc holds, in bytes (0 where unknown).
pub fn free_held() -> usize {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallinfo2 only reads malloc's statistics.
        #[expect(unsafe_code, reason = "glibc's mallinfo2 has no safe wrapper")]
        let info = unsafe { libc::mallinfo2() };
        info.fordblks
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        0
    }
}

/// Returns freed memory to the system; true if any was.
pub fn trim() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: malloc_trim takes a plain integer (the padding to keep)
        // and is serialised by glibc against allocation.
        #[expect(unsafe_code, reason = "glibc's malloc_trim has no safe wrapper")]
        let released = unsafe { libc::malloc_trim(0) };
        released == 1
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// Starts the task that returns freed memory once malloc holds
/// [`TRIM_THRESHOLD`] more of it than right after the last trim (a no-op
/// where the allocator is not glibc's). Must be called within a Tokio
/// runtime.
///
/// Relative, because malloc goes on counting as free what a trim returned
/// (the pages are given back, the chunks stay free in its lists) and what
/// no trim can return (free space sharing a page with a live block): an
/// absolute threshold either trims every few seconds for nothing, once that
/// count passes it, or never returns a few MiB freed below it.
pub fn spawn_trimmer() {
    if !cfg!(all(target_os = "linux", target_env = "gnu")) {
        return;
    }
    tokio::spawn(async {
        let mut tick = tokio::time::interval(TRIM_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut floor = 0;
        loop {
            tick.tick().await;
            let held = free_held();
            if held > floor + TRIM_THRESHOLD {
                // Walking the heap takes milliseconds: off the async workers.
                let _ = tokio::task::spawn_blocking(trim).await;
                floor = free_held();
            } else {
                floor = floor.min(held);
            }
        }
    });
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;

    #[test]
    fn trimming_returns_freed_memory() {
        tune_for_server();
        // Many small blocks (below the mmap threshold), then free all but
        // the last, so the heap cannot simply shrink from the top.
        let mut blocks: Vec<Vec<u8>> = (0..20_000).map(|i| vec![i as u8; 1024]).collect();
        let keep = blocks.pop();
        drop(blocks);
        let before = free_held();
        assert!(before > 10 * 1024 * 1024, "{before}");
        // malloc's statistics are the process's, moved by tests running
        // beside this one; whether the trim gave pages back is this test's.
        assert!(
            trim(),
            "20 MiB freed in the middle of the heap: some pages go back"
        );
        drop(keep);
    }
}
