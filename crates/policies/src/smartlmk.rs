//! SmartLMK (Kim, Jeong, Kim, Maeng, ACM TECS 15(3) 2016): a low-memory killer that kills, all at once, the cached apps whose loss costs the least expected launch time while covering the impending memory demand.
//!
//! The four modules of the paper's §5, in this file:
//! - [`LaunchTracker`] (§3.2, Table I): an exponential moving average of the share of
//!   time the system was busy or waiting for I/O, sampled every I = 100 ms from the
//!   launch; the launch is over once the activity has stayed at or below tau_peak times
//!   its peak for tau_N intervals, and then lasted T_launch = T - I * tau_N.
//! - The history store ([`AppHistory`], §5, §6.6): per app, the numbers and sums of
//!   start and resume times, the peak RSS (an EMA with 0.85, sampled when the app leaves
//!   the foreground), and the sum and number of reuse distances.
//! - The models (§4.2, §4.3): Value = (T_start - T_resume) * (1 - e^(-1/r)) with r the
//!   mean reuse distance ([`app_value_ms`]); Memory = RSS - RSS(Zygote); Demand =
//!   RSS_peak(top) - RSS(top) - Free ([`memory_demand`]).
//! - The knapsack solver (§4.4, eq. 15): keep the apps of largest total value whose
//!   memory fits in the total memory minus the demand, by dynamic programming at 1 MiB
//!   granularity; the apps not kept are the victims ([`knapsack_victims`]), killed with
//!   one [`Action::Kill`].
//!
//! Where the paper leaves a choice open, the choice is documented beside the code that
//! makes it (look for "Choice:").

use floe_core::{Action, AppId, AppState, Event, EventMask, LaunchKind, LmkMode, Nanos, Pages, Policy, Setup, SwapSetup, SystemView};
use std::collections::BTreeMap;

/// Parameters of the launch tracker (the paper's Table I).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrackerParams {
    /// Interval I at which the busy + I/O-wait share is sampled (Table I: 100 ms).
    pub interval: Nanos,
    /// Weight alpha of the past activity in the moving average (Table I: 0.90).
    pub alpha: f64,
    /// Share of the session's peak activity at or below which the system counts as
    /// settled, tau_peak (Table I: 0.56).
    pub tau_peak: f64,
    /// Number of intervals the activity must stay settled before the launch is declared
    /// over, tau_N (Table I: 17).
    pub tau_n: u32,
}

impl Default for TrackerParams {
    fn default() -> Self {
        TrackerParams { interval: Nanos::from_ms(100), alpha: 0.90, tau_peak: 0.56, tau_n: 17 }
    }
}

/// SmartLMK's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct SmartLmkParams {
    /// The launch tracker's parameters (Table I); its interval is also the tick interval.
    pub tracker: TrackerParams,
    /// Weight of the past in the EMA of an app's peak RSS (§5: decaying factor 0.85).
    pub rss_peak_alpha: f64,
    /// RSS of Zygote, shared by every app and not freed by a kill (§6.3: 26.0 MB).
    pub zygote_rss: Pages,
    /// Granularity of memory in the knapsack solver (§6.6: 1 MB).
    pub quantum: Pages,
    /// How long a victim may stay alive after its kill before SmartLMK stops waiting for
    /// it and may choose victims again. Assumption: 1 s, the stock Android LMK's
    /// `lowmem_deathpending_timeout` (the paper does not say how it waits for victims).
    pub death_pending_timeout: Nanos,
}

impl Default for SmartLmkParams {
    fn default() -> Self {
        SmartLmkParams {
            tracker: TrackerParams::default(),
            rss_peak_alpha: 0.85,
            zygote_rss: Pages::from_mib_f64(26.0),
            quantum: Pages::from_mib_f64(1.0),
            death_pending_timeout: Nanos::from_secs(1),
        }
    }
}

// ----- launch tracker (§3.2) -----

/// One launch-tracking session (§3.2, eqs. 1-5): a pure state machine fed with the
/// busy + I/O-wait share U of each interval.
///
/// Activity_0 = U_0 at the session's start, then Activity_t = alpha * Activity_{t-1} +
/// (1 - alpha) * U_t at each sample. The threshold is tau_peak times the highest
/// activity of the session so far (eq. 4). Once the activity has been at or below the
/// threshold at tau_N + 1 consecutive samples, that is during tau_N intervals, the
/// session ends at elapsed time T and the launch took T - I * tau_N (eq. 5): with regular
/// samples, the time of the first settled sample, label (a) of the paper's Fig. 4.
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchTracker {
    params: TrackerParams,
    start: Nanos,
    activity: f64,
    peak: f64,
    /// Consecutive settled samples so far (0 while the activity is above the threshold).
    settled_samples: u32,
    finished: bool,
}

impl LaunchTracker {
    /// Starts a session at `now` with U_0 = `u0`, the utilisation when it starts.
    pub fn start(params: TrackerParams, now: Nanos, u0: f64) -> LaunchTracker {
        let activity = u0.clamp(0.0, 1.0);
        LaunchTracker { params, start: now, activity, peak: activity, settled_samples: 0, finished: false }
    }

    /// Feeds the utilisation `u` of the interval ending at `now`. Returns the estimated
    /// launch time T_launch when this sample ends the session, and None otherwise (also
    /// for every sample after the end).
    pub fn sample(&mut self, now: Nanos, u: f64) -> Option<Nanos> {
        if self.finished {
            return None;
        }
        let p = self.params;
        self.activity = p.alpha * self.activity + (1.0 - p.alpha) * u.clamp(0.0, 1.0);
        self.peak = self.peak.max(self.activity);
        // Choice: a sample counts as settled only once the session has seen some
        // activity (peak > 0). The paper's rule would otherwise end a session whose
        // utilisation stays exactly 0 after tau_N intervals with T_launch = 0; here the
        // activity must first rise and then fall ("after having peaked").
        if self.peak > 0.0 && self.activity <= self.peak * p.tau_peak {
            self.settled_samples += 1;
        } else {
            self.settled_samples = 0;
        }
        if self.settled_samples > p.tau_n {
            self.finished = true;
            let elapsed = now.saturating_sub(self.start);
            return Some(elapsed.saturating_sub(Nanos(p.interval.0 * u64::from(p.tau_n))));
        }
        None
    }

    /// The current activity (the moving average), 0..=1.
    pub fn activity(&self) -> f64 {
        self.activity
    }

    /// Whether the session has ended.
    pub fn finished(&self) -> bool {
        self.finished
    }
}

// ----- models (§4.2, §4.3) -----

