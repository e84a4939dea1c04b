//! An N-core CPU under weighted processor sharing, the fluid model of CFS: every
//! runnable job gets a share of the cores proportional to its weight, no job more than
//! one core. Jobs carry a continuation the engine resumes when they finish.
//!
//! On a big.LITTLE device ([`Cpu::with_capacities`]) the cores differ: while every
//! runnable job has a core of its own, a job keeps the core it started on (the
//! scheduler picks the fastest idle core it may use when a job wakes), and the
//! foreground app's jobs move to a faster core as soon as one is idle (EAS's
//! misfit-task migration of the top-app's threads); each job runs at its core's
//! capacity. Only when more jobs are runnable than cores do they share the cores'
//! total capacity by weight, as on equal cores.
//!
//! Jobs of background apps may form one group, as Android puts cached apps' threads in
//! one cgroup: up to Android 8 the cpu controller's `bg_non_interactive` group, whose
//! `cpu.shares` (52 against 1,024) is the whole group's weight however many threads it
//! holds; from Android 9 the `background` cpuset, which confines the group to a few
//! cores. The group takes its share as one entity and divides it among its jobs by
//! their weights.

use floe_core::{CpuClass, Nanos};

/// CFS weight of nice 0.
pub const WEIGHT_NORMAL: u32 = 1024;
/// Weight of a boosted (foreground, UCSG-like) thread: nice -10 in CFS's table.
pub const WEIGHT_BOOSTED: u32 = 9548;
/// Weight of a SCHED_IDLE thread in CFS.
pub const WEIGHT_IDLE: u32 = 3;

pub fn weight(class: CpuClass) -> u32 {
    match class {
        CpuClass::Boosted => WEIGHT_BOOSTED,
        CpuClass::Normal => WEIGHT_NORMAL,
        CpuClass::Idle => WEIGHT_IDLE,
    }
}

#[derive(Clone, Debug)]
struct Job<T> {
    /// Core-nanoseconds of work left.
    left: f64,
    weight: u32,
    /// In the background group.
    bg: bool,
    /// Owning app, so a frozen app's jobs can be paused.
    app: Option<u16>,
    paused: bool,
    rate: f64,
    /// The core it runs on while every job has one (big.LITTLE only: at most 64 cores).
    core: Option<u8>,
    cont: T,
}

/// The CPU. `T` is the engine's continuation type.
#[derive(Clone, Debug)]
pub struct Cpu<T> {
    cores: u32,
    group: BgGroup,
    jobs: Vec<Job<T>>,
    /// Scratch for `rebalance` (weight, most cores, job index or `usize::MAX` for the group).
    items: Vec<(f64, f64, usize)>,
    rates: Vec<f64>,
    updated: Nanos,
    /// Core-nanoseconds spent running jobs so far (in units of the fastest core's work).
    pub busy_core_ns: f64,
    /// Nanoseconds cores were busy so far, summed over the cores (what a trace's CPU
    /// utilisation counts, whatever the core's speed).
    pub busy_ns: f64,
    /// Each core's capacity against the fastest (1.0), fastest first; empty on equal
    /// cores.
    caps: Vec<f64>,
    /// The foreground (top-app) app, whose jobs take the fastest idle core.
    top: Option<u16>,
    /// Cores running a job under the current rates: one a running job, except that the
    /// background group's jobs, sharing its cpuset, keep at most its cores busy.
    busy_cores: u32,
    /// [`Cpu::next_completion`]'s answer while no job's work or rate has changed since
    /// it was computed (None: to compute): the engine asks after every event, most of
    /// which leave the CPU alone.
    next: Option<Option<Nanos>>,
}

/// How the background group is scheduled.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BgGroup {
    /// The group's CFS weight (`cpu.shares`); None: no cpu group, each job keeps its own
    /// weight.
    pub shares: Option<u32>,
    /// Cores the group may use (its cpuset); None: all.
    pub cores: Option<u32>,
}

impl BgGroup {
    fn active(&self) -> bool {
        self.shares.is_some() || self.cores.is_some()
    }
}

