//! A local TCP echo server standing in for a pod's container (see `node.rs`):
//! it sends back every byte it reads, counts the connections it accepted, and
//! [`Echo::stop`] closes the listener and every open connection at once, as a
//! container's sockets go when the container dies.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::JoinSet;

/// A running echo server, stopped when dropped.
pub struct Echo {
    /// Where it listens (127.0.0.1, a free port).
    pub addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    server: tokio::task::JoinHandle<()>,
}

impl Echo {
    /// Starts an echo server on 127.0.0.1 in the current runtime.
    pub async fn start() -> std::io::Result<Echo> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        let server = tokio::spawn(async move {
            // Dropping this set (when the server task is aborted) aborts every
            // connection task, which closes its socket.
            let mut connections = JoinSet::new();
            loop {
                tokio::select! {
                    accept = listener.accept() => {
                        let Ok((stream, _)) = accept else { continue };
                        count.fetch_add(1, Ordering::SeqCst);
                        connections.spawn(echo(stream));
                    }
                    Some(_) = connections.join_next(), if !connections.is_empty() => {}
                }
            }
        });
        Ok(Echo {
            addr,
            accepted,
            server,
        })
    }

    /// How many connections it has accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    /// Closes the listener and every open connection.
    pub fn stop(&self) {
        self.server.abort();
    }
}

impl Drop for Echo {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn echo(mut stream: tokio::net::TcpStream) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if stream.write_all(&buf[..n]).await.is_err() {
                    return;
                }
            }
        }
    }
}
