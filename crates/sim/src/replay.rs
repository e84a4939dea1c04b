//! Replays a standard cache trace on floe's page-cache model: libCacheSim's
//! oracleGeneral binary format or a CSV of (time, page id), each request one page.
//!
//! The `linux` model is the engine's own: the [`PageTable`]'s active and inactive file
//! lists, young and referenced bits, shadow entries and refault-distance activation,
//! and reclaim's scan, through the same steps ([`crate::lru`]). A replay has no apps and
//! no watermarks: the cache holds at most `cache_pages` pages, and a miss that finds it
//! full reclaims a batch first, as direct reclaim does (the kernel's SWAP_CLUSTER_MAX,
//! 32 pages, unless [`ReplayOptions::batch`] says otherwise). The model has no
//! readaround: a trace's ids need not be neighbours on disk. `lru` is plain LRU over
//! the same lists, evicting one page per miss, for checking against other simulators.
//!
//! Reading maps each object id to a dense page id in order of first appearance; the
//! replay then walks those ids with the page records prefetched a few requests ahead.

use crate::lru::{self, Tail};
use crate::pages::{Loc, PageTable, F_SHADOW, F_YOUNG};
use std::io::Read;
use std::path::Path;

/// Bytes of one oracleGeneral record: u32 clock time, u64 object id, u32 object size,
/// i64 next access (virtual time), little-endian and packed.
pub const ORACLE_GENERAL_RECORD: usize = 24;

/// A trace file's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TraceFormat {
    /// libCacheSim's oracleGeneral binary records ([`ORACLE_GENERAL_RECORD`]).
    OracleGeneral,
    /// Text lines `time,page id` (a decimal number, a decimal unsigned integer; blank
    /// lines, `#` lines and a header line are skipped).
    Csv,
}

impl TraceFormat {
    /// The format a file name implies: `.csv` and `.txt` are CSV, anything else
    /// oracleGeneral.
    pub fn of_path(path: &Path) -> TraceFormat {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("csv") || e.eq_ignore_ascii_case("txt") => TraceFormat::Csv,
            _ => TraceFormat::OracleGeneral,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::OracleGeneral => "oracleGeneral",
            TraceFormat::Csv => "csv",
        }
    }
}

/// Errors reading a trace; each names the file and where in it.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be read. `err` is not a `source`: the message carries it, and
    /// a source would be printed a second time where errors are shown with their chain
    /// (`floe: error:`), as floe-linux's errors do.
    #[error("{path}: {err}")]
    Io { path: String, err: std::io::Error },
    #[error("{path}: byte offset {offset}: {msg}")]
    Binary { path: String, offset: u64, msg: String },
    #[error("{path}:{line}: {msg}")]
    Text { path: String, line: u64, msg: String },
    #[error("{path}: more than {max} distinct objects", max = u32::MAX - 1)]
    TooManyObjects { path: String },
    #[error("{path}: no requests ({})", empty_why(*.skipped))]
    Empty { path: String, skipped: u64 },
}

/// Why a trace has no requests, for [`TraceError::Empty`].
fn empty_why(skipped: u64) -> String {
    if skipped > 0 {
        format!("its {skipped} records all have size 0")
    } else {
        "an empty trace".into()
    }
}

/// A trace read into dense page ids.
#[derive(Clone, Debug)]
pub struct Trace {
    pub format: TraceFormat,
    /// The requests' pages, numbered 0.. in order of first appearance.
    pub pages: Vec<u32>,
    /// Distinct objects (pages) in the trace.
    pub objects: u32,
    /// oracleGeneral records of size 0, skipped as libCacheSim's reader skips them.
    pub skipped: u64,
}

