//! A rarely ready future that costs next to nothing to poll while pending.
//!
//! A task that `select!`s over a busy source and a rarely ready one (a
//! watch stream over its events and the end of its kind) polls the rare
//! one each time the busy one wakes the task. Polling a pending
//! `tokio::sync::watch` or `Notify` future takes the lock the channel's
//! waiters share (every open watch's); [`Woken`] polls its future only
//! after that future woke the task, and otherwise costs an atomic swap and
//! a waker registration of its own.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use futures::task::AtomicWaker;

/// `F`, polled only when it asked to be.
pub struct Woken<F> {
    inner: Pin<Box<F>>,
    flag: Arc<Flag>,
    /// `flag` as the waker `inner` is polled with (made once).
    waker: Waker,
}

/// Whether the inner future woke, and the task to wake then.
#[derive(Default)]
struct Flag {
    woken: AtomicBool,
    task: AtomicWaker,
}

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.task.wake();
    }
}

impl<F: Future> Woken<F> {
    /// `inner`, to be polled at once the first time.
    pub fn new(inner: F) -> Woken<F> {
        let flag = Arc::new(Flag {
            woken: AtomicBool::new(true),
            task: AtomicWaker::new(),
        });
        Woken {
            inner: Box::pin(inner),
            waker: Waker::from(flag.clone()),
            flag,
        }
    }
}

impl<F: Future> Future for Woken<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        this.flag.task.register(cx.waker());
        if !this.flag.woken.swap(false, Ordering::AcqRel) {
            return Poll::Pending;
        }
        this.inner
            .as_mut()
            .poll(&mut Context::from_waker(&this.waker))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// `F`, counting its polls.
    struct Counted<F> {
        polls: Arc<AtomicUsize>,
        inner: Pin<Box<F>>,
    }

    impl<F: Future> Future for Counted<F> {
        type Output = F::Output;
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
            self.polls.fetch_add(1, Ordering::Relaxed);
            self.inner.as_mut().poll(cx)
        }
    }

    #[tokio::test]
    async fn polls_the_inner_future_only_after_it_woke_the_task() {
        let (tx, rx) = tokio::sync::watch::channel(false);
        let polls = Arc::new(AtomicUsize::new(0));
        let mut rx = rx;
        let mut woken = Woken::new(Counted {
            polls: polls.clone(),
            inner: Box::pin(async move { rx.changed().await }),
        });
        let waker = futures::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        for _ in 0..10 {
            assert!(Pin::new(&mut woken).poll(&mut cx).is_pending());
        }
        assert_eq!(polls.load(Ordering::Relaxed), 1, "polled once, at first");
        tx.send_replace(true);
        assert!(Pin::new(&mut woken).poll(&mut cx).is_ready());
        assert_eq!(polls.load(Ordering::Relaxed), 2);
    }
}
