//! The flash device: one request queue served in order, each request costing the 4 KiB
//! access latency plus the rest of its bytes at sequential bandwidth. A request waits
//! for everything queued before it, so swap traffic delays launches and page faults.

use crate::config::FlashSpec;
use floe_core::Nanos;

/// Largest merged request (the block layer's usual max_sectors_kb is 512 KiB to 1 MiB;
/// SEAL merges swap I/O up to 1 MiB).
pub const MAX_REQUEST_BYTES: u64 = 1 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
}

#[derive(Clone, Debug)]
pub struct Flash {
    read_4k_ns: f64,
    write_4k_ns: f64,
    read_ns_per_byte: f64,
    write_ns_per_byte: f64,
    busy_until: Nanos,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Time the device spent serving requests.
    pub busy_ns: u64,
}

impl Flash {
    pub fn new(spec: &FlashSpec) -> Flash {
        let per_byte = |mib_s: f64| 1e9 / (mib_s * 1024.0 * 1024.0);
        Flash {
            read_4k_ns: spec.read_4k_us * 1e3,
            write_4k_ns: spec.write_4k_us * 1e3,
            read_ns_per_byte: per_byte(spec.seq_read_mib_s),
            write_ns_per_byte: per_byte(spec.seq_write_mib_s),
            busy_until: Nanos::ZERO,
            read_bytes: 0,
            write_bytes: 0,
            busy_ns: 0,
        }
    }

    /// Service time of one request of `bytes` (split at [`MAX_REQUEST_BYTES`]).
    pub fn service(&self, op: Op, bytes: u64) -> Nanos {
        let (lat, per) = match op {
            Op::Read => (self.read_4k_ns, self.read_ns_per_byte),
            Op::Write => (self.write_4k_ns, self.write_ns_per_byte),
        };
        let reqs = bytes.div_ceil(MAX_REQUEST_BYTES).max(1);
        let extra = bytes.saturating_sub(4096 * reqs) as f64;
        Nanos((lat * reqs as f64 + extra * per).round() as u64)
    }

    /// Queues a request at `now`; returns when it completes (the end of time, u64's
    /// largest, for a queue that would not drain before it).
    pub fn submit(&mut self, now: Nanos, op: Op, bytes: u64) -> Nanos {
        let s = self.service(op, bytes);
        let start = now.max(self.busy_until);
        self.busy_until = Nanos(start.0.saturating_add(s.0));
        self.busy_ns = self.busy_ns.saturating_add(s.0);
        match op {
            Op::Read => self.read_bytes += bytes,
            Op::Write => self.write_bytes += bytes,
        }
        self.busy_until
    }

    /// Device time spent serving requests up to `now` (work still queued excluded).
    pub fn served_ns(&self, now: Nanos) -> u64 {
        self.busy_ns.saturating_sub(self.busy_until.0.saturating_sub(now.0))
    }

    /// When the queue drains, given no new requests.
    pub fn busy_until(&self) -> Nanos {
        self.busy_until
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> FlashSpec {
        FlashSpec {
            kind: "test".into(),
            read_4k_us: 100.0,
            write_4k_us: 200.0,
            seq_read_mib_s: 1000.0,
            seq_write_mib_s: 100.0,
            swap_mib: None,
            page_cluster: None,
            swap_readahead: None,
        }
    }

    #[test]
    fn requests_queue_behind_each_other() {
        let mut f = Flash::new(&spec());
        let a = f.submit(Nanos(0), Op::Write, 4096);
        assert_eq!(a, Nanos::from_us(200));
        // A read issued at once waits for the write.
        let b = f.submit(Nanos(0), Op::Read, 4096);
        assert_eq!(b, Nanos::from_us(300));
        // A read issued after the queue drained does not wait.
        let c = f.submit(Nanos::from_ms(1), Op::Read, 4096);
        assert_eq!(c, Nanos::from_us(1100));
        assert_eq!(f.read_bytes, 8192);
    }

    #[test]
    fn large_requests_pay_bandwidth_and_split_at_1mib() {
        let f = Flash::new(&spec());
        let one = f.service(Op::Read, 1 << 20).0 as f64;
        // 100 us + (1 MiB - 4 KiB) at 1000 MiB/s ~ 1.096 ms.
        assert!((one - 1_096_000.0).abs() < 1_000.0, "{one}");
        let two = f.service(Op::Read, 2 << 20).0 as f64;
        assert!((two - 2.0 * one).abs() < 2_000.0);
    }

    /// A queue that would drain past the end of time ends there, not at a wrapped-around
    /// time.
    #[test]
    fn the_queue_does_not_wrap_time() {
        let mut f = Flash::new(&spec());
        assert_eq!(f.submit(Nanos(u64::MAX - 100), Op::Write, 4096), Nanos(u64::MAX));
        assert_eq!(f.submit(Nanos(0), Op::Read, 4096), Nanos(u64::MAX));
    }
}