/// Water-filling: each item (weight, most it can use) gets its weighted share of `cap`,
/// those whose share exceeds their limit get the limit and the rest share what is
/// left. `items` is reordered; `rates[k]` is the rate of `items[k]` after the call.
///
/// Every item but the last has a limit of one core and the items come in ascending
/// index (what [`Cpu::share`] builds), which [`order`] relies on.
fn fill(items: &mut [(f64, f64, usize)], cap: f64, rates: &mut Vec<f64>) {
    order(items);
    rates.clear();
    rates.resize(items.len(), 0.0);
    let mut cap = cap;
    let mut total: f64 = items.iter().map(|i| i.0).sum();
    for k in 0..items.len() {
        let (w, max, _) = items[k];
        let share = if total > 0.0 { w * cap / total } else { 0.0 };
        if share >= max {
            rates[k] = max;
            cap -= max;
            total -= w;
        } else {
            for r in k..items.len() {
                rates[r] = if total > 0.0 { items[r].0 * cap / total } else { 0.0 };
            }
            break;
        }
    }
}

/// Orders the items so that those that saturate first (the least room per unit of
/// weight, `a.1 / a.0`, compared as `a.1 * b.0` against `b.1 * a.0`) come first, ties by
/// index. Among items of one core each that is the weight, heaviest first: the items
/// before the last, in ascending index, take a stable insertion sort by weight (integers
/// as f64, compared exactly, without the products), and the last, which may be the
/// background group's, goes after every item the comparison puts before it (a scan from
/// the front: the group, with the least room per weight, mostly goes first). The
/// comparison orders the items totally (the products of one limit by the weights keep
/// the weights' order), so this is the order a sort by it gives.
fn order(items: &mut [(f64, f64, usize)]) {
    let Some((&mut last, rest)) = items.split_last_mut() else {
        return;
    };
    debug_assert!(rest.iter().all(|i| i.1 == 1.0) && rest.windows(2).all(|w| w[0].2 < w[1].2));
    for k in 1..rest.len() {
        let item = rest[k];
        let mut at = k;
        while at > 0 && rest[at - 1].0 < item.0 {
            rest[at] = rest[at - 1];
            at -= 1;
        }
        rest[at] = item;
    }
    let before = |a: &(f64, f64, usize)| (a.1 * last.0).total_cmp(&(last.1 * a.0)).then(a.2.cmp(&last.2)).is_lt();
    let mut at = 0;
    while at < rest.len() && before(&rest[at]) {
        at += 1;
    }
    for k in (at..rest.len()).rev() {
        items[k + 1] = items[k];
    }
    items[at] = last;
}

impl<T> Cpu<T> {
    pub fn new(cores: u32) -> Cpu<T> {
        Cpu::with_group(cores, BgGroup::default())
    }

    pub fn with_group(cores: u32, group: BgGroup) -> Cpu<T> {
        Cpu {
            cores,
            group,
            jobs: Vec::new(),
            items: Vec::new(),
            rates: Vec::new(),
            updated: Nanos::ZERO,
            busy_core_ns: 0.0,
            busy_ns: 0.0,
            caps: Vec::new(),
            top: None,
            busy_cores: 0,
            next: None,
        }
    }

    /// A big.LITTLE CPU: `big` cores of capacity 1 and the rest of capacity `little`;
    /// the background group's cpuset, if it has one, is the little cores (the last
    /// `group.cores`), as Android's cpusets confine background threads to the little
    /// cluster.
    pub fn with_capacities(cores: u32, group: BgGroup, big: u32, little: f64) -> Cpu<T> {
        let mut cpu = Cpu::with_group(cores, group);
        if big < cores && little < 1.0 && cores <= 64 {
            cpu.caps = (0..cores).map(|c| if c < big { 1.0 } else { little }).collect();
        }
        cpu
    }

    /// Makes `app` the foreground app (top-app), or none.
    pub fn set_top(&mut self, now: Nanos, app: Option<u16>) {
        if self.top != app {
            self.advance(now);
            self.top = app;
            self.rebalance();
        }
    }

    pub fn cores(&self) -> u32 {
        self.cores
    }

    /// Number of runnable (not paused) jobs.
    pub fn runnable(&self) -> usize {
        self.jobs.iter().filter(|j| !j.paused).count()
    }

