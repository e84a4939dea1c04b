//! Paging apps out ahead of the kernel's LRU: Ice+'s frozen apps first, background apps
//! below a policy's swap threshold or (foreground last) the low watermark, and the
//! bounded MADV_PAGEOUT / MADV_WILLNEED that `Reclaim` and `Prepage` become.
use super::*;
use crate::cgroup::AppGroup;
use crate::sys::{anon_ranges, without, Pidfd};
use crate::{read, Result};
use floe_core::{AppId, AppState, Pages, ReclaimOrder, SwapTier};
use std::path::Path;
use std::sync::mpsc::Sender;

/// An app whose page-out freed nothing is not tried again for this long, even where
/// free memory recovers in between (locked memory stays locked).
const PAGEOUT_RETRY: std::time::Duration = std::time::Duration::from_secs(10);

/// At most this much is paged out in one sample: 64 MiB, about 50 ms of compression
/// into zram on this project's machine (docs/PERFORMANCE.md), so the loop, and the killer
/// in it, comes round again soon even while a gigabyte-sized app goes to swap.
pub(super) const PAGEOUT_PAGES_PER_SAMPLE: u64 = 64 * 256;

impl Daemon {
    /// Whether the guard lets floe page app `i` out; a refusal is counted and logged.
    fn may_page_out(&mut self, i: usize) -> bool {
        match self.guard_app(AppId(i as u16), "pageout") {
            Ok(()) => true,
            Err(why) => {
                self.c.refused += 1;
                self.log(&format!("refused pageout of {}: {why}", self.apps[i].rule.name));
                false
            }
        }
    }

    /// Pages out at most `limit` pages of app `i`'s `ranges` and reads its memory again.
    /// Returns what was advised and how many pages left memory: what counts is not what
    /// was advised, as the kernel skips what it cannot take (shared pages, no room in
    /// swap) without an error, but the pages gone to swap or gone from memory (its
    /// anonymous memory, with `anon_only`), whichever is more, as an app still growing
    /// meanwhile hides some of the second.
    fn page_out(&mut self, i: usize, ranges: RangesOf, limit: u64, anon_only: bool) -> (Result<u64>, u64) {
        let resident = |a: &App| if anon_only { a.rss_anon } else { a.rss };
        let (before, swap_before) = (resident(&self.apps[i]), self.apps[i].swap);
        let advised = advise(&self.apps[i].group, ranges, limit, false, None).map(|(n, _)| n);
        let x = &mut self.apps[i];
        (x.rss, x.rss_anon, x.swap) = memory_of(&x.pids());
        let freed = before.saturating_sub(resident(x)).max(x.swap.saturating_sub(swap_before)) / 4096;
        (advised, freed)
    }

    /// Ice+'s freeze-aware eviction under pressure (§4.3.1, "moves them out of LRU lists
    /// quickly", app by app): when free memory (or the budget's) is below the low
    /// watermark, the frozen app frozen longest that has not been paged out since it was
    /// frozen is paged out: its anonymous memory to swap, its private file pages dropped
    /// (MADV_PAGEOUT), before the kernel's LRU reaches anyone else. A large app goes over
    /// several samples, [`PAGEOUT_PAGES_PER_SAMPLE`] at a time, whatever free memory does
    /// meanwhile; it is done when a sample finds less than that left, or frees nothing
    /// (what is left is shared).
    pub(super) fn frozen_first_pageout(&mut self) {
        if self.setup.reclaim != ReclaimOrder::FrozenFirst {
            return;
        }
        let going = self.frozen_pageout_of.take().filter(|&i| self.apps[i].state == AppState::Frozen && !self.apps[i].paged_out);
        let i = match going {
            Some(i) => i,
            None if self.meminfo.free >= self.meminfo.wmark_low => return,
            None => match (0..self.apps.len())
                .filter(|&i| self.apps[i].state == AppState::Frozen && !self.apps[i].paged_out)
                .min_by_key(|&i| self.apps[i].frozen_since)
            {
                Some(i) => i,
                None => return,
            },
        };
        let name = self.apps[i].rule.name.clone();
        if !self.may_page_out(i) {
            self.apps[i].paged_out = true;
            return;
        }
        if self.cfg.dry_run {
            self.apps[i].paged_out = true;
            self.log(&format!("dry-run: would page out {name} (frozen first)"));
            return;
        }
        let (advised, freed) = self.page_out(i, app_ranges, PAGEOUT_PAGES_PER_SAMPLE, false);
        let free = self.meminfo.free.0 / 256;
        match advised {
            Ok(n) => {
                let done = n < PAGEOUT_PAGES_PER_SAMPLE || freed == 0;
                self.apps[i].paged_out = done;
                if done {
                    self.c.frozen_pageouts += 1;
                } else {
                    self.frozen_pageout_of = Some(i);
                }
                let more = if done { "" } else { "; more at the next sample" };
                let low = self.meminfo.wmark_low.0 / 256;
                self.log(&format!("pageout {name} (frozen first, free {free} MiB, the low watermark {low} MiB): {n} pages advised{more}"));
            }
            Err(e) => {
                self.apps[i].paged_out = true;
                self.log(&format!("pageout {name} failed: {e}"));
            }
        }
    }

