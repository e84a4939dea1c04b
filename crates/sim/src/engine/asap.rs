//! ASAP's prepaging in the simulator (ASAP §4-5; the estimators' tables are in
//! `floe_policies::asap`). A switch is a warm launch. At its start the prepaging manager
//! fetches the app's target pages: anonymous targets in zram are decompressed by one
//! SCHED_IDLE thread per core in batches of 16 (CPU jobs beside the app's own), file
//! targets are read ahead extent by extent, metadata blocks first (flash requests ahead
//! of the launch's own faults). At its end the estimators learn from the switch's faults
//! and accesses; precision and recall are counted as §6.3 defines them.

use super::{Cont, Ctx, Ev, Sim};
use crate::cpu;
use crate::flash::{Op, MAX_REQUEST_BYTES};
use crate::pages::{Loc, F_SHADOW, F_YOUNG};
use floe_core::{Nanos, PrepageSetup};
use floe_policies::asap::{extents_of, profile, AnonTables, FileTables, ANON_BATCH, METADATA_STRIDE, PROFILE_SWITCHES};
use std::collections::{HashMap, VecDeque};

fn bit(v: &[u64], i: u32) -> bool {
    v[(i / 64) as usize] & (1 << (i % 64)) != 0
}

fn set(v: &mut [u64], i: u32) {
    v[(i / 64) as usize] |= 1 << (i % 64);
}

/// One switch in progress (indices are the app's page indices, anon then file).
struct Switch {
    absent_at_start: Vec<u64>,
    touched: Vec<u64>,
    prepaged: Vec<u64>,
    faults_anon: Vec<u32>,
    faults_file: Vec<u32>,
}

pub(super) struct AsapState {
    pub cfg: PrepageSetup,
    file: Vec<FileTables>,
    anon: Vec<AnonTables>,
    switch: Vec<Option<Switch>>,
    /// Anonymous targets still to be prepaged, per app.
    queue: Vec<VecDeque<u32>>,
    /// File pages being read ahead: page id -> when the read completes.
    inflight: HashMap<u32, Nanos>,
    /// Read-ahead requests not yet issued: (app, incarnation, first page, pages; 0 pages
    /// = a metadata block). They are asynchronous I/O: issued only when the flash has
    /// nothing else queued, so the switch's own (synchronous) faults go first.
    pending: VecDeque<(u16, u32, u32, u32)>,
    dispatching: bool,
    /// Per kind (0 anonymous, 1 file): pages prepaged; of them, used during their
    /// switch; pages the switch faulted or would have faulted (not resident when it
    /// began, touched during it).
    prepaged: [u64; 2],
    correct: [u64; 2],
    would_fault: [u64; 2],
}

impl AsapState {
    /// `apps`: (anonymous pages, file pages, launch file pages) per app. The offline
    /// candidate table of each app comes from profiling `PROFILE_SWITCHES` switches; the
    /// model's switch touches the same launch file pages every time.
    pub fn new(cfg: PrepageSetup, apps: &[(u32, u32, u32)]) -> AsapState {
        let file = apps
            .iter()
            .map(|&(_, _, lf)| {
                let one: Vec<u32> = (0..lf).collect();
                FileTables::new(profile(&vec![one; PROFILE_SWITCHES]))
            })
            .collect();
        AsapState {
            cfg,
            file,
            anon: vec![AnonTables::default(); apps.len()],
            switch: apps.iter().map(|_| None).collect(),
            queue: vec![VecDeque::new(); apps.len()],
            inflight: HashMap::new(),
            pending: VecDeque::new(),
            dispatching: false,
            prepaged: [0; 2],
            correct: [0; 2],
            would_fault: [0; 2],
        }
    }

    /// The kinds whose estimator runs.
    fn kinds(&self) -> impl Iterator<Item = usize> + '_ {
        [self.cfg.anon, self.cfg.file].into_iter().enumerate().filter(|x| x.1).map(|x| x.0)
    }

    /// §6.3: correctly prepaged pages over all prepaged pages, over the kinds prepaged.
    pub fn precision(&self) -> Option<f64> {
        let (c, p) = self.kinds().fold((0, 0), |acc, k| (acc.0 + self.correct[k], acc.1 + self.prepaged[k]));
        (p > 0).then(|| c as f64 / p as f64)
    }

    /// §6.3: correctly prepaged pages over the pages the switch would fault, over the
    /// kinds prepaged.
    pub fn recall(&self) -> Option<f64> {
        let (c, w) = self.kinds().fold((0, 0), |acc, k| (acc.0 + self.correct[k], acc.1 + self.would_fault[k]));
        (w > 0).then(|| c as f64 / w as f64)
    }
}

impl Sim {
    fn asap_mut(&mut self) -> &mut AsapState {
        self.asap.as_mut().expect("ASAP state")
    }