    /// Brings every job's remaining work up to `now`.
    fn advance(&mut self, now: Nanos) {
        let dt = now.0.saturating_sub(self.updated.0) as f64;
        if dt > 0.0 {
            for j in &mut self.jobs {
                j.left -= j.rate * dt;
                self.busy_core_ns += j.rate * dt;
            }
            self.busy_ns += f64::from(self.busy_cores) * dt;
            self.next = None;
        }
        self.updated = self.updated.max(now);
    }

    /// Accounts every job's progress up to `now` (for utilisation sampling).
    pub fn sync(&mut self, now: Nanos) {
        self.advance(now);
    }

    /// Busy core-nanoseconds by `now` (see `busy_ns`), without bringing the jobs up to it.
    pub fn busy_ns_at(&self, now: Nanos) -> f64 {
        let dt = now.0.saturating_sub(self.updated.0) as f64;
        self.busy_ns + f64::from(self.busy_cores) * dt
    }

    /// Core-nanoseconds of work done by `now`, without bringing the jobs up to it (so
    /// reading it changes nothing in the run).
    pub fn busy_core_ns_at(&self, now: Nanos) -> f64 {
        let dt = now.0.saturating_sub(self.updated.0) as f64;
        self.busy_core_ns + self.jobs.iter().map(|j| j.rate * dt).sum::<f64>()
    }

    /// Sets every job's rate ([`Cpu::share`]) and counts the cores kept busy.
    fn rebalance(&mut self) {
        self.next = None;
        self.share();
        let group = self.group.active();
        let (mut fg, mut bg) = (0u32, 0u32);
        for j in self.jobs.iter().filter(|j| j.rate > 0.0) {
            if group && j.bg {
                bg += 1;
            } else {
                fg += 1;
            }
        }
        let bg = self.group.cores.map_or(bg, |c| bg.min(c));
        self.busy_cores = (fg + bg).min(self.cores);
    }

    /// Shares the cores (see [`fill`]): every job outside the background group is one
    /// item of at most one core; the group is one item weighing its `cpu.shares` (or its
    /// jobs' total weight) and using at most its cpuset's cores at their capacity, and
    /// its rate is then filled among its jobs.
    fn share(&mut self) {
        if !self.caps.is_empty() && self.place() {
            return;
        }
        // Equal cores, or more jobs than cores: the fluid share of their total capacity.
        let capacity = if self.caps.is_empty() { self.cores as f64 } else { self.caps.iter().sum() };
        let group = self.group.active();
        let mut items = std::mem::take(&mut self.items);
        let mut rates = std::mem::take(&mut self.rates);
        items.clear();
        let (mut bg_weight, mut bg_jobs) = (0.0, 0usize);
        for (i, j) in self.jobs.iter_mut().enumerate() {
            j.core = None;
            j.rate = 0.0;
            if j.paused {
                continue;
            }
            if group && j.bg {
                bg_weight += j.weight as f64;
                bg_jobs += 1;
            } else {
                items.push((j.weight as f64, 1.0, i));
            }
        }
        if bg_jobs > 0 {
            let w = self.group.shares.map_or(bg_weight, f64::from);
            // At most one core a job, within the cpuset: the last cores, the little ones.
            let max = match self.group.cores {
                None => bg_jobs as f64,
                Some(c) if self.caps.is_empty() => (c as usize).min(bg_jobs) as f64,
                Some(c) => {
                    let from = self.caps.len().saturating_sub(c as usize);
                    self.caps[from..].iter().take(bg_jobs).sum()
                }
            };
            items.push((w, max, usize::MAX));
        }
        fill(&mut items, capacity, &mut rates);
        let mut bg_rate = 0.0;
        for (k, &(_, _, i)) in items.iter().enumerate() {
            if i == usize::MAX {
                bg_rate = rates[k];
            } else {
                self.jobs[i].rate = rates[k];
            }
        }
        if bg_jobs > 0 {
            items.clear();
            items.extend(self.jobs.iter().enumerate().filter(|(_, j)| j.bg && !j.paused).map(|(i, j)| (j.weight as f64, 1.0, i)));
            fill(&mut items, bg_rate, &mut rates);
            for (k, &(_, _, i)) in items.iter().enumerate() {
                self.jobs[i].rate = rates[k];
            }
        }
        self.items = items;
        self.rates = rates;
    }

