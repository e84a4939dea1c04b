//! A run sampled at a fixed step of simulated time, like `vmstat 1`: what memory held
//! at the end of each step and what happened during it (frames, reclaim, refaults,
//! kills, freezes, CPU and flash traffic). The whole run is covered, the part before
//! the workload's measured part included; each sample says which part it is in.

use crate::engine::{RunOptions, Sim, Snapshot};
use crate::{policy_params, Catalog, Device, SimError, Workload};
use floe_core::timeline::mib_of_pages as mib;
use floe_core::{Action, AppId, AppState, Event, EventMask, LaunchKind, Nanos, Policy, RunRecord, Sample, Setup, SystemView};
use std::cell::RefCell;
use std::rc::Rc;

fn ms(ns: u64) -> f64 {
    (ns as f64 / 1e3).round() / 1e3
}

/// The step from `a` to `b`, ending at `end`.
fn between(policy: &str, a: &Snapshot, b: &Snapshot, end: Nanos) -> Sample {
    let secs = (end.0 - a.t.0.min(end.0)) as f64 / 1e9;
    let d = |x: u64, y: u64| y - x;
    let frames = d(a.frames, b.frames);
    Sample {
        policy: policy.to_string(),
        t_s: end.0 as f64 / 1e9,
        measured: Some(b.measuring),
        fg_app: b.fg_app.clone().unwrap_or_default(),
        frames: Some(frames),
        fps: Some(if secs > 0.0 { (frames as f64 / secs * 100.0).round() / 100.0 } else { 0.0 }),
        janky_frames: Some(d(a.janky_frames, b.janky_frames)),
        free_mib: mib(b.free_pages as f64),
        anon_lru_mib: mib(b.anon_lru_pages as f64),
        file_lru_mib: mib(b.file_lru_pages as f64),
        zram_stored_mib: mib(b.zram_stored_pages as f64),
        zram_pool_mib: mib(b.zram_pool_pages as f64),
        flash_swap_mib: mib(b.flash_swap_pages as f64),
        writeback_mib: mib(b.writeback_pages as f64),
        apps_alive: b.apps_alive,
        apps_frozen: b.apps_frozen,
        reclaimed_pages: d(a.reclaimed_pages, b.reclaimed_pages),
        direct_reclaimed_pages: d(a.direct_reclaimed_pages, b.direct_reclaimed_pages),
        reclaimed_anon_pages: Some(d(a.reclaimed_anon_pages, b.reclaimed_anon_pages)),
        refaults_fg_anon: d(a.refaults[1][0], b.refaults[1][0]),
        refaults_fg_file: d(a.refaults[1][1], b.refaults[1][1]),
        refaults_bg_anon: d(a.refaults[0][0], b.refaults[0][0]),
        refaults_bg_file: d(a.refaults[0][1], b.refaults[0][1]),
        kills: d(a.kills, b.kills),
        freezes: d(a.freezes, b.freezes),
        thaws: d(a.thaws, b.thaws),
        cpu_ms_app: Some(ms(d(a.cpu_app_ns, b.cpu_app_ns))),
        cpu_ms_kswapd: Some(ms(d(a.cpu_kswapd_ns, b.cpu_kswapd_ns))),
        cpu_ms_compress: Some(ms(d(a.cpu_compress_ns, b.cpu_compress_ns))),
        flash_read_kib: Some(d(a.flash_read_bytes, b.flash_read_bytes) / 1024),
        flash_write_kib: Some(d(a.flash_write_bytes, b.flash_write_bytes) / 1024),
    }
}

/// Runs like [`crate::run`] and also samples the run every `step` of simulated time,
/// handing each sample to `each` as soon as its step is over (a long run at a fine step
/// is never held in memory); `each` returns false to stop the run there
/// ([`SimError::Stopped`]). The record is the same as [`crate::run`] gives for the same
/// inputs: sampling only reads the state between events.
pub fn run_with_timeline(
    device: &Device,
    workload: &Workload,
    catalog: &Catalog,
    policy: &str,
    opts: &RunOptions,
    step: Nanos,
    each: impl FnMut(Sample) -> bool,
) -> Result<RunRecord, SimError> {
    let p = floe_policies::make_spec(policy).map_err(SimError::Policy)?;
    sampled(device, workload, catalog, policy, p, opts, step, None, each)
}