    /// Background apps paged out first, the daemon's stand-in for a kswapd the policy
    /// changes; the kernel's watermarks and LRU are the machine's, so floe does it itself
    /// before the kernel reaches anyone's pages, as Ice+'s frozen-first eviction does:
    /// - a swap threshold of the policy's own (`Setup::swap_threshold`, Selective's Table
    ///   3), which the simulator makes kswapd's low watermark, reclaiming to 6/5 of it:
    ///   below it, swappable background apps' resident anonymous memory goes to swap;
    ///   kill-targets (unswappable) are left to the killer, file pages to the kernel;
    /// - foreground-last eviction (`ReclaimOrder::FgLast`, Acclaim): below the low
    ///   watermark, background apps' anonymous and mapped file pages, up to the high one.
    ///
    /// Each sample while free memory (or the budget's) is below, the least recently used
    /// app first, until what was advised (MADV_PAGEOUT) covers the way up; at most
    /// [`PAGEOUT_PAGES_PER_SAMPLE`] a sample, the rest owed to the next ones. Never the
    /// foreground app.
    pub(super) fn background_pageout(&mut self) {
        let (low, high, ranges, swappable_only, mark): (Pages, Pages, RangesOf, bool, &str) =
            match (self.setup.swap_threshold, self.setup.reclaim) {
                (Some(t), _) => (t, Pages(t.0 * 6 / 5), anon_ranges, true, "the swap threshold"),
                (None, ReclaimOrder::FgLast) => (self.meminfo.wmark_low, self.meminfo.wmark_high, app_ranges, false, "the low watermark"),
                _ => return,
            };
        let free = self.meminfo.free;
        if free < low {
            self.pageout_owed = self.pageout_owed.max(high.0.saturating_sub(free.0));
        } else if self.pageout_owed == 0 {
            self.below_pageout_mark = false;
            let now = std::time::Instant::now();
            // Free memory recovering may be another app's page-out: an app whose own
            // freed nothing waits out the retry time as well.
            for a in self.apps.iter_mut().filter(|a| a.pageout_futile.is_some_and(|t| now >= t + PAGEOUT_RETRY)) {
                a.pageout_futile = None;
            }
            return;
        }
        let first = !std::mem::replace(&mut self.below_pageout_mark, true);
        let mut want = self.pageout_owed.min(PAGEOUT_PAGES_PER_SAMPLE);
        let mut order: Vec<usize> = (0..self.apps.len())
            .filter(|&i| {
                let a = &self.apps[i];
                // Nothing resident at the last sample: nothing to find in its pagemap.
                let resident = if swappable_only { a.rss_anon } else { a.rss };
                (a.swappable || !swappable_only)
                    && resident > 0
                    && a.pageout_futile.is_none()
                    && matches!(a.state, AppState::Cached | AppState::Frozen)
                    && self.fg != Some(AppId(i as u16))
            })
            .collect();
        order.sort_by_key(|&i| (self.apps[i].last_used, i));
        let mib = |p: u64| p as f64 / 256.0;
        let why = format!("free {:.1} MiB below {mark}, {:.1} MiB", mib(free.0), mib(low.0));
        for i in order {
            if want == 0 {
                break;
            }
            let name = self.apps[i].rule.name.clone();
            if !self.may_page_out(i) {
                continue;
            }
            if self.cfg.dry_run {
                // Once each time free memory falls below: nothing is paged out, so it stays there.
                if first {
                    self.log(&format!("dry-run: would page out up to {} pages of {name} ({why})", self.pageout_owed));
                }
                self.pageout_owed = 0;
                return;
            }
            let (advised, freed) = self.page_out(i, ranges, want, swappable_only);
            match advised {
                Ok(n) if n > 0 && freed > 0 => {
                    // The way up is covered by what was asked for once some of it went
                    // (the rest may be pages it grew meanwhile): the next app is not asked
                    // for a remainder of a few pages.
                    want -= n.min(want);
                    self.pageout_owed -= n.min(self.pageout_owed);
                    self.c.bg_pageout_pages += freed;
                    self.log(&format!("pageout {name}: {freed} pages left memory ({why})"));
                }
                Ok(0) => {
                    // Resident at the last sample, but nothing of it may go: locked, or
                    // gone since.
                    self.apps[i].pageout_futile = Some(std::time::Instant::now());
                    self.log(&format!(
                        "pageout {name}: no page it may page out (locked memory?); not tried again until free memory recovers"
                    ));
                }
                Ok(n) => {
                    self.apps[i].pageout_futile = Some(std::time::Instant::now());
                    self.log(&format!("pageout {name}: {n} pages advised, none left memory; not tried again until free memory recovers"));
                }
                Err(e) => {
                    self.apps[i].pageout_futile = Some(std::time::Instant::now());
                    self.log(&format!("pageout {name} failed: {e}; not tried again until free memory recovers"));
                }
            }
        }
        if want > 0 {
            // Every app tried and still short: nothing more to take this dip.
            self.pageout_owed = 0;
        }
    }
}