    /// big.LITTLE placement while every runnable job has a core of its own (and the
    /// background group's jobs one in its cpuset): jobs keep their cores, a job without
    /// one takes the fastest idle core it may use (the foreground's first), and the
    /// foreground's jobs move to a faster idle core. Returns false, changing nothing,
    /// when the jobs do not fit.
    fn place(&mut self) -> bool {
        let n = self.caps.len();
        let group = self.group.active();
        let bg_from = self.group.cores.map_or(0, |c| n.saturating_sub(c as usize));
        let top = self.top;
        let is_top = |j: &Job<T>| j.app.is_some() && j.app == top;
        let (mut runnable, mut bg, mut unplaced, mut tops) = (0, 0, 0, 0);
        // Cores taken, one bit each (at most 64 cores).
        let mut used: u64 = 0;
        for j in self.jobs.iter_mut() {
            if j.paused {
                j.core = None;
                continue;
            }
            runnable += 1;
            bg += (group && j.bg) as usize;
            tops += is_top(j) as usize;
            match j.core {
                Some(c) => used |= 1 << c,
                None => unplaced += 1,
            }
        }
        if runnable > n || bg > n - bg_from {
            return false;
        }
        // The cores from `from` on, one bit each. The caps run fastest first, so the
        // lowest idle bit is the fastest idle core.
        let cores_from = |from: usize| if from >= 64 { 0 } else { (u64::MAX >> (64 - n)) & (u64::MAX << from) };
        // Jobs without a core take the fastest idle one they may use: the foreground's
        // first, then the others in the order they came. A job that finds none idle in
        // its range (the group's cores taken by others) makes the jobs share.
        if unplaced > 0 {
            for pass_top in [true, false] {
                for i in 0..self.jobs.len() {
                    let j = &self.jobs[i];
                    if j.paused || j.core.is_some() || is_top(j) != pass_top {
                        continue;
                    }
                    let idle = cores_from(if group && j.bg { bg_from } else { 0 }) & !used;
                    if idle == 0 {
                        for j in self.jobs.iter_mut() {
                            j.core = None;
                        }
                        return false;
                    }
                    let c = idle.trailing_zeros() as u8;
                    used |= 1 << c;
                    self.jobs[i].core = Some(c);
                }
            }
        }
        // The foreground's jobs move up to the fastest idle cores.
        if tops > 0 {
            for i in 0..self.jobs.len() {
                let j = &self.jobs[i];
                if j.paused || !is_top(j) {
                    continue;
                }
                let cur = j.core.expect("placed") as usize;
                let idle = cores_from(0) & !used;
                if idle == 0 {
                    break;
                }
                let c = idle.trailing_zeros() as usize;
                if self.caps[c] > self.caps[cur] {
                    used &= !(1 << cur);
                    used |= 1 << c;
                    self.jobs[i].core = Some(c as u8);
                }
            }
        }
        for j in self.jobs.iter_mut() {
            j.rate = j.core.map_or(0.0, |c| self.caps[c as usize]);
        }
        true
    }

    /// Adds a job needing `work` of CPU time, starting at `now`.
    /// `bg`: the job belongs to the background group.
    #[allow(clippy::too_many_arguments)]
    pub fn add(&mut self, now: Nanos, work: Nanos, weight: u32, bg: bool, app: Option<u16>, paused: bool, cont: T) {
        self.advance(now);
        self.jobs.push(Job { left: work.0 as f64, weight, bg, app, paused, rate: 0.0, core: None, cont });
        self.rebalance();
    }

    /// The time the next job finishes, if any job is running (the end of time, u64's
    /// largest, for one too slow to finish before it).
    pub fn next_completion(&mut self) -> Option<Nanos> {
        if let Some(next) = self.next {
            return next;
        }
        // The earliest finish is the ceiling of the least time left: the ceiling and the
        // saturating add keep the order of the times, so one ceiling (a libm call on the
        // baseline target) serves all the jobs.
        let (mut any, mut least) = (false, f64::INFINITY);
        for j in self.jobs.iter().filter(|j| j.rate > 0.0) {
            any = true;
            least = least.min(j.left.max(0.0) / j.rate);
        }
        let next = any.then(|| Nanos(self.updated.0.saturating_add(least.ceil() as u64)));
        self.next = Some(next);
        next
    }

