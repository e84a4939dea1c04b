//! The daemon's log: lines go through a bounded queue to a thread of their own that
//! writes them out (stdout: the journal under systemd), so that a reader that falls
//! behind (a stalled journald under memory pressure, a pipe nobody reads) never holds
//! the loop, and with it the killer. When the queue is full a line is dropped and
//! counted; the writer says how many went as soon as it can write again.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Lines the queue holds before it drops new ones: minutes of a busy daemon's log (a
/// line comes with an action or a refusal), in 8 KiB of slots allocated at start.
pub const LOG_QUEUE: usize = 256;

/// How long a stopping daemon waits for its last lines to be written: a reader that
/// is stuck does not keep it from exiting.
pub const LOG_DRAIN: Duration = Duration::from_secs(2);

/// Where the daemon's lines go, from any of its threads. Cheap to clone.
#[derive(Clone)]
pub struct Log {
    tx: SyncSender<String>,
    dropped: Arc<AtomicU64>,
    start: Instant,
}

impl Log {
    /// Queues `msg`, stamped with the seconds since `start`; never waits.
    pub fn line(&self, msg: &str) {
        let text = format!("{:>10.3} {msg}\n", self.start.elapsed().as_secs_f64());
        // Full, or the writer gone: the line is counted, never waited for.
        if self.tx.try_send(text).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The log's writer thread, and the [`Log`] that feeds it. Dropping it closes the
/// queue and waits up to [`LOG_DRAIN`] for the lines queued to be written.
pub struct Logger {
    log: Option<Log>,
    ended: Option<Receiver<()>>,
}

impl Logger {
    /// Starts the writer on `sink`; lines are stamped with the seconds since `start`.
    pub fn start(mut sink: Box<dyn Write + Send>, start: Instant) -> std::io::Result<Logger> {
        let (tx, rx) = mpsc::sync_channel::<String>(LOG_QUEUE);
        let dropped = Arc::new(AtomicU64::new(0));
        let (ended_tx, ended) = mpsc::channel::<()>();
        let counted = dropped.clone();
        // A small stack, as the control threads': the writer formats one line at a time.
        std::thread::Builder::new().name("floe-log".into()).stack_size(128 << 10).spawn(move || {
            let _ended = ended_tx;
            for text in rx {
                let _ = sink.write_all(text.as_bytes());
                let lost = counted.swap(0, Ordering::Relaxed);
                if lost > 0 {
                    let note = format!(
                        "{:>10.3} log: {lost} line(s) dropped: the log's reader fell behind (the daemon does not wait for it)\n",
                        start.elapsed().as_secs_f64()
                    );
                    let _ = sink.write_all(note.as_bytes());
                }
                let _ = sink.flush();
            }
        })?;
        Ok(Logger { log: Some(Log { tx, dropped, start }), ended: Some(ended) })
    }

    /// The handle that writes to this log.
    pub fn log(&self) -> &Log {
        self.log.as_ref().expect("the log is open until dropped")
    }
}

impl Drop for Logger {
    fn drop(&mut self) {
        // The writer ends once every sender is gone (a thread holding a clone keeps it
        // open; the wait below is bounded either way).
        self.log = None;
        if let Some(ended) = self.ended.take() {
            let _ = ended.recv_timeout(LOG_DRAIN);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Condvar, Mutex};

    /// Whether the gate is open, and what went through it.
    type Gate = Mutex<(bool, Vec<u8>)>;

    /// A sink that takes nothing until its gate opens, then keeps what it is given.
    #[derive(Clone, Default)]
    struct Gated(Arc<(Gate, Condvar)>);

    impl Gated {
        fn open(&self) {
            self.0 .0.lock().unwrap().0 = true;
            self.0 .1.notify_all();
        }
        fn text(&self) -> String {
            String::from_utf8(self.0 .0.lock().unwrap().1.clone()).unwrap()
        }
    }

    impl Write for Gated {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let (lock, cv) = &*self.0;
            let mut g = lock.lock().unwrap();
            while !g.0 {
                g = cv.wait(g).unwrap();
            }
            g.1.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A reader that stops reading does not hold the writer of lines: every line
    /// returns at once, the ones the queue cannot hold are dropped, and once the
    /// reader reads again the log says how many went; none is lost uncounted.
    #[test]
    fn a_stalled_reader_never_holds_the_daemon_and_drops_are_counted() {
        let sink = Gated::default();
        let logger = Logger::start(Box::new(sink.clone()), Instant::now()).unwrap();
        let log = logger.log().clone();
        const N: usize = 5 * LOG_QUEUE;
        let (done_tx, done) = mpsc::channel();
        std::thread::spawn(move || {
            for i in 0..N {
                log.line(&format!("line {i}"));
            }
            let _ = done_tx.send(());
        });
        // Would wait forever if a line waited for the sink.
        done.recv_timeout(Duration::from_secs(60)).expect("logging returns while the reader is stalled");
        sink.open();
        drop(logger);
        let text = sink.text();
        let written = text.lines().filter(|l| l.contains(" line ")).count();
        let dropped: usize = text
            .lines()
            .filter_map(|l| l.split_once(" log: ").and_then(|(_, r)| r.split(' ').next()).map(|n| n.parse::<usize>().unwrap()))
            .sum();
        assert!(
            text.lines().next().is_some_and(|l| l.ends_with(" line 0")),
            "the first line is written first: {}",
            &text[..text.len().min(200)]
        );
        assert!(written <= LOG_QUEUE + 1, "at most the queue and the line in hand: {written}");
        assert!(dropped > 0, "the drops are reported");
        assert_eq!(written + dropped, N, "every line is written or counted as dropped");
    }

    /// Dropping the logger writes what is queued before it returns.
    #[test]
    fn lines_queued_at_the_end_are_written() {
        let sink = Gated::default();
        sink.open();
        let logger = Logger::start(Box::new(sink.clone()), Instant::now()).unwrap();
        for i in 0..10 {
            logger.log().line(&format!("stopping {i}"));
        }
        drop(logger);
        let text = sink.text();
        assert_eq!(text.lines().count(), 10, "{text}");
        let stamped = |l: &str| l.trim_start().split_once(' ').is_some_and(|(t, _)| t.parse::<f64>().is_ok());
        assert!(text.lines().all(stamped), "each line starts with its time: {text}");
        assert!(text.ends_with("stopping 9\n"), "{text}");
    }
}