/// A `Reclaim` (MADV_PAGEOUT) or `Prepage` (MADV_WILLNEED) action on one app's
/// anonymous memory, under way: each sample takes at most [`PAGEOUT_PAGES_PER_SAMPLE`] of
/// it, so a gigabyte does not hold the loop, and the killer in it, for the best part of a
/// second. It ends when what was asked for is advised, when a sample finds less than its
/// share left, or when the guard stops it (the app came to the foreground, for a reclaim,
/// or died); its line is then logged and sent to the `floe ctl` client that asked.
pub(super) struct Advice {
    app: usize,
    kind: AdviceKind,
    asked: Pages,
    done: u64,
    samples: u32,
    /// Where the next share begins: the process, and the address past the last page
    /// advised. Pages already advised may still look the same in pagemap (read into the
    /// swap cache but not yet mapped; shared pages the kernel kept), so a share does not
    /// look for its pages from the start again.
    from: Option<(i32, usize)>,
    client: Option<Sender<String>>,
}

#[derive(Clone, Copy)]
pub(super) enum AdviceKind {
    /// To the machine's swap, whichever tier the policy named: Linux has no per-app choice
    /// of swap device (`swap_note` says at start when the two differ).
    Reclaim(SwapTier),
    Prepage,
}

impl AdviceKind {
    fn what(self) -> &'static str {
        match self {
            AdviceKind::Reclaim(_) => "reclaim",
            AdviceKind::Prepage => "prepage",
        }
    }
}

impl Daemon {
    /// Begins a `Reclaim` or `Prepage` of app `i` (the guard has let it through): its
    /// first share now, the rest at the following samples. An earlier one of the same
    /// app still under way ends here, its client told what it did. Returns the line
    /// logged if it ended at once; otherwise the `floe ctl` client being handled, if any,
    /// goes with it and is answered when it ends.
    pub(super) fn begin_advice(&mut self, i: usize, kind: AdviceKind, asked: Pages) -> std::result::Result<String, NotDone> {
        if let Some(k) = self.advice.iter().position(|a| a.app == i) {
            let earlier = self.advice.remove(k);
            self.end_advice(earlier, Some("a new request for the app came"));
        }
        let mut a = Advice { app: i, kind, asked, done: 0, samples: 0, from: None, client: None };
        match self.advice_step(&mut a) {
            Ok(true) => Ok(self.said(advice_line(&self.apps[i].rule.name, &a, None))),
            Ok(false) => {
                a.client = self.ctl_client.take();
                self.log(&format!(
                    "{} {}: {} pages at the first sample, the rest over the following ones",
                    kind.what(),
                    self.apps[i].rule.name,
                    a.done
                ));
                self.advice.push(a);
                self.stay_busy(BUSY_AFTER_PRESSURE);
                Ok(String::new())
            }
            Err(e) => Err(NotDone::Failed(self.said(format!("{} {} failed: {e}", kind.what(), self.apps[i].rule.name)))),
        }
    }

    /// Takes the next share of the oldest action under way, once a sample.
    pub(super) fn continue_advice(&mut self) {
        if self.advice.is_empty() {
            return;
        }
        self.stay_busy(BUSY_AFTER_PRESSURE);
        let mut a = self.advice.remove(0);
        let stop = if self.apps[a.app].state == AppState::Dead {
            Some("the app died".to_string())
        } else {
            self.guard_app(AppId(a.app as u16), a.kind.what()).err()
        };
        if let Some(why) = stop {
            return self.end_advice(a, Some(&why));
        }
        match self.advice_step(&mut a) {
            Ok(true) => self.end_advice(a, None),
            Ok(false) => self.advice.insert(0, a),
            Err(e) => {
                let line = self.said(format!("{} {} failed after {} pages: {e}", a.kind.what(), self.apps[a.app].rule.name, a.done));
                if let Some(c) = a.client {
                    answer(c, Err(line));
                }
            }
        }
    }

