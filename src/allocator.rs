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
//! memory malloc is holding and, past a threshold, returns it with
//! `malloc_trim`, which also releases free pages in the middle of the heap.
//! The watch cache also calls [`trim`] right after its list (every page of
//! HelmReleases is parsed whole and only each object's compact JSON kept), so
//! the idle figure does not wait for the trimmer's next look.
//! Other allocators and platforms are left alone.

use std::time::Duration;

/// How often the trimmer looks.
const TRIM_EVERY: Duration = Duration::from_secs(5);
/// Freed memory malloc may keep before the trimmer returns it.
const TRIM_THRESHOLD: usize = 8 * 1024 * 1024;

/// Applies the settings; a no-op where the allocator is not glibc's.
pub fn tune_for_server() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        const ARENAS: libc::c_int = 2;
        const MMAP_THRESHOLD: libc::c_int = 256 * 1024;
        // SAFETY: mallopt takes plain integers and only adjusts malloc's
        // parameters; glibc serialises it against allocation.
        #[expect(unsafe_code, reason = "glibc's mallopt has no safe wrapper")]
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, ARENAS);
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
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

/// Starts the task that returns freed memory once more than
/// [`TRIM_THRESHOLD`] of it is held (a no-op where the allocator is not
/// glibc's). Must be called within a Tokio runtime.
pub fn spawn_trimmer() {
    if !cfg!(all(target_os = "linux", target_env = "gnu")) {
        return;
    }
    tokio::spawn(async {
        let mut tick = tokio::time::interval(TRIM_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if free_held() > TRIM_THRESHOLD {
                // Walking the heap takes milliseconds: off the async workers.
                let _ = tokio::task::spawn_blocking(trim).await;
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
        assert!(before > TRIM_THRESHOLD, "{before}");
        trim();
        let after = free_held();
        assert!(after <= before, "{before} -> {after}");
        drop(keep);
    }
}