/// The value of keeping an app cached (eq. 10), in milliseconds of expected launch time
/// saved on the next launch: (T_start - T_resume) * (1 - e^(-1/r)), with r the app's mean
/// reuse distance (eq. 9: the chance that the next launch is this app).
///
/// Choice: a resume measured slower than a start gives a value of 0, not a negative one
/// (killing an app never shortens its next launch); r is at least 1, the smallest reuse
/// distance (§4.2: two consecutive launches of an app are at distance 1).
pub fn app_value_ms(t_start_ms: f64, t_resume_ms: f64, mean_reuse_distance: f64) -> f64 {
    let delta_ms = (t_start_ms - t_resume_ms).max(0.0);
    let r = mean_reuse_distance.max(1.0);
    delta_ms * (1.0 - (-1.0 / r).exp())
}

/// The memory a kill of an app would free (eq. 11): RSS - RSS(Zygote), at least 0.
pub fn app_memory(rss: Pages, zygote_rss: Pages) -> Pages {
    Pages(rss.0.saturating_sub(zygote_rss.0))
}

/// The impending memory demand in pages (eq. 14): RSS_peak(top) - RSS(top) - Free.
/// Negative when free memory covers it.
///
/// Choice: the foreground app's expected allocation RSS_peak - RSS (eq. 13) is taken as
/// 0 when the app is already above its peak or has no peak on record yet (its first
/// launch), so a large current RSS never lowers the demand below -Free; no foreground app
/// (the home screen) also allocates 0.
pub fn memory_demand(rss_peak: Option<Pages>, rss_top: Pages, free: Pages) -> i64 {
    let alloc = rss_peak.map_or(0, |peak| peak.0.saturating_sub(rss_top.0));
    alloc as i64 - free.0 as i64
}

// ----- knapsack solver (§4.4) -----

/// One candidate of the knapsack: the value lost if it is killed and the memory its kill
/// frees, in quanta (1 MiB).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KnapsackItem {
    pub value: f64,
    pub memory_quanta: u64,
}

/// Solves eq. 15 by dynamic programming: maximise the value of the apps kept, subject to
/// their memory fitting in (total memory of the candidates) - `demand_quanta`; returns the
/// indices (ascending) of the apps not kept, the victims. Their memory is at least
/// `demand_quanta`, and their value is the least of all sets that free that much.
///
/// Choices: among sets of equal value the solver keeps the most memory (kills no more
/// than needed, so an app worth 0 dies only when its memory is needed); an app that frees
/// nothing (0 quanta) is always kept; a demand of 0 or less kills nothing; a demand larger
/// than all candidates together kills every candidate that frees anything (the paper does
/// not say; freeing all it can is what the stock LMK's repeated kills would do).
/// Values must be finite and non-negative (see [`app_value_ms`]).
pub fn knapsack_victims(items: &[KnapsackItem], demand_quanta: i64) -> Vec<usize> {
    if demand_quanta <= 0 {
        return Vec::new();
    }
    let total: u64 = items.iter().map(|i| i.memory_quanta).sum();
    let demand = demand_quanta as u64;
    if total < demand {
        return (0..items.len()).filter(|&i| items[i].memory_quanta > 0).collect();
    }
    let capacity = (total - demand) as usize;
    let width = capacity + 1;
    // best[c] = (value, memory) of the best kept set with memory <= c, compared by value
    // and then by memory; keep[i * width + c] records whether item i is kept at capacity c.
    let mut best: Vec<(f64, u64)> = vec![(0.0, 0); width];
    let mut keep = vec![false; items.len() * width];
    for (i, item) in items.iter().enumerate() {
        let w = item.memory_quanta as usize;
        if w == 0 || w > capacity {
            continue;
        }
        for c in (w..=capacity).rev() {
            let (v, m) = best[c - w];
            let cand = (v + item.value, m + w as u64);
            let cur = best[c];
            if cand.0 > cur.0 || (cand.0 == cur.0 && cand.1 > cur.1) {
                best[c] = cand;
                keep[i * width + c] = true;
            }
        }
    }
    let mut victims = Vec::new();
    let mut c = capacity;
    for i in (0..items.len()).rev() {
        let w = items[i].memory_quanta as usize;
        if w == 0 {
            continue;
        }
        if keep[i * width + c] {
            c -= w;
        } else {
            victims.push(i);
        }
    }
    victims.reverse();
    victims
}

// ----- history store (§5, §6.6) -----

/// What SmartLMK remembers about one app (the paper's History Store), kept for the whole
/// run whether or not the app is alive.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AppHistory {
    /// Launches of the app, measured or not.
    pub launches: u64,
    /// Measured starts (cold launches) and the sum of their times.
    pub starts: u64,
    pub start_ms_sum: f64,
    /// Measured resumes (warm launches) and the sum of their times.
    pub resumes: u64,
    pub resume_ms_sum: f64,
    /// EMA of the largest RSS of each foreground period, in pages.
    pub rss_peak_pages: Option<f64>,
    /// Sum and number of reuse distances (launches since the app's previous launch).
    pub reuse_distance_sum: u64,
    pub reuse_distances: u64,
    /// Sequence number of the app's last launch among all launches.
    pub last_launch_seq: Option<u64>,
}

impl AppHistory {
    /// Counts one measured launch: a cold one as a start, a warm one as a resume.
    fn record_launch(&mut self, kind: LaunchKind, time: Nanos) {
        match kind {
            LaunchKind::Cold => {
                self.starts += 1;
                self.start_ms_sum += time.as_ms_f64();
            }
            LaunchKind::Warm => {
                self.resumes += 1;
                self.resume_ms_sum += time.as_ms_f64();
            }
        }
    }
    pub fn mean_start_ms(&self) -> Option<f64> {
        (self.starts > 0).then(|| self.start_ms_sum / self.starts as f64)
    }
    pub fn mean_resume_ms(&self) -> Option<f64> {
        (self.resumes > 0).then(|| self.resume_ms_sum / self.resumes as f64)
    }
    pub fn mean_reuse_distance(&self) -> Option<f64> {
        (self.reuse_distances > 0).then(|| self.reuse_distance_sum as f64 / self.reuse_distances as f64)
    }
}

/// One tracked launch, for the launch-tracking accuracy experiment (§6.2): the tracker's
/// estimate beside the backend's own latency.
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchRecord {
    pub app: AppId,
    pub kind: LaunchKind,
    pub started: Nanos,
    /// The launch tracker's T_launch, if its session ended.
    pub tracked: Option<Nanos>,
    /// The backend's `LaunchDone` latency, if it came.
    pub latency: Option<Nanos>,
}

#[derive(Clone, Debug)]
struct Session {
    app: AppId,
    kind: LaunchKind,
    tracker: LaunchTracker,
    latency: Option<Nanos>,
}