    /// Ends every action under way (the daemon is stopping), each client told why.
    pub(super) fn stop_advice(&mut self, why: &str) {
        for a in std::mem::take(&mut self.advice) {
            self.end_advice(a, Some(why));
        }
    }

    /// Advises the next share of `a`; returns whether it has ended.
    fn advice_step(&mut self, a: &mut Advice) -> Result<bool> {
        let want = (a.asked.0 - a.done).min(PAGEOUT_PAGES_PER_SAMPLE);
        let (n, from) = advise(&self.apps[a.app].group, anon_ranges, want, matches!(a.kind, AdviceKind::Prepage), a.from)?;
        a.from = from;
        if let AdviceKind::Reclaim(_) = a.kind {
            self.c.reclaim_pages += n;
        }
        a.done += n;
        a.samples += 1;
        Ok(n < want || a.done >= a.asked.0)
    }

    /// Logs how `a` ended (stopped early for `why`) and answers its client.
    fn end_advice(&mut self, a: Advice, why: Option<&str>) {
        let line = self.said(advice_line(&self.apps[a.app].rule.name, &a, why));
        if let Some(c) = a.client {
            answer(c, Ok(line + "\n"));
        }
    }
}

/// What an action did: `reclaim NAME: N of M pages asked (...)`, with the samples it
/// took when more than one, and why it stopped early.
fn advice_line(name: &str, a: &Advice, why: Option<&str>) -> String {
    let mut s = format!("{} {name}: {} of {} pages asked", a.kind.what(), a.done, asked(a.asked));
    if let AdviceKind::Reclaim(tier) = a.kind {
        s += &format!(" (for {tier:?}, to the machine's swap)");
    }
    if a.samples > 1 {
        s += &format!(", over {} samples", a.samples);
    }
    if let Some(why) = why {
        s += &format!("; stopped: {why}");
    }
    s
}

/// The ranges of a process's memory an action applies to.
type RangesOf = fn(i32) -> Result<Vec<(usize, usize)>>;

/// Calls `f` with a pidfd and the `ranges` of each process of the group.
pub(super) fn each_pid_with(g: &AppGroup, ranges: RangesOf, f: impl Fn(&Pidfd, &[(usize, usize)]) -> Result<()>) -> Result<()> {
    for pid in g.pids()? {
        let p = Pidfd::open(pid)?;
        f(&p, &ranges(pid)?)?;
    }
    Ok(())
}

/// Pages out (`in_swap` false) or reads back ahead of use (true) at most `limit` of the
/// pages in each process's `ranges` that are resident, or in swap, process by process in
/// pid order, each in address order (pagemap says nothing of recency), beginning at
/// `from` (the process it names from its address, those after it whole; see
/// [`Advice::from`]); a process that exits meanwhile is passed over. Returns the pages
/// advised and where a next call would go on.
pub(super) fn advise(
    g: &AppGroup,
    ranges: RangesOf,
    limit: u64,
    in_swap: bool,
    from: Option<(i32, usize)>,
) -> Result<(u64, Option<(i32, usize)>)> {
    let (mut done, mut next) = (0, from);
    let mut pids = g.pids()?;
    pids.sort_unstable();
    for pid in pids.into_iter().filter(|&p| from.is_none_or(|(q, _)| p >= q)) {
        if done >= limit {
            break;
        }
        let found = || -> Result<(u64, Option<usize>)> {
            let mut ranges = ranges(pid)?;
            if let Some((_, addr)) = from.filter(|&(q, _)| q == pid) {
                ranges = without(&ranges, &[(0, addr)]);
            }
            Pidfd::open(pid)?.advise_pages(&ranges, limit - done, in_swap)
        };
        match found() {
            Ok((n, past)) => {
                done += n;
                next = past.map(|addr| (pid, addr)).or(next);
            }
            Err(_) if !Path::new(&format!("/proc/{pid}")).exists() => {}
            Err(e) => return Err(e),
        }
    }
    Ok((done, next))
}

/// A process's anonymous mappings and its mappings of files: what of an app's memory
/// reclaim can take (shared pages the kernel skips itself). Not device mappings
/// (/dev/..., a GPU's for one: PFN-mapped, not memory reclaim can take) nor locked
/// memory (`sys::advisable`).
pub(super) fn app_ranges(pid: i32) -> Result<Vec<(usize, usize)>> {
    let maps = read(format!("/proc/{pid}/maps"))?;
    let mut r = crate::sys::parse_anon_ranges(&maps);
    let files = crate::prepage_file::parse_file_mappings(&maps).into_iter().filter(|m| !m.path.starts_with("/dev/"));
    r.extend(files.map(|m| (m.start, m.end - m.start)));
    crate::sys::advisable(pid, r)
}
