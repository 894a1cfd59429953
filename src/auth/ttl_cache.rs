//! The bounded, time-limited answer cache that token reviews and access
//! reviews share: an answer is reused for a fixed TTL; when the map is full,
//! expired entries go first and everything goes if that is not enough.
//! Time is tokio's, so tests can advance it.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// Answers by key, each kept for `ttl`, at most `max` of them.
pub(crate) struct TtlCache<K, V> {
    entries: Mutex<HashMap<K, (Instant, V)>>,
    ttl: Duration,
    max: usize,
}

impl<K: Eq + Hash, V: Clone> TtlCache<K, V> {
    /// An empty cache.
    pub(crate) fn new(ttl: Duration, max: usize) -> TtlCache<K, V> {
        TtlCache {
            entries: Mutex::new(HashMap::new()),
            ttl,
            max,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<K, (Instant, V)>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The answer for `key`, if one younger than the TTL is kept.
    pub(crate) fn get(&self, key: &K) -> Option<V> {
        let now = Instant::now();
        self.lock()
            .get(key)
            .filter(|(at, _)| now.duration_since(*at) < self.ttl)
            .map(|(_, v)| v.clone())
    }

    /// Keeps `value` for `key` from now on.
    pub(crate) fn insert(&self, key: K, value: V) {
        let now = Instant::now();
        let mut entries = self.lock();
        if entries.len() >= self.max {
            entries.retain(|_, (at, _)| now.duration_since(*at) < self.ttl);
            if entries.len() >= self.max {
                entries.clear();
            }
        }
        entries.insert(key, (now, value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn answers_expire_and_a_full_cache_drops_expired_entries_first() {
        let cache = TtlCache::new(Duration::from_secs(10), 2);
        cache.insert("a", 1);
        tokio::time::advance(Duration::from_secs(9)).await;
        assert_eq!(cache.get(&"a"), Some(1));
        cache.insert("b", 2);
        tokio::time::advance(Duration::from_secs(2)).await;
        assert_eq!(cache.get(&"a"), None, "older than the TTL");
        cache.insert("c", 3); // full: the expired "a" makes room
        assert_eq!((cache.get(&"b"), cache.get(&"c")), (Some(2), Some(3)));
        cache.insert("d", 4); // full of live answers: cleared
        assert_eq!((cache.get(&"b"), cache.get(&"d")), (None, Some(4)));
    }
}