    /// Removes and returns the continuations of jobs finished by `now`, in the order
    /// they were added.
    pub fn finish(&mut self, now: Nanos, done: &mut Vec<T>) {
        self.advance(now);
        let before = done.len();
        let mut i = 0;
        while i < self.jobs.len() {
            if self.jobs[i].left <= 0.5 && !self.jobs[i].paused {
                done.push(self.jobs.remove(i).cont);
            } else {
                i += 1;
            }
        }
        if done.len() != before {
            self.rebalance();
        }
    }

    /// Pauses or resumes every job of `app` (freezing).
    pub fn set_paused(&mut self, now: Nanos, app: u16, paused: bool) {
        self.advance(now);
        for j in self.jobs.iter_mut().filter(|j| j.app == Some(app)) {
            j.paused = paused;
        }
        self.rebalance();
    }

    /// Changes the weight and group of every job of `app`.
    pub fn set_weight(&mut self, now: Nanos, app: u16, weight: u32, bg: bool) {
        self.advance(now);
        for j in self.jobs.iter_mut().filter(|j| j.app == Some(app)) {
            j.weight = weight;
            j.bg = bg;
        }
        self.rebalance();
    }

    /// Drops every job of `app` (the process died).
    pub fn drop_app(&mut self, now: Nanos, app: u16) {
        self.advance(now);
        self.jobs.retain(|j| j.app != Some(app));
        self.rebalance();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_all(cpu: &mut Cpu<u32>) -> Vec<(u32, u64)> {
        let mut out = Vec::new();
        let mut done = Vec::new();
        while let Some(t) = cpu.next_completion() {
            cpu.finish(t, &mut done);
            out.extend(done.drain(..).map(|c| (c, t.0)));
        }
        out
    }

    #[test]
    fn one_job_per_core_runs_at_full_speed() {
        let mut cpu = Cpu::new(2);
        cpu.add(Nanos(0), Nanos(100), WEIGHT_NORMAL, false, None, false, 1);
        cpu.add(Nanos(0), Nanos(200), WEIGHT_NORMAL, false, None, false, 2);
        assert_eq!(run_all(&mut cpu), vec![(1, 100), (2, 200)]);
    }

    #[test]
    fn contention_shares_by_weight() {
        // Two equal jobs on one core each take twice as long.
        let mut cpu = Cpu::new(1);
        cpu.add(Nanos(0), Nanos(100), WEIGHT_NORMAL, false, None, false, 1);
        cpu.add(Nanos(0), Nanos(100), WEIGHT_NORMAL, false, None, false, 2);
        assert_eq!(run_all(&mut cpu), vec![(1, 200), (2, 200)]);
        // A boosted job beside a normal one gets ~90% of the core.
        cpu.add(Nanos(1000), Nanos(100), WEIGHT_BOOSTED, false, None, false, 3);
        cpu.add(Nanos(1000), Nanos(1000), WEIGHT_NORMAL, false, None, false, 4);
        let r = run_all(&mut cpu);
        assert_eq!(r[0].0, 3);
        assert!(r[0].1 - 1000 < 115, "boosted job finished at {}", r[0].1);
    }

    #[test]
    fn paused_jobs_do_not_progress_and_idle_yields() {
        let mut cpu = Cpu::new(1);
        cpu.add(Nanos(0), Nanos(100), WEIGHT_NORMAL, false, Some(7), true, 1);
        assert_eq!(cpu.next_completion(), None);
        cpu.add(Nanos(0), Nanos(100), WEIGHT_IDLE, false, None, false, 2);
        cpu.add(Nanos(0), Nanos(100), WEIGHT_NORMAL, false, None, false, 3);
        let r = run_all(&mut cpu);
        assert_eq!(r[0].0, 3);
        assert!(r[0].1 <= 101);
        cpu.set_paused(Nanos(500), 7, false);
        assert_eq!(run_all(&mut cpu), vec![(1, 600)]);
    }

    #[test]
    fn background_group_shares_one_weight_however_many_jobs() {
        // bg_non_interactive: 52 shares for the group against one normal job on one
        // core: the normal job gets 1024/1076 of it whatever the group's size.
        let mut cpu = Cpu::with_group(1, BgGroup { shares: Some(52), cores: None });
        cpu.add(Nanos(0), Nanos(1_000_000), WEIGHT_NORMAL, false, None, false, 0);
        for k in 1..=4 {
            cpu.add(Nanos(0), Nanos(1_000_000), WEIGHT_NORMAL, true, Some(k as u16), false, k);
        }
        let r = run_all(&mut cpu);
        assert_eq!(r[0].0, 0);
        assert_eq!(r[0].1, (1_000_000f64 * 1076.0 / 1024.0).ceil() as u64);
        // Without a group the same four jobs take four fifths of the core.
        let mut cpu = Cpu::new(1);
        cpu.add(Nanos(0), Nanos(1_000_000), WEIGHT_NORMAL, false, None, false, 0);
        for k in 1..=4 {
            cpu.add(Nanos(0), Nanos(1_000_000), WEIGHT_NORMAL, true, Some(k as u16), false, k);
        }
        assert_eq!(run_all(&mut cpu)[0], (0, 5_000_000));
    }

    #[test]
    fn background_cpuset_caps_the_group_and_idle_cores_stay_usable() {
        // Four cores, the background cpuset two of them: four background jobs run at
        // half speed while a foreground job has a core of its own.
        let mut cpu = Cpu::with_group(4, BgGroup { shares: None, cores: Some(2) });
        for k in 1..=4 {
            cpu.add(Nanos(0), Nanos(1000), WEIGHT_NORMAL, true, Some(k as u16), false, k);
        }
        cpu.add(Nanos(0), Nanos(1000), WEIGHT_NORMAL, false, None, false, 0);
        let r = run_all(&mut cpu);
        assert_eq!(r[0], (0, 1000));
        assert!(r[1..].iter().all(|&(_, t)| t == 2000), "{r:?}");
        // A lone group job still gets a whole core under 52 shares when cores are idle.
        let mut cpu = Cpu::with_group(2, BgGroup { shares: Some(52), cores: None });
        cpu.add(Nanos(0), Nanos(1000), WEIGHT_NORMAL, true, Some(1), false, 1);
        cpu.add(Nanos(0), Nanos(1000), WEIGHT_NORMAL, false, None, false, 0);
        assert_eq!(run_all(&mut cpu), vec![(1, 1000), (0, 1000)]);
    }

    /// big.LITTLE: the foreground's job takes the fastest idle core; when the big cores
    /// are busy it runs on a little one at that core's capacity, and moves to a big core
    /// as soon as one is idle. Background jobs stay in their cpuset's little cores.
    #[test]
    fn big_little_places_the_foreground_on_the_fastest_idle_core() {
        let mut cpu = Cpu::with_capacities(4, BgGroup { shares: None, cores: Some(1) }, 2, 0.5);
        // Two system jobs take both big cores.
        cpu.add(Nanos(0), Nanos(1000), WEIGHT_NORMAL, false, None, false, 1);
        cpu.add(Nanos(0), Nanos(3000), WEIGHT_NORMAL, false, None, false, 2);
        // A background app's job goes to its cpuset's little core, whatever is idle.
        cpu.add(Nanos(0), Nanos(1000), WEIGHT_NORMAL, true, Some(9), false, 3);
        // The foreground's job finds only a little core idle: half speed until the first
        // big core frees at 1000 ns, then full speed: 500 ns of work by then, 1500 after.
        cpu.set_top(Nanos(0), Some(7));
        cpu.add(Nanos(0), Nanos(2000), WEIGHT_NORMAL, false, Some(7), false, 4);
        let r = run_all(&mut cpu);
        assert_eq!(r.iter().find(|x| x.0 == 4), Some(&(4, 2500)), "{r:?}");
        assert_eq!(r.iter().find(|x| x.0 == 3), Some(&(3, 2000)), "the background job ran at half speed: {r:?}");
        // More jobs than cores: they share the cores' total capacity.
        let mut cpu = Cpu::with_capacities(2, BgGroup::default(), 1, 0.5);
        for k in 0..3 {
            cpu.add(Nanos(0), Nanos(1000), WEIGHT_NORMAL, false, None, false, k);
        }
        assert_eq!(run_all(&mut cpu)[0].1, 2000);
    }

    /// More jobs than cores on big.LITTLE: the background cpuset's one little core gives
    /// its jobs that core's capacity, not a big core's, and counts as one busy core
    /// however many jobs share it.
    #[test]
    fn a_crowded_background_cpuset_runs_at_its_little_cores_capacity() {
        let mut cpu = Cpu::with_capacities(4, BgGroup { shares: None, cores: Some(1) }, 2, 0.5);
        for k in 0..4 {
            cpu.add(Nanos(0), Nanos(1000), WEIGHT_NORMAL, true, Some(10 + k as u16), false, k);
        }
        cpu.add(Nanos(0), Nanos(10_000), WEIGHT_NORMAL, false, None, false, 9);
        cpu.sync(Nanos(1000));
        assert_eq!(cpu.busy_ns, 2000.0, "one core for the group and one for the system job");
        let r = run_all(&mut cpu);
        // 4,000 ns of work at the little core's 0.5: all done by 8,000 ns.
        assert!(r.iter().filter(|x| x.0 < 4).all(|x| x.1 == 8000), "{r:?}");
    }

    /// Placement after sharing: jobs that shared the cores all lack one when they fit
    /// again, and the foreground's takes the fastest core first, though it came later.
    /// Several foreground jobs move up to freed big cores in the order they came.
    #[test]
    fn jobs_placed_together_put_the_foreground_first_and_move_up_in_order() {
        let mut cpu = Cpu::with_capacities(2, BgGroup::default(), 1, 0.5);
        cpu.set_top(Nanos(0), Some(7));
        cpu.add(Nanos(0), Nanos(100), WEIGHT_NORMAL, false, None, false, 1);
        cpu.add(Nanos(0), Nanos(10_000), WEIGHT_NORMAL, false, None, false, 2);
        cpu.add(Nanos(0), Nanos(10_000), WEIGHT_NORMAL, false, Some(7), false, 3);
        // Three jobs share 1.5 cores until job 1 ends at 200 ns, 100 ns of work each;
        // then the foreground's job 3 takes the big core, job 2 the little one.
        assert_eq!(run_all(&mut cpu), vec![(1, 200), (3, 10_100), (2, 20_000)]);

        let mut cpu = Cpu::with_capacities(8, BgGroup::default(), 2, 0.5);
        cpu.add(Nanos(0), Nanos(1000), WEIGHT_NORMAL, false, None, false, 0);
        cpu.add(Nanos(0), Nanos(1000), WEIGHT_NORMAL, false, None, false, 0);
        cpu.set_top(Nanos(0), Some(7));
        let last = 5;
        for k in 1..=last {
            cpu.add(Nanos(0), Nanos(2000), WEIGHT_NORMAL, false, Some(7), false, k);
        }
        // The big cores free at 1000 ns, with 500 ns of each foreground job's work done
        // on the little cores: jobs 1 and 2 take them and end at 2500 ns; then jobs 3
        // and 4, 1250 ns done, end at 3250 ns, and job 5, 1625 ns done, at 3625 ns.
        let r: Vec<_> = run_all(&mut cpu).into_iter().filter(|x| x.0 > 0).collect();
        assert_eq!(r, vec![(1, 2500), (2, 2500), (3, 3250), (4, 3250), (last, 3625)]);
    }

    /// A job at a crawl finishes at the end of time rather than at a wrapped-around one.
    #[test]
    fn a_crawling_job_does_not_wrap_time() {
        let mut cpu = Cpu::new(1);
        cpu.add(Nanos(u64::MAX - 10), Nanos(u64::MAX / 2), WEIGHT_NORMAL, false, None, false, 1);
        assert_eq!(cpu.next_completion(), Some(Nanos(u64::MAX)));
    }
}
