//! The state database's own thread. The loop hands it what changed (the session, the
//! policy's state, the prepaging tables) and goes on: a save that is slow (a flash
//! write under pressure) or stalled (the database locked by another connection, for
//! SQLite's 5 s busy timeout) never delays a sample or a kill. After each save the
//! thread unmaps the code pages the save mapped (SQLite's write path, about 1.5 MiB
//! with the kernel's fault-around; [`MappedPages`]), so they are not kept locked beside
//! the loop's; the next save maps them again, on this thread.

use super::log::Log;
use super::MappedPages;
use crate::state::Store;
use std::collections::BTreeMap;
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long a stopping daemon waits for its last save: above SQLite's busy timeout
/// (5 s), so a save that waited on another connection's lock still ends.
pub const SAVE_ON_EXIT: Duration = Duration::from_secs(10);

/// What the loop and the saver share.
#[derive(Default)]
struct Todo {
    /// What to write next, by key: the latest text handed over for each (one handed
    /// over earlier and not yet written is replaced, so a stalled save holds one text
    /// per key, not a queue).
    pending: BTreeMap<String, String>,
    /// Keys whose last save failed, for the loop: it hands them over again at its next
    /// save.
    failed: Vec<String>,
    /// Set by [`Saver::finish`]: write what is pending, then end.
    stop: bool,
}

struct Shared {
    todo: Mutex<Todo>,
    wake: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Todo> {
        self.todo.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The saver thread and what the loop hands it.
pub(super) struct Saver {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    /// Disconnected when the thread ends (its sender is dropped): waited on, with a
    /// bound, when the daemon stops.
    ended: Option<mpsc::Receiver<()>>,
}

impl Saver {
    /// Starts the thread that owns `store`; it logs to `log`, as the daemon does.
    pub fn start(mut store: Store, log: Log) -> std::io::Result<Saver> {
        let shared = Arc::new(Shared { todo: Mutex::new(Todo::default()), wake: Condvar::new() });
        let (ended_tx, ended) = mpsc::channel::<()>();
        let s = shared.clone();
        let thread = std::thread::Builder::new().name("floe-saver".into()).spawn(move || {
            let _ended = ended_tx;
            loop {
                let (batch, stop) = {
                    let mut t = s.lock();
                    while t.pending.is_empty() && !t.stop {
                        t = s.wake.wait(t).unwrap_or_else(PoisonError::into_inner);
                    }
                    (std::mem::take(&mut t.pending), t.stop)
                };
                if !batch.is_empty() {
                    let mapped = MappedPages::now();
                    let r = store.save_all(batch.iter().map(|(k, v)| (k.as_str(), v.as_str())));
                    if let Some(m) = mapped {
                        m.release_new();
                    }
                    if let Err(e) = r {
                        log.line(&format!("state: cannot save: {e}"));
                        s.lock().failed.extend(batch.into_keys());
                    }
                }
                if stop && s.lock().pending.is_empty() {
                    return;
                }
            }
        })?;
        Ok(Saver { shared, thread: Some(thread), ended: Some(ended) })
    }

    /// Hands `items` (key, text) to the thread, to be written in one transaction;
    /// returns at once.
    pub fn hand(&self, items: Vec<(String, String)>) {
        let mut t = self.shared.lock();
        t.pending.extend(items);
        drop(t);
        self.shared.wake.notify_one();
    }

    /// The keys whose save failed since the last call.
    pub fn failed(&self) -> Vec<String> {
        std::mem::take(&mut self.shared.lock().failed)
    }

    /// Writes what is pending and ends the thread, waiting up to `bound`. Returns
    /// whether it ended in time (if not, the thread is left to finish on its own).
    pub fn finish(&mut self, bound: Duration) -> bool {
        let Some(ended) = self.ended.take() else { return true };
        self.shared.lock().stop = true;
        self.shared.wake.notify_one();
        match ended.recv_timeout(bound) {
            Err(mpsc::RecvTimeoutError::Disconnected) | Ok(()) => {
                if let Some(t) = self.thread.take() {
                    let _ = t.join();
                }
                true
            }
            Err(mpsc::RecvTimeoutError::Timeout) => false,
        }
    }
}

impl Drop for Saver {
    fn drop(&mut self) {
        self.finish(SAVE_ON_EXIT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// What is handed over is written, the latest text per key, and the last of it
    /// before `finish` returns; a save that fails is reported for the next one.
    #[test]
    fn handed_saves_are_written_and_failures_reported() {
        let dir = crate::scratch_dir("saver");
        let path = dir.join("s.db");
        let logger = super::super::log::Logger::start(Box::new(std::io::sink()), Instant::now()).unwrap();
        let mut saver = Saver::start(Store::open(&path).unwrap(), logger.log().clone()).unwrap();
        saver.hand(vec![("a".into(), "1".into()), ("b".into(), "x".into())]);
        saver.hand(vec![("a".into(), "2".into())]);
        assert!(saver.finish(SAVE_ON_EXIT));
        let s = Store::open(&path).unwrap();
        assert_eq!((s.load("a").unwrap().as_deref(), s.load("b").unwrap().as_deref()), (Some("2"), Some("x")));
        // Another connection holds the write lock: the save waits SQLite's busy
        // timeout, fails, and says which keys.
        let saver = Saver::start(Store::open(&path).unwrap(), logger.log().clone()).unwrap();
        let other = rusqlite::Connection::open(&path).unwrap();
        other.execute_batch("BEGIN EXCLUSIVE").unwrap();
        let handed = Instant::now();
        saver.hand(vec![("a".into(), "3".into())]);
        assert!(handed.elapsed() < Duration::from_millis(100), "handing over does not wait for the save");
        let deadline = Instant::now() + Duration::from_secs(15);
        let mut failed = Vec::new();
        while failed.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
            failed = saver.failed();
        }
        assert_eq!(failed, ["a"]);
        other.execute_batch("ROLLBACK").unwrap();
        drop(saver);
        assert_eq!(Store::open(&path).unwrap().load("a").unwrap().as_deref(), Some("2"));
        let _ = std::fs::remove_dir_all(dir);
    }
}
