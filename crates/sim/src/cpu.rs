//! An N-core CPU under weighted processor sharing, the fluid model of CFS: every
//! runnable job gets a share of the cores proportional to its weight, no job more than
//! one core. Jobs carry a continuation the engine resumes when they finish.

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
    /// Owning app, so a frozen app's jobs can be paused.
    app: Option<u16>,
    paused: bool,
    rate: f64,
    cont: T,
}

/// The CPU. `T` is the engine's continuation type.
#[derive(Clone, Debug)]
pub struct Cpu<T> {
    cores: u32,
    jobs: Vec<Job<T>>,
    updated: Nanos,
    /// Core-nanoseconds spent running jobs so far.
    pub busy_core_ns: f64,
}

impl<T> Cpu<T> {
    pub fn new(cores: u32) -> Cpu<T> {
        Cpu { cores, jobs: Vec::new(), updated: Nanos::ZERO, busy_core_ns: 0.0 }
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
        }
        self.updated = self.updated.max(now);
    }

    /// Accounts every job's progress up to `now` (for utilisation sampling).
    pub fn sync(&mut self, now: Nanos) {
        self.advance(now);
    }

    /// Water-filling: jobs in descending weight take a whole core while their fair
    /// share is at least one core; the rest share what is left by weight.
    fn rebalance(&mut self) {
        let mut order: Vec<usize> = (0..self.jobs.len()).filter(|&i| !self.jobs[i].paused).collect();
        order.sort_by(|&a, &b| self.jobs[b].weight.cmp(&self.jobs[a].weight).then(a.cmp(&b)));
        let mut cap = self.cores as f64;
        let mut total: f64 = order.iter().map(|&i| self.jobs[i].weight as f64).sum();
        for j in &mut self.jobs {
            j.rate = 0.0;
        }
        for (k, &i) in order.iter().enumerate() {
            let w = self.jobs[i].weight as f64;
            let share = if total > 0.0 { w * cap / total } else { 0.0 };
            if share >= 1.0 {
                self.jobs[i].rate = 1.0;
                cap -= 1.0;
                total -= w;
            } else {
                for &r in &order[k..] {
                    self.jobs[r].rate = self.jobs[r].weight as f64 * cap / total;
                }
                break;
            }
        }
    }

    /// Adds a job needing `work` of CPU time, starting at `now`.
    pub fn add(&mut self, now: Nanos, work: Nanos, weight: u32, app: Option<u16>, paused: bool, cont: T) {
        self.advance(now);
        self.jobs.push(Job { left: work.0 as f64, weight, app, paused, rate: 0.0, cont });
        self.rebalance();
    }

    /// The time the next job finishes, if any job is running.
    pub fn next_completion(&self) -> Option<Nanos> {
        self.jobs.iter().filter(|j| j.rate > 0.0).map(|j| self.updated.0 + (j.left.max(0.0) / j.rate).ceil() as u64).min().map(Nanos)
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

    /// Changes the weight of every job of `app`.
    pub fn set_weight(&mut self, now: Nanos, app: u16, weight: u32) {
        self.advance(now);
        for j in self.jobs.iter_mut().filter(|j| j.app == Some(app)) {
            j.weight = weight;
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
        cpu.add(Nanos(0), Nanos(100), WEIGHT_NORMAL, None, false, 1);
        cpu.add(Nanos(0), Nanos(200), WEIGHT_NORMAL, None, false, 2);
        assert_eq!(run_all(&mut cpu), vec![(1, 100), (2, 200)]);
    }

    #[test]
    fn contention_shares_by_weight() {
        // Two equal jobs on one core each take twice as long.
        let mut cpu = Cpu::new(1);
        cpu.add(Nanos(0), Nanos(100), WEIGHT_NORMAL, None, false, 1);
        cpu.add(Nanos(0), Nanos(100), WEIGHT_NORMAL, None, false, 2);
        assert_eq!(run_all(&mut cpu), vec![(1, 200), (2, 200)]);
        // A boosted job beside a normal one gets ~90% of the core.
        cpu.add(Nanos(1000), Nanos(100), WEIGHT_BOOSTED, None, false, 3);
        cpu.add(Nanos(1000), Nanos(1000), WEIGHT_NORMAL, None, false, 4);
        let r = run_all(&mut cpu);
        assert_eq!(r[0].0, 3);
        assert!(r[0].1 - 1000 < 115, "boosted job finished at {}", r[0].1);
    }

    #[test]
    fn paused_jobs_do_not_progress_and_idle_yields() {
        let mut cpu = Cpu::new(1);
        cpu.add(Nanos(0), Nanos(100), WEIGHT_NORMAL, Some(7), true, 1);
        assert_eq!(cpu.next_completion(), None);
        cpu.add(Nanos(0), Nanos(100), WEIGHT_IDLE, None, false, 2);
        cpu.add(Nanos(0), Nanos(100), WEIGHT_NORMAL, None, false, 3);
        let r = run_all(&mut cpu);
        assert_eq!(r[0].0, 3);
        assert!(r[0].1 <= 101);
        cpu.set_paused(Nanos(500), 7, false);
        assert_eq!(run_all(&mut cpu), vec![(1, 600)]);
    }
}