impl Trace {
    /// Reads `path` in `format`.
    pub fn read(path: &Path, format: TraceFormat) -> Result<Trace, TraceError> {
        let name = path.display().to_string();
        let file = std::fs::File::open(path).map_err(|err| TraceError::Io { path: name.clone(), err })?;
        let mut ids = IdMap::new();
        let mut pages = Vec::new();
        let mut skipped = 0;
        match format {
            TraceFormat::OracleGeneral => read_oracle_general(file, &name, &mut ids, &mut pages, &mut skipped)?,
            TraceFormat::Csv => read_csv(file, &name, &mut ids, &mut pages)?,
        }
        if ids.len() >= u32::MAX as usize {
            return Err(TraceError::TooManyObjects { path: name });
        }
        // A miss ratio of no requests is 0 / 0: say so rather than print one.
        if pages.is_empty() {
            return Err(TraceError::Empty { path: name, skipped });
        }
        Ok(Trace { format, pages, objects: ids.len() as u32, skipped })
    }

    /// A trace of the given object ids, in order, mapped as a reader maps them (its
    /// format is given as CSV, the text form of a list of ids).
    pub fn from_ids(ids: impl IntoIterator<Item = u64>) -> Trace {
        let mut map = IdMap::new();
        let pages = ids.into_iter().map(|id| map.get_or_insert(id)).collect();
        Trace { format: TraceFormat::Csv, pages, objects: map.len() as u32, skipped: 0 }
    }
}

/// Reads until `buf` is full or the file ends; returns the bytes read.
fn fill(file: &mut std::fs::File, buf: &mut [u8], path: &str) -> Result<usize, TraceError> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(TraceError::Io { path: path.into(), err }),
        }
    }
    Ok(n)
}

fn read_oracle_general(
    mut file: std::fs::File,
    path: &str,
    ids: &mut IdMap,
    pages: &mut Vec<u32>,
    skipped: &mut u64,
) -> Result<(), TraceError> {
    const REC: usize = ORACLE_GENERAL_RECORD;
    if let Ok(meta) = file.metadata() {
        pages.reserve((meta.len() / REC as u64) as usize);
    }
    let mut buf = vec![0u8; REC * 43_690];
    let mut offset = 0u64;
    let mut batch: Vec<u64> = Vec::with_capacity(buf.len() / REC);
    loop {
        let n = fill(&mut file, &mut buf, path)?;
        if offset == 0 && n >= 4 && buf[..4] == [0x28, 0xb5, 0x2f, 0xfd] {
            return Err(TraceError::Binary { path: path.into(), offset: 0, msg: "zstd-compressed; decompress it first (zstd -d)".into() });
        }
        batch.clear();
        for (i, rec) in buf[..n - n % REC].chunks_exact(REC).enumerate() {
            let size = u32::from_le_bytes(rec[12..16].try_into().expect("4 bytes"));
            let next = i64::from_le_bytes(rec[16..24].try_into().expect("8 bytes"));
            if next < -1 {
                return Err(TraceError::Binary {
                    path: path.into(),
                    offset: offset + (i * REC) as u64,
                    msg: format!("next access time {next} is negative (only -1 means never)"),
                });
            }
            if size == 0 {
                *skipped += 1;
                continue;
            }
            batch.push(u64::from_le_bytes(rec[4..12].try_into().expect("8 bytes")));
        }
        ids.map_all(&batch, pages);
        if n % REC != 0 {
            let at = offset + (n - n % REC) as u64;
            return Err(TraceError::Binary {
                path: path.into(),
                offset: at,
                msg: format!("truncated record: {} bytes left, a record is {REC}", n % REC),
            });
        }
        offset += n as u64;
        if n < buf.len() {
            return Ok(());
        }
    }
}

fn read_csv(mut file: std::fs::File, path: &str, ids: &mut IdMap, pages: &mut Vec<u32>) -> Result<(), TraceError> {
    let mut text = Vec::new();
    file.read_to_end(&mut text).map_err(|err| TraceError::Io { path: path.into(), err })?;
    let mut batch = Vec::with_capacity(1 << 16);
    let (mut seen_data, mut seen_header) = (false, false);
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) || line.first() == Some(&b'#') {
            continue;
        }
        let err = |msg: String| TraceError::Text { path: path.into(), line: i as u64 + 1, msg };
        let shown = || String::from_utf8_lossy(&line[..line.len().min(60)]).into_owned();
        let mut fields = line.split(|&b| b == b',');
        let (time, page) = (fields.next().unwrap_or_default(), fields.next());
        let parsed = page.and_then(|p| Some((parse_time(time)?, parse_u64(p)?)));
        match parsed {
            Some(((), page)) if fields.next().is_none() => {
                seen_data = true;
                batch.push(page);
                if batch.len() == batch.capacity() {
                    ids.map_all(&batch, pages);
                    batch.clear();
                }
            }
            // A first line whose time is not a number is a header.
            None if !seen_data && !seen_header && page.is_some() && parse_time(time).is_none() => seen_header = true,
            _ => return Err(err(format!("expected `time,page id` (a number, an unsigned integer), found `{}`", shown()))),
        }
    }
    ids.map_all(&batch, pages);
    Ok(())
}