/// A candidate victim with its models evaluated.
#[derive(Clone, Debug)]
struct Candidate {
    app: AppId,
    oom_adj: i32,
    memory: Pages,
    value_ms: f64,
}

/// The SmartLMK policy.
#[derive(Clone, Debug)]
pub struct SmartLmk {
    params: SmartLmkParams,
    history: BTreeMap<AppId, AppHistory>,
    /// Launches seen so far (the clock of reuse distances).
    launch_seq: u64,
    session: Option<Session>,
    /// The foreground app and the largest RSS it has had in this foreground period.
    fg: Option<(AppId, Pages)>,
    /// Victims asked to die and when, until they are reported dead.
    death_pending: BTreeMap<AppId, Nanos>,
    records: Vec<LaunchRecord>,
}

impl SmartLmk {
    pub fn new(params: SmartLmkParams) -> SmartLmk {
        SmartLmk {
            params,
            history: BTreeMap::new(),
            launch_seq: 0,
            session: None,
            fg: None,
            death_pending: BTreeMap::new(),
            records: Vec::new(),
        }
    }

    /// The history store's entry for `app`.
    pub fn history(&self, app: AppId) -> Option<&AppHistory> {
        self.history.get(&app)
    }

    /// Every launch whose tracking session has ended or was cut short, in order.
    pub fn launch_records(&self) -> &[LaunchRecord] {
        &self.records
    }

    /// The value of keeping `app` cached now (eq. 10), in milliseconds.
    ///
    /// Choice (the paper gives no defaults for apps without history): a missing mean
    /// start or resume time is the mean over all measured launches of that kind (of all
    /// apps), or 0 if there is none; a missing mean reuse distance is the number of apps
    /// launched so far, which makes P(next use) ~ 1/n, the paper's "same likelihood" case
    /// of §4.2 (Delta T / n).
    pub fn value_ms(&self, app: AppId) -> f64 {
        let (mut starts, mut start_sum, mut resumes, mut resume_sum, mut seen) = (0u64, 0.0, 0u64, 0.0, 0u64);
        for h in self.history.values() {
            starts += h.starts;
            start_sum += h.start_ms_sum;
            resumes += h.resumes;
            resume_sum += h.resume_ms_sum;
            seen += u64::from(h.launches > 0);
        }
        let pop_start = (starts > 0).then(|| start_sum / starts as f64);
        let pop_resume = (resumes > 0).then(|| resume_sum / resumes as f64);
        let h = self.history.get(&app);
        let t_start = h.and_then(AppHistory::mean_start_ms).or(pop_start).unwrap_or(0.0);
        let t_resume = h.and_then(AppHistory::mean_resume_ms).or(pop_resume).unwrap_or(0.0);
        let r = h.and_then(AppHistory::mean_reuse_distance).unwrap_or(seen.max(1) as f64);
        app_value_ms(t_start, t_resume, r)
    }

    /// Records a launch time in the history store.
    ///
    /// Choice: the launch tracker's estimate is used, as in the paper (§6.2: "we will use
    /// the launch time measured by the proposed scheme"); the backend's `LaunchDone`
    /// latency stands in only when the tracker has no estimate because its session was
    /// cut short (the next launch began, or the app died, before the activity settled).
    /// A launch with neither is not measured (it still counts for reuse distances).
    fn finish_session(&mut self, s: Session, tracked: Option<Nanos>) {
        let time = tracked.or(s.latency);
        self.records.push(LaunchRecord { app: s.app, kind: s.kind, started: s.tracker.start, tracked, latency: s.latency });
        let Some(time) = time else { return };
        self.history.entry(s.app).or_default().record_launch(s.kind, time);
    }

    fn abort_session(&mut self) {
        if let Some(s) = self.session.take() {
            self.finish_session(s, None);
        }
    }

    /// Follows the foreground app: its largest RSS in this foreground period, folded into
    /// the history's peak-RSS EMA when it leaves the foreground (§5: "measured when the
    /// app becomes paused").
    ///
    /// Choice: the sample folded in is the largest RSS seen while the app was in the
    /// foreground (at every event and tick), not the RSS at the moment of the pause, since
    /// eq. 13 wants the peak footprint; with no swap the two differ only by reclaimed file
    /// pages.
    fn sync_foreground(&mut self, view: &dyn SystemView) {
        let now_fg = view.foreground();
        if self.fg.map(|f| f.0) != now_fg {
            if let Some((app, max_rss)) = self.fg.take() {
                let alpha = self.params.rss_peak_alpha;
                let h = self.history.entry(app).or_default();
                let sample = max_rss.0 as f64;
                h.rss_peak_pages = Some(h.rss_peak_pages.map_or(sample, |old| alpha * old + (1.0 - alpha) * sample));
            }
            self.fg = now_fg.map(|app| (app, Pages(0)));
        }
        if let Some((app, max_rss)) = self.fg.as_mut() {
            if let Some(info) = view.app(*app) {
                *max_rss = (*max_rss).max(info.rss);
            }
        }
    }

    fn on_launch_started(&mut self, app: AppId, kind: LaunchKind, view: &dyn SystemView) {
        // Every launch starts a new session (§3.2); one still running is cut short.
        self.abort_session();
        self.launch_seq += 1;
        let seq = self.launch_seq;
        let h = self.history.entry(app).or_default();
        h.launches += 1;
        if let Some(last) = h.last_launch_seq {
            // §4.2: the number of launches between two launches of the app plus one.
            h.reuse_distance_sum += seq - last;
            h.reuse_distances += 1;
        }
        h.last_launch_seq = Some(seq);
        let tracker = LaunchTracker::start(self.params.tracker, view.now(), view.cpu_busy_iowait());
        self.session = Some(Session { app, kind, tracker, latency: None });
    }

    fn on_tick(&mut self, view: &dyn SystemView) {
        let Some(s) = self.session.as_mut() else { return };
        if let Some(t_launch) = s.tracker.sample(view.now(), view.cpu_busy_iowait()) {
            if let Some(s) = self.session.take() {
                self.finish_session(s, Some(t_launch));
            }
        }
    }

    fn on_launch_done(&mut self, app: AppId, latency: Nanos) {
        if let Some(s) = self.session.as_mut().filter(|s| s.app == app) {
            s.latency = Some(latency);
        } else if let Some(r) = self.records.last_mut().filter(|r| r.app == app && r.latency.is_none()) {
            // The tracker finished first; keep the latency beside its estimate.
            r.latency = Some(latency);
        }
    }