/// [`run_with_timeline`] with the policy `p` made from the spec `policy`.
#[allow(clippy::too_many_arguments)]
fn sampled(
    device: &Device,
    workload: &Workload,
    catalog: &Catalog,
    policy: &str,
    p: Box<dyn Policy>,
    opts: &RunOptions,
    step: Nanos,
    frames: Option<&mut Vec<(String, f64, f64)>>,
    mut each: impl FnMut(Sample) -> bool,
) -> Result<RunRecord, SimError> {
    if step.0 == 0 {
        return Err(SimError::Policy("timeline step must be longer than 0 s".into()));
    }
    let name = p.name().to_string();
    let mut sim = Sim::try_new(device, workload, catalog, p, opts)?;
    if frames.is_some() {
        sim.log_frames();
    }
    let mut prev = sim.snapshot();
    let mut end = Nanos::ZERO;
    loop {
        end = Nanos(end.0.saturating_add(step.0));
        let more = sim.run_until(end);
        let now = sim.snapshot();
        // The last step ends with the run's last event.
        let step_end = if more { end } else { now.t.max(prev.t) };
        if (more || step_end > prev.t) && !each(between(&name, &prev, &now, step_end)) {
            return Err(SimError::Stopped);
        }
        prev = now;
        prev.t = step_end;
        if !more {
            break;
        }
    }
    if let Some(out) = frames {
        *out = sim.take_frames();
    }
    let mut rec = sim.finish()?;
    policy_params(&mut rec, policy);
    Ok(rec)
}

/// What happened to one app at one moment of a run, as [`run_with_app_events`] records
/// it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppEventKind {
    /// The user asked for the app: its launch begins (cold: no process before).
    LaunchStarted { cold: bool },
    /// Its launch ended.
    LaunchDone,
    /// The app was frozen.
    Frozen,
    /// The app was thawed (by the policy, or by its launch).
    Thawed,
    /// Its process was killed (every death in the simulator is a kill).
    Killed,
    /// It rendered a frame from `t_s` for `dur_us` microseconds (over 16.6 ms: an
    /// interaction alert).
    Frame { dur_us: u64 },
}

/// One app's event at `t_s` simulated seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct AppEvent {
    pub t_s: f64,
    pub app: String,
    pub kind: AppEventKind,
}

/// What the recorder has seen: the events so far, and the freezes and thaws the policy
/// asked for in the last batch, confirmed against the apps' states at the next event.
#[derive(Default)]
struct Seen {
    events: Vec<AppEvent>,
    asked: Vec<(AppId, bool, Nanos)>,
    frozen: Vec<AppId>,
}

/// A policy that passes every event it wanted to `inner` and answers with `inner`'s
/// actions, and records the apps' launches, deaths, freezes and thaws. It hears of
/// launches and deaths whatever `inner` wants; the engine only delivers them (no event
/// changes the run), so the run is the one `inner` alone makes.
struct Recorder {
    inner: Box<dyn Policy>,
    wants: EventMask,
    seen: Rc<RefCell<Seen>>,
}

impl Recorder {
    fn wanted(&self, ev: &Event) -> bool {
        let m = self.wants;
        match ev {
            Event::Tick | Event::LowMemory { .. } => true,
            Event::Refault { .. } => m.refaults,
            Event::Pressure { .. } | Event::ReclaimFailed { .. } => m.pressure,
            Event::AppSwitch { .. } | Event::LaunchStarted { .. } | Event::LaunchDone { .. } => m.launches,
            Event::AppStarted { .. } | Event::AppDied { .. } => m.lifecycle,
        }
    }
}

fn secs(t: Nanos) -> f64 {
    t.0 as f64 / 1e9
}

impl Policy for Recorder {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn setup(&self) -> Setup {
        let mut s = self.inner.setup();
        s.events.launches = true;
        s.events.lifecycle = true;
        s
    }

    fn on_event(&mut self, ev: &Event, view: &dyn SystemView, out: &mut Vec<Action>) {
        let now = view.now();
        let name = |a: AppId| view.app(a).map(|i| i.name).unwrap_or_else(|| format!("app{}", a.0));
        {
            let mut seen = self.seen.borrow_mut();
            let seen = &mut *seen;
            // The last batch's freezes and thaws took effect where the app's state says so
            // (the engine applies them as the batch ends, at the same time).
            for (app, freeze, t) in std::mem::take(&mut seen.asked) {
                let frozen = view.app(app).is_some_and(|i| i.state == AppState::Frozen);
                let was = seen.frozen.contains(&app);
                if freeze && frozen && !was {
                    seen.frozen.push(app);
                    seen.events.push(AppEvent { t_s: secs(t), app: name(app), kind: AppEventKind::Frozen });
                } else if !freeze && !frozen && was {
                    seen.frozen.retain(|&a| a != app);
                    seen.events.push(AppEvent { t_s: secs(t), app: name(app), kind: AppEventKind::Thawed });
                }
            }
            let mut push = |app: AppId, kind| seen.events.push(AppEvent { t_s: secs(now), app: name(app), kind });
            match *ev {
                Event::LaunchStarted { app, kind } => push(app, AppEventKind::LaunchStarted { cold: kind == LaunchKind::Cold }),
                Event::LaunchDone { app, .. } => push(app, AppEventKind::LaunchDone),
                Event::AppDied { app } => push(app, AppEventKind::Killed),
                _ => {}
            }
            match *ev {
                // A frozen app's launch thaws it, and a kill ends its freeze.
                Event::LaunchStarted { app, .. } | Event::AppDied { app } if seen.frozen.contains(&app) => {
                    seen.frozen.retain(|&a| a != app);
                    seen.events.push(AppEvent { t_s: secs(now), app: name(app), kind: AppEventKind::Thawed });
                }
                _ => {}
            }
        }
        if !self.wanted(ev) {
            return;
        }
        let before = out.len();
        self.inner.on_event(ev, view, out);
        let mut seen = self.seen.borrow_mut();
        for a in &out[before..] {
            match *a {
                Action::Freeze(app) => seen.asked.push((app, true, now)),
                Action::Thaw(app) => seen.asked.push((app, false, now)),
                _ => {}
            }
        }
    }