    /// A switch to `app` begins: snapshot what is absent, then start prepaging.
    pub(super) fn asap_switch_start(&mut self, app: u16) {
        let Some(st) = self.asap.as_ref() else { return };
        let cfg = st.cfg;
        let a = &self.apps[app as usize];
        let (base, anon, file, pop, life) = (a.base, a.anon, a.file, a.populated, a.life);
        let n = anon + file;
        let words = (n as usize).div_ceil(64);
        let mut absent = vec![0u64; words];
        for i in 0..n {
            if !self.pages.loc(base + i).resident() {
                set(&mut absent, i);
            }
        }
        let sw =
            Switch { absent_at_start: absent, touched: vec![0; words], prepaged: vec![0; words], faults_anon: vec![], faults_file: vec![] };
        self.asap_mut().switch[app as usize] = Some(sw);
        if cfg.anon {
            let targets: Vec<u32> = st_targets(self.asap.as_ref().unwrap(), app)
                .into_iter()
                .filter(|&i| i < pop && self.pages.loc(base + i) == Loc::Zram)
                .collect();
            let threads = (self.cpu.cores() as usize).min(targets.len().div_ceil(ANON_BATCH));
            self.asap_mut().queue[app as usize] = targets.into();
            for _ in 0..threads {
                self.asap_next_batch(app, life);
            }
        }
        if cfg.file {
            self.asap_read_ahead(app, life);
        }
    }

    /// One SCHED_IDLE prepaging thread takes the next batch of `app`'s anonymous
    /// targets, if any: a CPU job costing the batch's decompressions and faults.
    fn asap_next_batch(&mut self, app: u16, life: u32) {
        let q = &mut self.asap_mut().queue[app as usize];
        let k = q.len().min(ANON_BATCH);
        if k == 0 {
            return;
        }
        let batch: Vec<u32> = q.drain(..k).collect();
        let work = Nanos((self.decompress_ns + super::MINOR_FAULT_NS) * batch.len() as u64);
        self.c.cpu_prepage_ns += work.0;
        self.c.cpu_compress_ns += self.decompress_ns * batch.len() as u64;
        self.cpu.add(self.now, work, cpu::WEIGHT_IDLE, false, None, false, Cont::Prepage { app, life, batch });
    }

    /// A prepaging thread finished a batch: its pages still in zram become resident.
    pub(super) fn asap_batch_done(&mut self, app: u16, life: u32, batch: Vec<u32>) {
        if self.apps[app as usize].life != life {
            return;
        }
        let base = self.apps[app as usize].base;
        let mut ctx = Ctx { t: self.now, cpu: Nanos::ZERO, compress: Nanos::ZERO };
        for i in batch {
            let p = base + i;
            if self.pages.loc(p) != Loc::Zram {
                continue;
            }
            self.alloc(&mut ctx);
            if self.apps[app as usize].life != life {
                // Making room killed the app; its pages are freed.
                return;
            }
            self.zram_stored -= 1;
            self.pages.set_flag(p, F_SHADOW, false);
            self.lru_add(p, Loc::ActiveAnon);
            self.asap_note_prepaged(app, i);
        }
        self.c.cpu_prepage_ns += ctx.cpu.0;
        self.asap_next_batch(app, life);
    }

    fn asap_note_prepaged(&mut self, app: u16, i: u32) {
        let kind = (i >= self.apps[app as usize].anon) as usize;
        let st = self.asap_mut();
        st.prepaged[kind] += 1;
        if let Some(sw) = st.switch[app as usize].as_mut() {
            set(&mut sw.prepaged, i);
        }
    }

    /// File prepaging: metadata blocks first (one per 512 pages of each extent), then
    /// the extents' absent pages as sequential requests of up to 1 MiB.
    fn asap_read_ahead(&mut self, app: u16, life: u32) {
        let a = &self.apps[app as usize];
        let (base, anon) = (a.base, a.anon);
        let targets = self.asap.as_ref().unwrap().file[app as usize].targets.clone();
        let file = self.apps[app as usize].file;
        let absent: Vec<Vec<u32>> = targets
            .iter()
            .map(|&(s, l)| (s..(s + l).min(file)).filter(|&f| self.pages.loc(base + anon + f) == Loc::Absent).collect())
            .collect();
        // Metadata first, for the extents that need reading at all.
        let mut reqs = Vec::new();
        for (&(_, l), need) in targets.iter().zip(&absent) {
            if !need.is_empty() {
                reqs.extend((0..l.div_ceil(METADATA_STRIDE)).map(|_| (app, life, 0, 0)));
            }
        }
        let max_pages = (MAX_REQUEST_BYTES / 4096) as u32;
        for need in &absent {
            for run in extents_of(need, 1) {
                let mut start = run.0;
                while start < run.0 + run.1 {
                    let len = (run.0 + run.1 - start).min(max_pages);
                    reqs.push((app, life, start, len));
                    start += len;
                }
            }
        }
        let st = self.asap_mut();
        st.pending.extend(reqs);
        if !st.dispatching {
            st.dispatching = true;
            self.push(self.now, Ev::AsapDispatch);
        }
    }