/// A time: any decimal number, spaces around it allowed (the replay does not use it).
fn parse_time(s: &[u8]) -> Option<()> {
    let s = std::str::from_utf8(s.trim_ascii()).ok()?;
    (parse_u64(s.as_bytes()).is_some() || s.parse::<f64>().is_ok_and(f64::is_finite)).then_some(())
}

/// A decimal unsigned integer, spaces around it allowed.
fn parse_u64(s: &[u8]) -> Option<u64> {
    let s = s.trim_ascii();
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in s {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    Some(v)
}

/// Object id -> dense page id: open addressing with linear probing over a
/// power-of-two table of (id, page + 1) slots, page + 1 = 0 marking a free slot.
struct IdMap {
    slots: Vec<(u64, u32)>,
    len: usize,
    shift: u32,
}

impl IdMap {
    fn new() -> IdMap {
        IdMap { slots: vec![(0, 0); 1 << 16], len: 0, shift: 64 - 16 }
    }

    fn len(&self) -> usize {
        self.len
    }

    #[inline]
    fn home(&self, id: u64) -> usize {
        (id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    #[inline]
    fn get_or_insert(&mut self, id: u64) -> u32 {
        let mask = self.slots.len() - 1;
        let mut i = self.home(id);
        loop {
            let (k, v) = self.slots[i];
            if v == 0 {
                break;
            }
            if k == id {
                return v - 1;
            }
            i = (i + 1) & mask;
        }
        let page = self.len as u32;
        self.slots[i] = (id, page.wrapping_add(1));
        self.len += 1;
        if self.len * 2 > self.slots.len() {
            self.grow();
        }
        page
    }

    fn grow(&mut self) {
        let old = std::mem::replace(&mut self.slots, vec![(0, 0); 0]);
        self.slots = vec![(0, 0); old.len() * 2];
        self.shift -= 1;
        let mask = self.slots.len() - 1;
        for (k, v) in old.into_iter().filter(|s| s.1 != 0) {
            let mut i = self.home(k);
            while self.slots[i].1 != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = (k, v);
        }
    }

    /// Maps every id of `batch` in order, appending the pages; the slots of ids a few
    /// places ahead are prefetched.
    fn map_all(&mut self, batch: &[u64], out: &mut Vec<u32>) {
        const AHEAD: usize = 16;
        for (k, &id) in batch.iter().enumerate() {
            if let Some(&next) = batch.get(k + AHEAD) {
                prefetch(&self.slots[self.home(next)]);
            }
            out.push(self.get_or_insert(id));
        }
    }
}

#[inline]
fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch is a hint that never faults; the pointer comes from a reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(r as *const T as *const i8)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

/// The page-level policies a replay can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplayPolicy {
    /// The engine's page cache: active and inactive file lists, young and referenced
    /// bits, shadow entries with refault-distance activation, batched reclaim.
    Linux,
    /// Plain LRU: a hit moves the page to the head, a miss into a full cache evicts
    /// the tail.
    Lru,
}

impl ReplayPolicy {
    pub const ALL: [ReplayPolicy; 2] = [ReplayPolicy::Linux, ReplayPolicy::Lru];

    pub fn name(self) -> &'static str {
        match self {
            ReplayPolicy::Linux => "linux",
            ReplayPolicy::Lru => "lru",
        }
    }

    pub fn from_name(name: &str) -> Option<ReplayPolicy> {
        ReplayPolicy::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// How to replay.
#[derive(Clone, Copy, Debug)]
pub struct ReplayOptions {
    pub policy: ReplayPolicy,
    /// The most pages the cache holds (at least 1).
    pub cache_pages: u32,
    /// Pages the `linux` model reclaims when a miss finds the cache full (at least 1).
    pub batch: u32,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions { policy: ReplayPolicy::Linux, cache_pages: 1, batch: crate::engine::RECLAIM_BATCH }
    }
}

/// What a replay counted.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ReplayStats {
    pub requests: u64,
    pub misses: u64,
    pub miss_ratio: f64,
    /// Misses on pages that left a shadow entry (evicted before, not first accesses).
    pub refaults: u64,
    /// Refaults whose distance put them straight on the active list (the kernel's
    /// workingset_activate).
    pub activations: u64,
    /// Pages reclaim's scan moved to the active list for a second reference.
    pub promotions: u64,
    pub evictions: u64,
    /// Pages reclaim looked at.
    pub scanned: u64,
}

/// Replays `trace` under `opts` and returns what it counted.
pub fn replay(trace: &Trace, opts: &ReplayOptions) -> ReplayStats {
    let mut cache = PageCache::new(trace.objects, opts);
    cache.run(&trace.pages);
    let mut s = cache.stats;
    s.requests = trace.pages.len() as u64;
    s.miss_ratio = if s.requests == 0 { 0.0 } else { s.misses as f64 / s.requests as f64 };
    s
}

/// The page cache of a replay: one owner's file pages in a [`PageTable`].
struct PageCache {
    pages: PageTable,
    /// The nonresident age (evictions so far) that shadow entries record.
    age: u32,
    cache_pages: u64,
    batch: u32,
    policy: ReplayPolicy,
    stats: ReplayStats,
}

impl PageCache {
    fn new(objects: u32, opts: &ReplayOptions) -> PageCache {
        let (pages, _) = PageTable::new(&[(0, objects)]);
        PageCache {
            pages,
            age: 0,
            cache_pages: opts.cache_pages.max(1) as u64,
            batch: opts.batch.max(1),
            policy: opts.policy,
            stats: ReplayStats::default(),
        }
    }

    fn run(&mut self, trace: &[u32]) {
        const AHEAD: usize = 8;
        for &p in trace.iter().take(AHEAD) {
            self.pages.prefetch(p);
        }
        match self.policy {
            ReplayPolicy::Linux => {
                for (k, &p) in trace.iter().enumerate() {
                    if let Some(&q) = trace.get(k + AHEAD) {
                        self.pages.prefetch(q);
                    }
                    self.access_linux(p);
                }
            }
            ReplayPolicy::Lru => {
                for (k, &p) in trace.iter().enumerate() {
                    if let Some(&q) = trace.get(k + AHEAD) {
                        self.pages.prefetch(q);
                    }
                    self.access_lru(p);
                }
            }
        }
    }

    fn resident(&self) -> u64 {
        self.pages.total(Loc::InactiveFile) + self.pages.total(Loc::ActiveFile)
    }

    /// An access as the engine's touch of a file page: a resident page is marked young;
    /// a missing one is read in after room is made, onto the list its refault distance
    /// chooses.
    #[inline]
    fn access_linux(&mut self, p: u32) {
        if self.pages.loc(p).resident() {
            self.pages.set_flag(p, F_YOUNG, true);
            return;
        }
        self.stats.misses += 1;
        if self.resident() >= self.cache_pages {
            self.shrink(self.batch);
        }
        let refault = self.pages.has(p, F_SHADOW);
        let to = lru::fault_in(&mut self.pages, self.age, p, refault);
        self.pages.move_to(p, to);
        if refault {
            self.stats.refaults += 1;
            self.stats.activations += (to == Loc::ActiveFile) as u64;
        }
    }

    /// Reclaims up to `nr` pages from the file lists as the engine's shrink does when
    /// only file pages may go, within the same scan budget.
    fn shrink(&mut self, nr: u32) {
        let budget = (nr as u64 * 64).max(self.resident() * 2);
        let (mut got, mut scanned) = (0, 0u64);
        while got < nr && scanned < budget {
            let ratio = lru::inactive_ratio(self.resident()) as u32;
            let lru::Step { deactivated, tail, .. } = lru::scan_step(&mut self.pages, false, ratio, crate::engine::RECLAIM_BATCH);
            scanned += deactivated as u64;
            match tail {
                Tail::Empty => break,
                Tail::Kept { activated } => {
                    scanned += 1;
                    self.stats.promotions += activated as u64;
                }
                Tail::Cold(p) => {
                    scanned += 1;
                    self.pages.move_to(p, Loc::Absent);
                    lru::leave_shadow(&mut self.pages, &mut self.age, p);
                    got += 1;
                }
            }
        }
        self.stats.scanned += scanned;
        self.stats.evictions += got as u64;
    }

    /// Plain LRU on the inactive file list: its head is the most recently used page.
    #[inline]
    fn access_lru(&mut self, p: u32) {
        if self.pages.loc(p) == Loc::InactiveFile {
            self.pages.rotate(p);
            return;
        }
        self.stats.misses += 1;
        if self.pages.total(Loc::InactiveFile) >= self.cache_pages {
            if let Some(victim) = self.pages.tail(Loc::InactiveFile) {
                self.pages.move_to(victim, Loc::Absent);
                // Marks it evicted; plain LRU has no use for the age.
                self.pages.set_shadow(victim, 0);
                self.stats.evictions += 1;
            }
        }
        if self.pages.has(p, F_SHADOW) {
            self.stats.refaults += 1;
            self.pages.set_flag(p, F_SHADOW, false);
        }
        self.pages.move_to(p, Loc::InactiveFile);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use std::collections::{BTreeMap, HashMap};

    /// A Zipf-like trace: `n` requests over `objects` ids (drawn by inverse transform of
    /// the Zipf(`alpha`) distribution), the ids scattered over 64 bits.
    fn zipf_ids(n: usize, objects: u64, alpha: f64, seed: u64) -> Vec<u64> {
        let mut cdf: Vec<f64> = (1..=objects).map(|k| (k as f64).powf(-alpha)).collect();
        let mut sum = 0.0;
        for c in cdf.iter_mut() {
            sum += *c;
            *c = sum;
        }
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                let u = rng.gen::<f64>() * sum;
                let rank = cdf.partition_point(|&c| c < u) as u64;
                (rank + 1).wrapping_mul(0xD6E8_FEB8_6659_FD93)
            })
            .collect()
    }

    /// An LRU written independently of the page table: each id's last use in a map,
    /// and the ids in a tree ordered by last use.
    fn reference_lru_misses(ids: &[u64], cap: usize) -> u64 {
        let mut last: HashMap<u64, usize> = HashMap::new();
        let mut by_use: BTreeMap<usize, u64> = BTreeMap::new();
        let mut misses = 0;
        for (t, &id) in ids.iter().enumerate() {
            match last.insert(id, t) {
                Some(prev) => {
                    by_use.remove(&prev);
                }
                None => {
                    misses += 1;
                    if by_use.len() == cap {
                        let (_, old) = by_use.pop_first().expect("full");
                        last.remove(&old);
                    }
                }
            }
            by_use.insert(t, id);
        }
        misses
    }

    /// Writes `bytes` to `name` in `dir`, a directory the test owns and removes.
    fn temp_file(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    fn oracle_general(ids: &[u64], size: impl Fn(usize) -> u32) -> Vec<u8> {
        let mut out = Vec::with_capacity(ids.len() * ORACLE_GENERAL_RECORD);
        for (t, &id) in ids.iter().enumerate() {
            out.extend_from_slice(&(t as u32 / 100).to_le_bytes());
            out.extend_from_slice(&id.to_le_bytes());
            out.extend_from_slice(&size(t).to_le_bytes());
            out.extend_from_slice(&(-1i64).to_le_bytes());
        }
        out
    }

    /// Replay's `lru` misses exactly as often as an independent LRU, at several cache
    /// sizes, on a Zipf(0.9) trace read back from an oracleGeneral file.
    #[test]
    fn replay_lru_matches_a_reference_lru() {
        let dir = tempfile::tempdir().unwrap();
        let ids = zipf_ids(200_000, 20_000, 0.9, 7);
        let path = temp_file(&dir, "zipf.bin", &oracle_general(&ids, |_| 4096));
        let trace = Trace::read(&path, TraceFormat::OracleGeneral).unwrap();
        assert_eq!(trace.pages.len(), ids.len());
        for cap in [1, 100, 2_500, 19_999, 40_000] {
            let s = replay(&trace, &ReplayOptions { policy: ReplayPolicy::Lru, cache_pages: cap as u32, batch: 1 });
            assert_eq!(s.misses, reference_lru_misses(&ids, cap), "cache of {cap} pages");
            assert_eq!(s.requests, ids.len() as u64);
        }
    }

    /// The same requests as oracleGeneral records and as CSV lines read to the same
    /// pages; size-zero records are skipped, as libCacheSim's reader skips them.
    #[test]
    fn both_formats_read_the_same_trace() {
        let dir = tempfile::tempdir().unwrap();
        let ids = zipf_ids(5_000, 800, 0.9, 3);
        let bin = temp_file(&dir, "same.bin", &oracle_general(&ids, |t| if t % 10 == 9 { 0 } else { 1 }));
        let kept: Vec<u64> = ids.iter().enumerate().filter(|(t, _)| t % 10 != 9).map(|(_, &id)| id).collect();
        let mut csv = String::from("time,page\n");
        for (t, id) in kept.iter().enumerate() {
            csv.push_str(&format!("{t}, {id}\r\n"));
        }
        let csv = temp_file(&dir, "same.csv", csv.as_bytes());
        let a = Trace::read(&bin, TraceFormat::of_path(&bin)).unwrap();
        let b = Trace::read(&csv, TraceFormat::of_path(&csv)).unwrap();
        assert_eq!((a.format, b.format), (TraceFormat::OracleGeneral, TraceFormat::Csv));
        assert_eq!(a.skipped, 500);
        assert_eq!(a.pages, b.pages);
        let distinct = kept.iter().collect::<std::collections::HashSet<_>>().len();
        assert_eq!(a.objects as usize, distinct);
        assert_eq!(a.pages, Trace::from_ids(kept).pages);
    }

    /// A malformed or empty trace is an error naming the file and the byte offset or line.
    #[test]
    fn malformed_traces_name_file_and_place() {
        let dir = tempfile::tempdir().unwrap();
        // The error reading `bytes` written to `name` in `format`.
        let err = |name: &str, bytes: &[u8], format| Trace::read(&temp_file(&dir, name, bytes), format).unwrap_err().to_string();
        let (bin, csv) = (TraceFormat::OracleGeneral, TraceFormat::Csv);
        let mut bytes = oracle_general(&[1, 2, 3], |_| 1);
        bytes.extend_from_slice(&[0; 10]);
        let e = err("short.bin", &bytes, bin);
        assert!(e.contains("short.bin: byte offset 72: truncated record: 10 bytes left"), "{e}");

        let mut bytes = oracle_general(&[1, 2, 3], |_| 1);
        bytes[24 + 16..24 + 24].copy_from_slice(&(-7i64).to_le_bytes());
        let e = err("neg.bin", &bytes, bin);
        assert!(e.contains("neg.bin: byte offset 24: next access time -7"), "{e}");

        let e = err("z.bin", &[0x28, 0xb5, 0x2f, 0xfd, 0, 0], bin);
        assert!(e.contains("zstd"), "{e}");

        let e = err("bad.csv", b"time,page\n1,5\n\n# note\n2,x7\n", csv);
        assert!(e.ends_with("bad.csv:5: expected `time,page id` (a number, an unsigned integer), found `2,x7`"), "{e}");
        let e = err("three.csv", b"1,5,9\n", csv);
        assert!(e.contains("three.csv:1:"), "{e}");
        // A file that cannot be opened: the path and the system's reason, once (no
        // source to print again).
        let e = Trace::read(Path::new("/nonexistent/t.bin"), bin).unwrap_err();
        let reason = std::fs::File::open("/nonexistent/t.bin").unwrap_err();
        assert_eq!(e.to_string(), format!("/nonexistent/t.bin: {reason}"));
        assert!(std::error::Error::source(&e).is_none(), "{e:?}");

        // No requests: an empty file, a header alone, records all of size 0.
        let e = err("empty.bin", b"", bin);
        assert!(e.ends_with("empty.bin: no requests (an empty trace)"), "{e}");
        let e = err("header.csv", b"time,page\n\n", csv);
        assert!(e.ends_with("header.csv: no requests (an empty trace)"), "{e}");
        let e = err("zero.bin", &oracle_general(&[1, 2, 3], |_| 0), bin);
        assert!(e.ends_with("zero.bin: no requests (its 3 records all have size 0)"), "{e}");
    }

    /// A loop over 20 % more pages than the cache: every request misses under both
    /// policies. The two lists cannot keep part of it: a page is young once, when it
    /// comes in, and is not touched again before reclaim's scan reaches it the second
    /// time, so none is promoted, the active list stays empty and no refault is near
    /// enough to be activated.
    #[test]
    fn a_loop_larger_than_the_cache_misses_every_time() {
        let ids: Vec<u64> = (0..20).flat_map(|_| 0..1_200u64).collect();
        let trace = Trace::from_ids(ids);
        for policy in ReplayPolicy::ALL {
            let s = replay(&trace, &ReplayOptions { policy, cache_pages: 1_000, ..Default::default() });
            assert_eq!(s.misses, trace.pages.len() as u64, "{policy:?}");
            assert_eq!(s.refaults, s.misses - 1_200, "{policy:?}: every miss after the first pass");
        }
        let s = replay(&trace, &ReplayOptions { policy: ReplayPolicy::Linux, cache_pages: 1_000, ..Default::default() });
        assert_eq!((s.promotions, s.activations), (0, 0));
    }

    /// On a skewed trace the two lists work as the kernel's do: pages touched again
    /// while inactive are promoted, refaults near enough are activated, and the miss
    /// ratio is close to LRU's (between 0.8x and 1.25x).
    #[test]
    fn the_linux_model_promotes_and_activates_on_a_skewed_trace() {
        let trace = Trace::from_ids(zipf_ids(200_000, 20_000, 0.9, 5));
        let lru = replay(&trace, &ReplayOptions { policy: ReplayPolicy::Lru, cache_pages: 2_000, batch: 1 });
        let linux = replay(&trace, &ReplayOptions { policy: ReplayPolicy::Linux, cache_pages: 2_000, ..Default::default() });
        assert!(linux.promotions > 0 && linux.activations > 0, "{linux:?}");
        assert!(linux.refaults > linux.activations);
        assert_eq!(linux.misses, trace.objects as u64 + linux.refaults);
        assert!(linux.evictions >= linux.refaults && linux.evictions <= linux.misses);
        let r = linux.miss_ratio / lru.miss_ratio;
        assert!((0.8..1.25).contains(&r), "linux {} against lru {}", linux.miss_ratio, lru.miss_ratio);
    }

    /// The cache never holds more than its size, and a cache as large as the trace's
    /// objects misses only on first accesses.
    #[test]
    fn the_cache_size_bounds_what_stays() {
        let ids = zipf_ids(50_000, 5_000, 0.9, 11);
        let trace = Trace::from_ids(ids);
        for policy in ReplayPolicy::ALL {
            let mut cache = PageCache::new(trace.objects, &ReplayOptions { policy, cache_pages: 300, batch: 32 });
            for chunk in trace.pages.chunks(997) {
                cache.run(chunk);
                assert!(cache.resident() <= 300, "{policy:?}");
                cache.pages.check().unwrap();
            }
            let all = replay(&trace, &ReplayOptions { policy, cache_pages: trace.objects, batch: 32 });
            assert_eq!(all.misses, trace.objects as u64, "{policy:?}");
            assert_eq!(all.evictions, 0);
        }
    }
}