    fn export_state(&self, view: &dyn SystemView) -> Option<String> {
        self.inner.export_state(view)
    }

    fn import_state(&mut self, state: &str, view: &dyn SystemView) -> Result<(), String> {
        self.inner.import_state(state, view)
    }
}

/// Runs like [`run_with_timeline`] (the same record and samples) and also records each
/// app's launches (start and end), kills, freezes, thaws and frames, in time order. Freezes and
/// thaws are the policy's that took effect, and the thaw a frozen app's launch or kill
/// brings (a freeze in the run's very last batch of events, with no event after it to
/// confirm it, is left out). An app frozen at the end has no thaw.
pub fn run_with_app_events(
    device: &Device,
    workload: &Workload,
    catalog: &Catalog,
    policy: &str,
    opts: &RunOptions,
    step: Nanos,
    each: impl FnMut(Sample) -> bool,
) -> Result<(RunRecord, Vec<AppEvent>), SimError> {
    let inner = floe_policies::make_spec(policy).map_err(SimError::Policy)?;
    let seen = Rc::new(RefCell::new(Seen::default()));
    let wants = inner.setup().events;
    let recorder = Recorder { inner, wants, seen: Rc::clone(&seen) };
    let mut frames = Vec::new();
    let rec = sampled(device, workload, catalog, policy, Box::new(recorder), opts, step, Some(&mut frames), each)?;
    let mut events = seen.take().events;
    events.extend(frames.into_iter().map(|(app, start, end)| AppEvent {
        t_s: start,
        app,
        kind: AppEventKind::Frame { dur_us: ((end - start) * 1e6).round() as u64 },
    }));
    // Frames are logged as they end; the merged list is in time order (stable: what
    // happened at one moment keeps its order).
    events.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    Ok((rec, events))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recording the apps' events leaves the run as it was (the same record and samples
    /// as a plain run), and the events add up to the run's counts: a kill each, a
    /// freeze each, every launch that began and ended, each freeze closed by one thaw
    /// at most.
    #[test]
    fn app_events_leave_the_run_as_it_was_and_add_up() {
        let cat = Catalog::embedded().unwrap();
        let mut wl = Workload::load("ice-video-call", &cat).unwrap();
        wl.use_s = 300.0;
        let dev = Device::load("p20").unwrap();
        let opts = RunOptions { seed: 1, ..Default::default() };
        let step = Nanos::from_secs_f64(1.0);
        for policy in ["lru-cfs", "ice"] {
            let mut plain = Vec::new();
            let rec0 = run_with_timeline(&dev, &wl, &cat, policy, &opts, step, |s| {
                plain.push(s);
                true
            })
            .unwrap();
            let mut samples = Vec::new();
            let (rec, ev) = run_with_app_events(&dev, &wl, &cat, policy, &opts, step, |s| {
                samples.push(s);
                true
            })
            .unwrap();
            assert_eq!(rec, rec0, "{policy}");
            assert_eq!(samples, plain, "{policy}");
            let n = |k: AppEventKind| ev.iter().filter(|e| e.kind == k).count() as u64;
            let started = ev.iter().filter(|e| matches!(e.kind, AppEventKind::LaunchStarted { .. })).count() as u64;
            assert_eq!(n(AppEventKind::Killed), samples.iter().map(|s| s.kills).sum::<u64>(), "{policy}");
            assert_eq!(n(AppEventKind::Frozen), samples.iter().map(|s| s.freezes).sum::<u64>(), "{policy}");
            assert!(started >= rec.launches.len() as u64 && started > 0, "{policy}");
            assert!(n(AppEventKind::LaunchDone) <= started && n(AppEventKind::LaunchDone) + 1 >= started, "{policy}");
            assert!(n(AppEventKind::Thawed) <= n(AppEventKind::Frozen), "{policy}");
            assert!(ev.windows(2).all(|w| w[0].t_s <= w[1].t_s), "in time order");
            let frames = ev.iter().filter(|e| matches!(e.kind, AppEventKind::Frame { .. })).count() as u64;
            assert_eq!(frames, samples.iter().filter_map(|s| s.frames).sum::<u64>(), "{policy}: a frame each");
            assert!(ev.iter().all(|e| !matches!(e.kind, AppEventKind::Frame { .. }) || e.app == "whatsapp"), "{policy}");
            if policy == "ice" {
                assert!(n(AppEventKind::Frozen) > 0, "Ice freezes the cached apps");
            }
        }
    }
}