    /// Issues the next read-ahead request once the flash has nothing else queued (the
    /// block layer serving synchronous reads before asynchronous read-ahead, as CFQ
    /// does); requests of apps that died meanwhile are dropped.
    pub(super) fn asap_dispatch(&mut self) {
        if self.flash.busy_until() > self.now {
            let at = self.flash.busy_until();
            self.push(at, Ev::AsapDispatch);
            return;
        }
        loop {
            let Some((app, life, start, len)) = self.asap_mut().pending.pop_front() else {
                self.asap_mut().dispatching = false;
                return;
            };
            if self.apps[app as usize].life != life {
                continue;
            }
            if len == 0 {
                let done = self.flash.submit(self.now, Op::Read, 4096);
                self.push(done, Ev::AsapDispatch);
                return;
            }
            let a = &self.apps[app as usize];
            let (base, anon) = (a.base, a.anon);
            // Pages a demand fault already brought in are left out of the request.
            if (start..start + len).all(|f| self.pages.loc(base + anon + f) != Loc::Absent) {
                continue;
            }
            let done = self.flash.submit(self.now, Op::Read, len as u64 * 4096);
            let st = self.asap_mut();
            for f in start..start + len {
                st.inflight.insert(base + anon + f, done);
            }
            self.push(done, Ev::AsapFileRead { app, life, start, len });
            self.push(done, Ev::AsapDispatch);
            return;
        }
    }

    /// Read-ahead of file pages `[start, start + len)` of `app` completed: those still
    /// absent enter the page cache.
    pub(super) fn asap_file_read(&mut self, app: u16, life: u32, start: u32, len: u32) {
        let a = &self.apps[app as usize];
        let (base, anon) = (a.base, a.anon);
        let mut ctx = Ctx { t: self.now, cpu: Nanos::ZERO, compress: Nanos::ZERO };
        for f in start..start + len {
            let p = base + anon + f;
            self.asap_mut().inflight.remove(&p);
            if self.apps[app as usize].life != life || self.pages.loc(p) != Loc::Absent {
                continue;
            }
            self.alloc(&mut ctx);
            // Into the page cache as any read puts it there, but not yet accessed.
            self.add_to_page_cache(app, p);
            self.pages.set_flag(p, F_YOUNG, false);
            self.asap_note_prepaged(app, anon + f);
        }
        self.c.cpu_prepage_ns += ctx.cpu.0;
    }

    /// A demand fault on a file page being read ahead waits for that read instead of
    /// issuing its own; returns when the page arrives, if it is in flight.
    pub(super) fn asap_inflight(&self, p: u32) -> Option<Nanos> {
        self.asap.as_ref().and_then(|s| s.inflight.get(&p).copied())
    }

    /// The page `p` of `app`, in flight, was claimed by a demand fault: the read-ahead
    /// brought it, so it counts as prepaged.
    pub(super) fn asap_claimed(&mut self, app: u16, p: u32) {
        let base = self.apps[app as usize].base;
        self.asap_mut().inflight.remove(&p);
        self.asap_note_prepaged(app, p - base);
    }

    /// The switch touches page index `i` of `app` (`resident`: before the touch).
    pub(super) fn asap_touch(&mut self, app: u16, i: u32, resident: bool) {
        let Some(st) = self.asap.as_mut() else { return };
        let anon = self.apps[app as usize].anon;
        if let Some(sw) = st.switch[app as usize].as_mut() {
            set(&mut sw.touched, i);
            if !resident {
                if i < anon {
                    sw.faults_anon.push(i);
                } else {
                    sw.faults_file.push(i - anon);
                }
            }
        }
    }

    /// The switch to `app` ended: count precision and recall, let the estimators learn,
    /// and stop the prepaging still queued.
    pub(super) fn asap_switch_end(&mut self, app: u16) {
        let Some(st) = self.asap.as_mut() else { return };
        let Some(sw) = st.switch[app as usize].take() else { return };
        let a = &self.apps[app as usize];
        let (anon, file) = (a.anon, a.file);
        for i in 0..anon + file {
            if bit(&sw.touched, i) {
                let kind = (i >= anon) as usize;
                st.would_fault[kind] += bit(&sw.absent_at_start, i) as u64;
                st.correct[kind] += bit(&sw.prepaged, i) as u64;
            }
        }
        st.queue[app as usize].clear();
        let touched = &sw.touched;
        st.anon[app as usize].after_switch(&sw.faults_anon, |i| i < anon && bit(touched, i));
        let unused: Vec<u32> = (0..file).filter(|&f| bit(&sw.prepaged, anon + f) && !bit(touched, anon + f)).collect();
        st.file[app as usize].after_switch(&sw.faults_file, &unused);
    }

    /// `app` died: its anonymous tables described a heap that is gone.
    pub(super) fn asap_forget(&mut self, app: u16) {
        if let Some(st) = self.asap.as_mut() {
            st.anon[app as usize] = AnonTables::default();
            st.switch[app as usize] = None;
            st.queue[app as usize].clear();
        }
    }
}

fn st_targets(st: &AsapState, app: u16) -> Vec<u32> {
    st.anon[app as usize].targets.keys().copied().collect()
}