    /// The apps SmartLMK may kill, with their models: alive, not the foreground (nor
    /// launching), not perceptible (oom_adj <= 200 or flagged), not unkillable, and not
    /// already dying, in id order.
    fn candidates(&self, view: &dyn SystemView) -> Vec<Candidate> {
        let fg = view.foreground();
        view.app_infos()
            .into_iter()
            .filter(|i| {
                !matches!(i.state, AppState::Dead | AppState::Foreground | AppState::Launching)
                    && Some(i.id) != fg
                    && i.oom_adj > 200
                    && !i.perceptible
                    && !i.unkillable
                    && !self.death_pending.contains_key(&i.id)
            })
            .map(|i| Candidate {
                app: i.id,
                oom_adj: i.oom_adj,
                memory: app_memory(i.rss, self.params.zygote_rss),
                value_ms: self.value_ms(i.id),
            })
            .collect()
    }

    /// The current demand (eq. 14), in pages.
    fn demand_pages(&self, view: &dyn SystemView) -> i64 {
        let free = view.mem().free;
        let Some(top) = view.foreground().and_then(|id| view.app(id)) else {
            return memory_demand(None, Pages(0), free);
        };
        let peak = self.history.get(&top.id).and_then(|h| h.rss_peak_pages).map(|p| Pages(p.round() as u64));
        memory_demand(peak, top.rss, free)
    }

    /// SmartLMK's answer to the kernel's low-memory trigger (§5): choose the victim set
    /// with the knapsack solver and kill it at once.
    ///
    /// Choice: when the modelled demand is 0 or less, the knapsack of eq. 15 keeps every
    /// app, yet the trigger means free memory is below the minfree level of `min_adj`,
    /// where the stock LMK would kill an app. SmartLMK replaces that LMK (§5: invoked
    /// "when the free memory of the system gets below a threshold", it "picks up the least
    /// valuable apps and terminates them"), so if some candidate has an oom_adj the level
    /// allows (>= `min_adj`), the demand becomes one quantum: the least valuable set
    /// freeing at least 1 MiB dies, chosen among all candidates by value as always.
    /// Otherwise the level requires no kill and nothing dies. Candidates are not limited
    /// to oom_adj >= `min_adj`: the point of SmartLMK is to choose among cached apps by
    /// value rather than by recency.
    fn on_low_memory(&mut self, min_adj: i32, view: &dyn SystemView, out: &mut Vec<Action>) {
        let now = view.now();
        let timeout = self.params.death_pending_timeout;
        // Like the stock LMK, wait for the last victims to die (`Event::AppDied`, when a
        // victim's exit has freed its memory) before choosing again.
        self.death_pending.retain(|_, &mut since| now.saturating_sub(since) < timeout);
        if !self.death_pending.is_empty() {
            return;
        }
        let candidates = self.candidates(view);
        let q = self.params.quantum.0.max(1);
        let demand = self.demand_pages(view);
        let demand_quanta = if demand > 0 {
            (demand as u64).div_ceil(q) as i64
        } else if candidates.iter().any(|c| c.oom_adj >= min_adj) {
            1
        } else {
            0
        };
        // Memory is rounded down and demand up, so the victims' modelled memory covers
        // the demand in pages, not only in quanta.
        let items: Vec<KnapsackItem> =
            candidates.iter().map(|c| KnapsackItem { value: c.value_ms, memory_quanta: c.memory.0 / q }).collect();
        let victims: Vec<AppId> = knapsack_victims(&items, demand_quanta).into_iter().map(|i| candidates[i].app).collect();
        if victims.is_empty() {
            return;
        }
        for &v in &victims {
            self.death_pending.insert(v, now);
        }
        out.push(Action::Kill(victims));
    }
}

impl Policy for SmartLmk {
    fn name(&self) -> &'static str {
        "smartlmk"
    }

    fn setup(&self) -> Setup {
        Setup {
            swap: SwapSetup::None,
            lmk: LmkMode::Policy,
            tick: Some(self.params.tracker.interval),
            events: EventMask { launches: true, lifecycle: true, refaults: false, pressure: false },
            ..Setup::stock()
        }
    }

    fn on_event(&mut self, ev: &Event, view: &dyn SystemView, out: &mut Vec<Action>) {
        self.sync_foreground(view);
        match *ev {
            Event::Tick => self.on_tick(view),
            Event::LaunchStarted { app, kind } => self.on_launch_started(app, kind, view),
            Event::LaunchDone { app, latency, .. } => self.on_launch_done(app, latency),
            Event::AppDied { app } => {
                self.death_pending.remove(&app);
                if self.session.as_ref().is_some_and(|s| s.app == app) {
                    self.abort_session();
                }
            }
            Event::LowMemory { min_adj, .. } => self.on_low_memory(min_adj, view, out),
            _ => {}
        }
    }

    /// The History Store (§4.5: it is persistent storage), keyed by app name. A launch
    /// whose tracker has not settled yet but whose backend latency came is included with
    /// that latency, as if its session were cut short now, so that a daemon stopped
    /// mid-session (or a busy system keeping the tracker above its threshold) loses
    /// nothing the backend measured; the policy's own session goes on.
    fn export_state(&self, view: &dyn SystemView) -> Option<String> {
        let mut history = self.history.clone();
        if let Some(s) = self.session.as_ref() {
            if let Some(time) = s.latency {
                history.entry(s.app).or_default().record_launch(s.kind, time);
            }
        }
        let apps: BTreeMap<String, &AppHistory> = history.iter().filter_map(|(id, h)| Some((view.app(*id)?.name, h))).collect();
        serde_json::to_string(&serde_json::json!({ "launch_seq": self.launch_seq, "apps": apps })).ok()
    }

    fn import_state(&mut self, state: &str, view: &dyn SystemView) -> Result<(), String> {
        #[derive(serde::Deserialize)]
        struct Saved {
            launch_seq: u64,
            apps: BTreeMap<String, AppHistory>,
        }
        let saved: Saved = serde_json::from_str(state).map_err(|e| format!("SmartLMK history: {e}"))?;
        let ids: BTreeMap<String, AppId> = view.apps().into_iter().filter_map(|id| Some((view.app(id)?.name, id))).collect();
        self.launch_seq = self.launch_seq.max(saved.launch_seq);
        for (name, h) in saved.apps {
            if let Some(&id) = ids.get(&name) {
                self.history.insert(id, h);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use floe_core::{AppInfo, PriorityClass};

    // ----- launch tracker -----

    /// Feeds `us` at `start + offset + k * I` and returns (end time, T_launch) if the
    /// session ends.
    fn run_trace(params: TrackerParams, start: Nanos, offset: Nanos, u0: f64, us: &[f64]) -> Option<(Nanos, Nanos)> {
        let mut t = LaunchTracker::start(params, start, u0);
        for (k, &u) in us.iter().enumerate() {
            let now = start + offset + Nanos(params.interval.0 * k as u64);
            if let Some(est) = t.sample(now, u) {
                assert!(t.finished());
                return Some((now, est));
            }
        }
        None
    }

    #[test]
    fn tracker_reproduces_the_fig4_example() {
        // Fig. 4's setting: tau_peak = 0.55, tau_N = 5, I = 100 ms. Busy for 0.8 s, then
        // idle: Activity = (1 - 0.9^8) * 0.9^j falls to 0.55 of its peak at j = 6, i.e.
        // at 1400 ms (label (a)); it stays there 5 intervals, ending at 1900 ms (label
        // (b)), and the launch is estimated at 1900 - 5 * 100 = 1400 ms, as in the paper.
        let p = TrackerParams { tau_peak: 0.55, tau_n: 5, ..TrackerParams::default() };
        let mut trace = vec![1.0; 8];
        trace.extend([0.0; 30]);
        let got = run_trace(p, Nanos::ZERO, Nanos::from_ms(100), 0.0, &trace);
        assert_eq!(got, Some((Nanos::from_ms(1900), Nanos::from_ms(1400))));
    }

    #[test]
    fn tracker_table1_noisy_launch_trace() {
        // A launch-shaped trace with Table I's parameters: a busy phase with a dip (the
        // 0.35 sample), then idle with background noise; the session starts at 1 s and
        // samples come 40 ms after each 100 ms boundary. Worked by hand (and in Python):
        // the activity peaks at 0.6602 (threshold 0.3697), first falls to 0.3514 at the
        // sample of 2840 ms, stays settled, and the session ends 17 intervals later at
        // 4540 ms: T = 3540 ms, T_launch = 3540 - 1700 = 1840 ms.
        let busy = [0.7, 0.95, 1.0, 1.0, 0.35, 0.9, 1.0, 1.0, 0.85, 1.0, 0.95, 1.0];
        let mut trace = busy.to_vec();
        for _ in 0..20 {
            trace.extend([0.1, 0.05, 0.08, 0.02]);
        }
        let got = run_trace(TrackerParams::default(), Nanos::from_secs(1), Nanos::from_ms(40), 0.02, &trace);
        assert_eq!(got, Some((Nanos::from_ms(4540), Nanos::from_ms(1840))));
    }

    #[test]
    fn tracker_short_settling_does_not_end_the_session() {
        // Busy 1 s, idle 1 s (settled for only 6 samples, fewer than tau_N + 1 = 18), busy
        // again 1.5 s (a second loading phase), then idle: the launch ends at the second
        // fall, first settled at 4100 ms.
        let mut trace = vec![1.0; 10];
        trace.extend([0.0; 10]);
        trace.extend([1.0; 15]);
        trace.extend([0.0; 40]);
        let got = run_trace(TrackerParams::default(), Nanos::ZERO, Nanos::from_ms(100), 0.0, &trace);
        assert_eq!(got, Some((Nanos::from_ms(5800), Nanos::from_ms(4100))));
    }

    #[test]
    fn tracker_without_a_fall_below_tau_peak_gives_none() {
        // Utilisation that never lets the activity fall to 0.56 of its peak: no estimate.
        let trace: Vec<f64> = (0..600).map(|k| if k % 7 == 3 { 0.6 } else { 0.95 }).collect();
        assert_eq!(run_trace(TrackerParams::default(), Nanos::ZERO, Nanos::from_ms(100), 0.1, &trace), None);
        // A system that stays perfectly idle never peaks: no estimate either.
        assert_eq!(run_trace(TrackerParams::default(), Nanos::ZERO, Nanos::from_ms(100), 0.0, &[0.0; 100]), None);
        // After the end, further samples report nothing (alpha = 0: the activity is U).
        let mut t = LaunchTracker::start(TrackerParams { tau_n: 0, alpha: 0.0, ..TrackerParams::default() }, Nanos::ZERO, 1.0);
        assert_eq!(t.sample(Nanos::from_ms(100), 0.0), Some(Nanos::from_ms(100)));
        assert_eq!(t.sample(Nanos::from_ms(200), 0.0), None);
    }

    // ----- models -----

    #[test]
    fn value_formula() {
        // Delta T = 3000 ms, r = 1: 3000 * (1 - 1/e).
        assert!((app_value_ms(3500.0, 500.0, 1.0) - 3000.0 * (1.0 - (-1.0f64).exp())).abs() < 1e-9);
        // r = 4: 3000 * (1 - e^-0.25) = 663.598 (computed independently in Python).
        assert!((app_value_ms(3500.0, 500.0, 4.0) - 663.5976507857854).abs() < 1e-9);
        // Rarely used apps are worth less; equal use, longer starts are worth more.
        assert!(app_value_ms(3500.0, 500.0, 20.0) < app_value_ms(3500.0, 500.0, 4.0));
        assert!(app_value_ms(5000.0, 500.0, 4.0) > app_value_ms(3500.0, 500.0, 4.0));
        // A resume slower than a start is worth nothing, not less than nothing.
        assert_eq!(app_value_ms(400.0, 600.0, 2.0), 0.0);
    }

    #[test]
    fn memory_and_demand_models() {
        let z = Pages::from_mib_f64(26.0);
        assert_eq!(app_memory(Pages::from_mib_f64(100.0), z), Pages::from_mib_f64(74.0));
        assert_eq!(app_memory(Pages::from_mib_f64(20.0), z), Pages(0));
        // Peak 150, now 100, free 30: 20 short.
        assert_eq!(memory_demand(Some(Pages(150)), Pages(100), Pages(30)), 20);
        // Above its peak: no allocation expected, the demand is -Free.
        assert_eq!(memory_demand(Some(Pages(90)), Pages(100), Pages(30)), -30);
        assert_eq!(memory_demand(None, Pages(100), Pages(30)), -30);
    }

    // ----- knapsack -----

    /// A tiny deterministic PRNG (xorshift64*).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn set_cost(items: &[KnapsackItem], victims: &[usize]) -> (f64, u64) {
        victims.iter().fold((0.0, 0), |(v, m), &i| (v + items[i].value, m + items[i].memory_quanta))
    }

    #[test]
    fn knapsack_is_optimal_against_brute_force() {
        let mut rng = Rng(0x5EED_2016_0047_0001);
        for case in 0..3000 {
            let n = rng.below(10) as usize;
            let items: Vec<KnapsackItem> = (0..n)
                .map(|_| KnapsackItem {
                    // Some apps worth nothing, some tied values, some distinct ones.
                    value: match rng.below(4) {
                        0 => 0.0,
                        1 => 100.0,
                        _ => rng.below(5000) as f64 / 7.0,
                    },
                    memory_quanta: if rng.below(8) == 0 { 0 } else { rng.below(60) },
                })
                .collect();
            let total: u64 = items.iter().map(|i| i.memory_quanta).sum();
            let demand = rng.below(total + 12) as i64 - 2;
            let victims = knapsack_victims(&items, demand);
            assert!(victims.windows(2).all(|w| w[0] < w[1]), "case {case}: sorted, distinct");
            assert!(victims.iter().all(|&i| items[i].memory_quanta > 0), "case {case}: no useless victim");
            let (value, freed) = set_cost(&items, &victims);
            if demand <= 0 {
                assert!(victims.is_empty(), "case {case}");
                continue;
            }
            if total < demand as u64 {
                assert_eq!(freed, total, "case {case}: infeasible demand kills all it can");
                continue;
            }
            assert!(freed >= demand as u64, "case {case}: frees the demand");
            let mut best = f64::INFINITY;
            for mask in 0u32..(1 << n) {
                let set: Vec<usize> = (0..n).filter(|&i| mask & (1 << i) != 0).collect();
                let (v, m) = set_cost(&items, &set);
                if m >= demand as u64 {
                    best = best.min(v);
                }
            }
            assert!((value - best).abs() < 1e-6, "case {case}: {value} vs optimum {best} ({items:?}, demand {demand})");
        }
    }

    #[test]
    fn knapsack_solves_the_papers_motivating_example() {
        // §2.2: apps of 40, 30 and 20 MB taking 4, 3 and 1 s to restart, 50 MB wanted:
        // the stock LMK kills the two largest (7 s); the optimum kills the last two (4 s).
        let items = [
            KnapsackItem { value: 4000.0, memory_quanta: 40 },
            KnapsackItem { value: 3000.0, memory_quanta: 30 },
            KnapsackItem { value: 1000.0, memory_quanta: 20 },
        ];
        assert_eq!(knapsack_victims(&items, 50), vec![1, 2]);
        // On a tie in value, no more memory is killed than needed.
        let tied = [KnapsackItem { value: 0.0, memory_quanta: 40 }, KnapsackItem { value: 0.0, memory_quanta: 10 }];
        assert_eq!(knapsack_victims(&tied, 5), vec![1]);
        assert_eq!(knapsack_victims(&tied, 0), Vec::<usize>::new());
    }

    // ----- the policy on a hand-made view -----

    type View = crate::fake::FakeView;

    fn mib(x: f64) -> Pages {
        Pages::from_mib_f64(x)
    }

    fn new_view() -> View {
        View { free: mib(200.0), ..View::default() }
    }

    impl View {
        fn add(&mut self, i: u16, state: AppState, adj: i32, rss_mib: f64) -> &mut AppInfo {
            let info = AppInfo {
                id: AppId(i),
                name: format!("app{i}"),
                state,
                oom_adj: adj,
                rss: mib(rss_mib),
                swapped: Pages(0),
                saves_context: false,
                priority_class: PriorityClass::Medium,
                perceptible: false,
                unkillable: false,
                swappable: false,
                last_used: Nanos::ZERO,
            };
            self.apps.insert(AppId(i), info);
            self.apps.get_mut(&AppId(i)).expect("just inserted")
        }

        fn set(&mut self, i: u16, state: AppState, adj: i32) {
            if let Some(a) = self.apps.get_mut(&AppId(i)) {
                a.state = state;
                a.oom_adj = adj;
            }
        }
    }

    /// Plays one launch of `app`: `busy_ticks` busy samples, then idle ones until the
    /// tracker ends, and the backend's LaunchDone after the busy phase. The previous
    /// foreground app becomes cached at adj 900.
    fn play_launch(p: &mut SmartLmk, v: &mut View, app: u16, kind: LaunchKind, busy_ticks: u32) {
        let mut out = Vec::new();
        if let Some(prev) = v.fg.filter(|&f| f != AppId(app)) {
            v.set(prev.0, AppState::Cached, 900);
        }
        v.fg = Some(AppId(app));
        v.set(app, AppState::Launching, 0);
        v.util = 0.0;
        p.on_event(&Event::LaunchStarted { app: AppId(app), kind }, v, &mut out);
        let start = v.now;
        for k in 0..(busy_ticks + 40) {
            v.now += Nanos::from_ms(100);
            v.util = if k < busy_ticks { 1.0 } else { 0.0 };
            if k == busy_ticks {
                v.set(app, AppState::Foreground, 0);
                p.on_event(&Event::LaunchDone { app: AppId(app), kind, latency: v.now - start }, v, &mut out);
            }
            p.on_event(&Event::Tick, v, &mut out);
        }
        assert!(out.is_empty());
    }

    #[test]
    fn history_records_tracked_times_reuse_distances_and_peak_rss() {
        let mut p = SmartLmk::new(SmartLmkParams::default());
        let mut v = new_view();
        v.add(1, AppState::Dead, 1001, 0.0);
        v.add(2, AppState::Dead, 1001, 0.0);
        // Launch 1 to 4: 1 (start), 2 (start), 1 (resume), 1 (resume).
        v.apps.get_mut(&AppId(1)).expect("app 1").rss = mib(120.0);
        play_launch(&mut p, &mut v, 1, LaunchKind::Cold, 20);
        v.apps.get_mut(&AppId(2)).expect("app 2").rss = mib(60.0);
        play_launch(&mut p, &mut v, 2, LaunchKind::Cold, 3);
        v.apps.get_mut(&AppId(1)).expect("app 1").rss = mib(100.0);
        play_launch(&mut p, &mut v, 1, LaunchKind::Warm, 3);
        play_launch(&mut p, &mut v, 1, LaunchKind::Warm, 3);
        // Busy k intervals from U_0 = 0, then idle: Activity = (1 - 0.9^k) * 0.9^j falls
        // to 0.56 of its peak at j = 6 idle samples, so the tracker says (k + 6) * 100 ms.
        let h1 = p.history(AppId(1)).expect("app 1 history").clone();
        assert_eq!((h1.launches, h1.starts, h1.resumes), (3, 1, 2));
        assert!((h1.start_ms_sum - 2600.0).abs() < 1e-6, "{h1:?}");
        assert!((h1.resume_ms_sum - 1800.0).abs() < 1e-6, "{h1:?}");
        // Reuse distances: launch 1 -> 3 is 2, launch 3 -> 4 is 1.
        assert_eq!((h1.reuse_distance_sum, h1.reuse_distances), (3, 2));
        assert_eq!(h1.mean_reuse_distance(), Some(1.5));
        // Peak RSS: 120 MiB at its first pause (app 1 is still in the foreground now).
        assert_eq!(h1.rss_peak_pages, Some(mib(120.0).0 as f64));
        // App 2 left the foreground at 60 MiB.
        let h2 = p.history(AppId(2)).expect("app 2 history");
        assert_eq!((h2.starts, h2.resumes, h2.reuse_distances), (1, 0, 0));
        assert_eq!(h2.rss_peak_pages, Some(mib(60.0).0 as f64));
        // The accuracy log has the tracker's estimate beside the backend's latency.
        let recs = p.launch_records();
        assert_eq!(recs.len(), 4);
        assert_eq!(recs[0].tracked, Some(Nanos::from_ms(2600)));
        assert_eq!(recs[0].latency, Some(Nanos::from_ms(2100)));
        // Value of app 1: Delta T = 2600 - 900, r = 1.5. App 2 (start 900 ms) has no
        // resume of its own and borrows the population's mean resume (900 ms): worth 0.
        assert!((p.value_ms(AppId(1)) - app_value_ms(2600.0, 900.0, 1.5)).abs() < 1e-9);
        assert_eq!(p.value_ms(AppId(2)), 0.0);
        // An app never launched borrows both means and r = 2 (the apps launched so far).
        assert!((p.value_ms(AppId(9)) - app_value_ms(2600.0 / 2.0 + 900.0 / 2.0, 900.0, 2.0)).abs() < 1e-9);
        // Pausing app 1 again folds 100 MiB into its EMA: 0.85 * 120 + 0.15 * 100.
        v.fg = None;
        p.on_event(&Event::AppSwitch { from: Some(AppId(1)), to: None }, &v, &mut Vec::new());
        let peak = p.history(AppId(1)).and_then(|h| h.rss_peak_pages).expect("peak");
        assert!((peak - (0.85 * mib(120.0).0 as f64 + 0.15 * mib(100.0).0 as f64)).abs() < 1e-6);
    }

    #[test]
    fn a_cut_short_session_falls_back_to_the_backend_latency() {
        let mut p = SmartLmk::new(SmartLmkParams::default());
        let mut v = new_view();
        v.add(1, AppState::Dead, 1001, 80.0);
        v.add(2, AppState::Dead, 1001, 80.0);
        let mut out = Vec::new();
        v.fg = Some(AppId(1));
        p.on_event(&Event::LaunchStarted { app: AppId(1), kind: LaunchKind::Cold }, &v, &mut out);
        v.util = 1.0;
        for _ in 0..5 {
            v.now += Nanos::from_ms(100);
            p.on_event(&Event::Tick, &v, &mut out);
        }
        p.on_event(&Event::LaunchDone { app: AppId(1), kind: LaunchKind::Cold, latency: Nanos::from_ms(480) }, &v, &mut out);
        // The next launch begins before the activity settles.
        v.fg = Some(AppId(2));
        p.on_event(&Event::LaunchStarted { app: AppId(2), kind: LaunchKind::Cold }, &v, &mut out);
        let h = p.history(AppId(1)).expect("history");
        assert_eq!((h.starts, h.start_ms_sum), (1, 480.0));
        assert_eq!(p.launch_records()[0].tracked, None);
        // App 2 dies mid-launch without a LaunchDone: nothing measured.
        p.on_event(&Event::AppDied { app: AppId(2) }, &v, &mut out);
        assert_eq!(p.history(AppId(2)).map(|h| h.starts), Some(0));
        assert!(out.is_empty());
    }

    /// A view with a big foreground app mid-launch and six background apps, and a policy
    /// whose history says the foreground app peaks at 300 MiB.
    fn pressured() -> (SmartLmk, View) {
        let mut p = SmartLmk::new(SmartLmkParams::default());
        let mut v = new_view();
        v.add(0, AppState::Cached, 900, 300.0);
        v.fg = Some(AppId(0));
        // Record the foreground app's peak: foreground at 300 MiB, then paused.
        p.on_event(&Event::Tick, &v, &mut Vec::new());
        v.fg = None;
        p.on_event(&Event::Tick, &v, &mut Vec::new());
        // Now it is relaunched and has 100 MiB so far.
        v.fg = Some(AppId(0));
        v.set(0, AppState::Launching, 0);
        v.apps.get_mut(&AppId(0)).expect("fg").rss = mib(100.0);
        // Memory per the model is RSS - 26 MiB.
        v.add(1, AppState::Cached, 900, 76.0); // 50 MiB
        v.add(2, AppState::Cached, 910, 56.0); // 30 MiB
        v.add(3, AppState::Cached, 920, 66.0); // 40 MiB
        v.add(4, AppState::Cached, 200, 126.0).perceptible = true; // music: never
        v.add(5, AppState::Cached, 930, 126.0).unkillable = true; // never
        v.add(6, AppState::Frozen, 940, 46.0); // 20 MiB
        v.add(7, AppState::Dead, 1001, 0.0);
        v.free = mib(60.0);
        (p, v)
    }

    fn low_memory(p: &mut SmartLmk, v: &View, min_adj: i32) -> Vec<Action> {
        let mut out = Vec::new();
        p.on_event(&Event::LowMemory { min_adj, free: v.free }, v, &mut out);
        out
    }

    #[test]
    fn history_store_survives_a_restart_under_a_different_numbering() {
        use crate::fake::{app, FakeView};
        let mut v = FakeView::default();
        for i in 1..=2 {
            v.insert(app(i, AppState::Cached, 900));
        }
        let mut p = SmartLmk::new(SmartLmkParams::default());
        p.launch_seq = 7;
        p.history.insert(AppId(1), AppHistory { launches: 3, starts: 1, start_ms_sum: 4000.0, ..Default::default() });
        p.history.insert(
            AppId(2),
            AppHistory { launches: 4, resumes: 2, resume_ms_sum: 900.0, rss_peak_pages: Some(2.5e4), ..Default::default() },
        );
        let saved = p.export_state(&v).unwrap();
        // After the restart the same apps have swapped numbers, and a third is new.
        let mut w = FakeView::default();
        w.insert(AppInfo { name: "app2".into(), ..app(1, AppState::Dead, 1001) });
        w.insert(AppInfo { name: "app1".into(), ..app(2, AppState::Dead, 1001) });
        w.insert(app(3, AppState::Dead, 1001));
        let mut q = SmartLmk::new(SmartLmkParams::default());
        q.import_state(&saved, &w).unwrap();
        assert_eq!(q.history(AppId(2)), p.history(AppId(1)));
        assert_eq!(q.history(AppId(1)), p.history(AppId(2)));
        assert_eq!(q.history(AppId(3)), None);
        assert_eq!(q.launch_seq, 7);
        assert!(q.import_state("{not json", &w).unwrap_err().contains("SmartLMK history"));
    }

    /// A launch whose tracker has not settled when the state is saved (the daemon
    /// stopping, or a busy system holding utilisation above tau_peak) is saved with the
    /// backend's latency; the session itself goes on and, once it settles, counts once.
    #[test]
    fn saved_state_includes_an_open_launch_the_backend_measured() {
        let mut p = SmartLmk::new(SmartLmkParams::default());
        let mut v = new_view();
        v.add(1, AppState::Cached, 900, 80.0);
        let mut out = Vec::new();
        v.fg = Some(AppId(1));
        p.on_event(&Event::LaunchStarted { app: AppId(1), kind: LaunchKind::Warm }, &v, &mut out);
        v.util = 1.0;
        v.now += Nanos::from_ms(100);
        p.on_event(&Event::Tick, &v, &mut out);
        let saved = |p: &SmartLmk, v: &View| -> serde_json::Value { serde_json::from_str(&p.export_state(v).unwrap()).unwrap() };
        // No latency yet: nothing measured to save.
        assert_eq!(saved(&p, &v)["apps"]["app1"]["resumes"], 0);
        p.on_event(&Event::LaunchDone { app: AppId(1), kind: LaunchKind::Warm, latency: Nanos::from_ms(300) }, &v, &mut out);
        let s = saved(&p, &v);
        assert_eq!((s["apps"]["app1"]["resumes"].as_u64(), s["apps"]["app1"]["resume_ms_sum"].as_f64()), (Some(1), Some(300.0)));
        assert_eq!(p.history(AppId(1)).map(|h| h.resumes), Some(0), "the live history waits for the tracker");
        // The activity settles: the tracker's estimate is the one kept, once.
        v.util = 0.0;
        for _ in 0..40 {
            v.now += Nanos::from_ms(100);
            p.on_event(&Event::Tick, &v, &mut out);
        }
        let h = p.history(AppId(1)).expect("history");
        assert_eq!(h.resumes, 1);
        assert_ne!(h.resume_ms_sum, 300.0, "the tracker's estimate, not the backend's");
        assert_eq!(saved(&p, &v)["apps"]["app1"]["resumes"], 1);
    }

    #[test]
    fn kills_the_cheapest_covering_set_at_once_and_never_protected_apps() {
        // Demand = 300 - 100 - 60 = 140 MiB from apps 1, 2, 3, 6 (50 + 30 + 40 + 20 =
        // 140): every killable app must go, in one action; the foreground, perceptible
        // and unkillable apps stay even though they are the largest.
        let (mut p, v) = pressured();
        assert_eq!(low_memory(&mut p, &v, 900), vec![Action::Kill(vec![AppId(1), AppId(2), AppId(3), AppId(6)])]);
        // A demand beyond everything killable kills the same set and nothing else.
        let (mut p, mut v) = pressured();
        v.free = Pages(0);
        assert_eq!(low_memory(&mut p, &v, 0), vec![Action::Kill(vec![AppId(1), AppId(2), AppId(3), AppId(6)])]);
    }

    #[test]
    fn victims_are_chosen_by_value_not_size() {
        // Demand 40 MiB (free 160). With no launch history every app is worth 0, so the
        // least memory that covers 40 MiB goes: app 3 alone (40 MiB).
        let (mut p, mut v) = pressured();
        v.free = mib(160.0);
        assert_eq!(low_memory(&mut p, &v, 900), vec![Action::Kill(vec![AppId(3)])]);
        // Give app 3 (40 MiB) a 9 s start and app 1 (50 MiB) a 6 s one, against 1 s for
        // apps 2 and 6 (all resume in 0.5 s, equally often): the two small cheap apps go
        // together (Delta T 0.5 + 0.5 s), not the one large app that would do alone.
        let (mut p, mut v) = pressured();
        v.free = mib(160.0);
        for (app, start_ms) in [(1, 6000.0), (2, 1000.0), (3, 9000.0), (6, 1000.0)] {
            let h = p.history.entry(AppId(app)).or_default();
            (h.launches, h.starts, h.start_ms_sum, h.resumes, h.resume_ms_sum) = (2, 1, start_ms, 1, 500.0);
            (h.reuse_distance_sum, h.reuse_distances) = (4, 1);
        }
        assert_eq!(low_memory(&mut p, &v, 900), vec![Action::Kill(vec![AppId(2), AppId(6)])]);
    }

    #[test]
    fn without_demand_the_level_decides_whether_one_quantum_is_freed() {
        // Plenty free for the foreground app's growth: demand <= 0.
        let (mut p, mut v) = pressured();
        v.free = mib(250.0);
        // No candidate is at or above the level's min_adj: the stock LMK would kill
        // nothing, and neither does SmartLMK.
        assert_eq!(low_memory(&mut p, &v, 950), Vec::<Action>::new());
        // At a level the candidates fall under, the least valuable set freeing 1 MiB dies:
        // with equal values, the smallest app.
        assert_eq!(low_memory(&mut p, &v, 906), vec![Action::Kill(vec![AppId(6)])]);
    }

    #[test]
    fn waits_for_victims_to_die_before_choosing_again() {
        let (mut p, mut v) = pressured();
        v.free = mib(250.0);
        assert_eq!(low_memory(&mut p, &v, 900), vec![Action::Kill(vec![AppId(6)])]);
        // The trigger fires again before the kill took effect: nothing more.
        assert!(low_memory(&mut p, &v, 900).is_empty());
        // Killed but still exiting (its memory not yet free, its death not yet
        // reported): still nothing.
        v.set(6, AppState::Dead, 1001);
        assert!(low_memory(&mut p, &v, 900).is_empty());
        // Once the victim is reported dead, SmartLMK chooses again.
        p.on_event(&Event::AppDied { app: AppId(6) }, &v, &mut Vec::new());
        assert_eq!(low_memory(&mut p, &v, 900), vec![Action::Kill(vec![AppId(2)])]);
        // A victim the backend never kills is given up on after the timeout.
        assert!(low_memory(&mut p, &v, 900).is_empty());
        v.now += Nanos::from_secs(1);
        assert_eq!(low_memory(&mut p, &v, 900), vec![Action::Kill(vec![AppId(2)])]);
    }

    #[test]
    fn setup_is_stock_android_without_swap_with_the_policy_as_lmk() {
        let p = SmartLmk::new(SmartLmkParams::default());
        assert_eq!(p.name(), "smartlmk");
        let s = p.setup();
        assert_eq!(s.swap, SwapSetup::None);
        assert_eq!(s.lmk, LmkMode::Policy);
        assert_eq!(s.tick, Some(Nanos::from_ms(100)));
        assert!(s.events.launches && s.events.lifecycle);
        assert_eq!(SmartLmkParams::default().zygote_rss, Pages(26 * 256));
    }
}
