//! Integration tests of floe-sim: determinism, a golden snapshot, invariants under
//! random runs, the seeds' baseline observations, and the data files' sources.

use floe_core::{Nanos, RunRecord};
use floe_sim::pages::{Loc, PageTable};
use floe_sim::{Catalog, Device, RunOptions, Sim, Workload};
use proptest::prelude::*;

const TD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata");

fn tiny() -> (Device, Workload, Catalog) {
    let cat = Catalog::load(&format!("{TD}/tiny-apps.toml")).unwrap();
    let wl = Workload::load(&format!("{TD}/tiny-workload.toml"), &cat).unwrap();
    // The workload names its device by a path relative to its own directory.
    let dev = wl.default_device().unwrap();
    assert_eq!(dev, Device::load(&format!("{TD}/tiny-device.toml")).unwrap());
    (dev, wl, cat)
}

fn run_tiny(policy: &str, seed: u64) -> RunRecord {
    let (dev, wl, cat) = tiny();
    floe_sim::run(&dev, &wl, &cat, policy, &RunOptions { seed, ..Default::default() }).unwrap()
}

/// A workload with background activity off (SmartLMK §6.1 turned sync and updates off)
/// runs no cached app's wakeup: no background refault and less app CPU than the same run
/// with it on.
#[test]
fn background_activity_off_stops_cached_apps_waking() {
    let (dev, mut wl, cat) = tiny();
    let run = |wl: &Workload, seed| floe_sim::run(&dev, wl, &cat, "lru-cfs", &RunOptions { seed, ..Default::default() }).unwrap().metrics;
    let on = run(&wl, 1);
    wl.background_activity = false;
    let off = run(&wl, 1);
    assert!(on.refaults_bg_anon + on.refaults_bg_file > 0, "{on:?}");
    assert_eq!(off.refaults_bg_anon + off.refaults_bg_file, 0, "{off:?}");
    assert!(off.cpu_ms_app < on.cpu_ms_app, "{} vs {}", off.cpu_ms_app, on.cpu_ms_app);
}

/// A background window ends each cached app's wakeups that long after it left the
/// foreground: none at all with 0 s, fewer background refaults with a window shorter
/// than the run, the same run as without one when it outlasts the run; the window is
/// kept in the run's parameters, and a window that is no time span is refused.
#[test]
fn a_background_window_ends_cached_apps_activity() {
    let (dev, wl, cat) = tiny();
    let run = |w: Option<f64>| floe_sim::run(&dev, &wl, &cat, "lru-cfs", &RunOptions { seed: 1, bg_window_s: w, ..Default::default() });
    let bg = |r: &RunRecord| r.metrics.refaults_bg_anon + r.metrics.refaults_bg_file;
    let (never, none, short, long) = (run(None).unwrap(), run(Some(0.0)).unwrap(), run(Some(20.0)).unwrap(), run(Some(3600.0)).unwrap());
    assert_eq!(bg(&none), 0, "{:?}", none.metrics);
    assert!(none.metrics.cpu_ms_app < short.metrics.cpu_ms_app);
    assert!(0 < bg(&short) && bg(&short) < bg(&never), "{} of {}", bg(&short), bg(&never));
    assert_eq!(long.metrics, never.metrics, "a window longer than the run changes nothing");
    assert_eq!(short.params.get("bg_window_s"), Some(&floe_core::Param::Float(20.0)));
    assert!(!never.params.contains_key("bg_window_s"));
    for bad in [-1.0, f64::NAN, f64::INFINITY] {
        let e = run(Some(bad)).unwrap_err().to_string();
        assert!(e.contains("a background window of") && e.contains("must be 0 to 604800 s"), "{e}");
    }
}

/// Each launch records the share of the cores busy while it ran and the flash it read
/// per second: the launch's own thread keeps part of a core busy, and a cold launch reads
/// its code from flash.
#[test]
fn launches_record_their_cpu_share_and_flash_throughput() {
    let r = run_tiny("lru-cfs", 1);
    assert!(!r.launches.is_empty());
    for l in &r.launches {
        assert!(l.cpu_share > 0.0 && l.cpu_share <= 1.0 + 1e-9, "{l:?}");
        assert!(l.read_bytes_s >= 0.0, "{l:?}");
    }
    assert!(r.launches.iter().filter(|l| l.kind == floe_core::LaunchKind::Cold).all(|l| l.read_bytes_s > 0.0));
}

#[test]
fn same_seed_gives_identical_json() {
    for policy in ["android-lmk", "lru-cfs", "swap-all", "zswap"] {
        let a = serde_json::to_string(&run_tiny(policy, 7)).unwrap();
        let b = serde_json::to_string(&run_tiny(policy, 7)).unwrap();
        assert_eq!(a, b, "{policy} is not deterministic");
    }
    // And the seed matters.
    assert_ne!(serde_json::to_string(&run_tiny("lru-cfs", 7)).unwrap(), serde_json::to_string(&run_tiny("lru-cfs", 8)).unwrap());
}

/// `shuffle_rounds` launches every app of the sequence once per round, in a seeded order
/// that differs from the listed one, and leaves a run without it as it was.
#[test]
fn shuffled_rounds_launch_each_app_once_per_round_in_a_seeded_order() {
    let (dev, wl, cat) = tiny();
    let run = |seed, shuffle_rounds| {
        floe_sim::run(&dev, &wl, &cat, "lru-cfs", &RunOptions { seed, shuffle_rounds, ..Default::default() }).unwrap()
    };
    let order = |r: &RunRecord, round: u32| r.launches.iter().filter(|l| l.round == round).map(|l| l.app.clone()).collect::<Vec<_>>();
    let (listed, shuffled) = (run(1, false), run(1, true));
    assert!(wl.rounds >= 3 && wl.sequence.len() >= 3, "the fixture needs rounds and apps to shuffle");
    let mut moved = 0;
    for round in 0..wl.rounds {
        assert_eq!(order(&listed, round), wl.sequence, "listed order, round {round}");
        let mut got = order(&shuffled, round);
        moved += (got != wl.sequence) as u32;
        got.sort();
        let mut want = wl.sequence.clone();
        want.sort();
        assert_eq!(got, want, "round {round} launches each app once");
    }
    assert!(moved > 0, "some round is not in the listed order");
    assert_eq!(shuffled.params.get("shuffle_rounds"), Some(&floe_core::Param::Bool(true)));
    assert!(!listed.params.contains_key("shuffle_rounds"));
    assert_eq!(serde_json::to_string(&run(1, true)).unwrap(), serde_json::to_string(&shuffled).unwrap(), "deterministic");
    assert_ne!(order(&run(2, true), 1), order(&shuffled, 1), "the seed draws the order");
}

#[test]
fn golden_tiny_lru_cfs() {
    insta::assert_json_snapshot!(run_tiny("lru-cfs", 1));
}

#[test]
fn golden_tiny_android_lmk() {
    insta::assert_json_snapshot!(run_tiny("android-lmk", 1));
}

#[test]
fn stock_baselines_behave_as_their_setup_says() {
    let lmk_run = run_tiny("android-lmk", 3);
    // The stock killers decide every kill.
    let by = lmk_run.kills_by;
    assert!(by.lmk > 0 && by.lmk + by.oom == lmk_run.metrics.kills && by.policy + by.sl1_room == 0, "{by:?}");
    let lmk = lmk_run.metrics;
    let zram = run_tiny("lru-cfs", 3).metrics;
    let flash = run_tiny("swap-all", 3).metrics;
    // Without swap nothing is compressed or written, and memory comes from kills.
    assert_eq!(lmk.zram_stored_bytes, 0);
    assert_eq!(lmk.flash_write_bytes, 0);
    assert_eq!(lmk.refaults_fg_anon + lmk.refaults_bg_anon, 0);
    assert!(lmk.kills > zram.kills);
    // zram compresses; flash swap writes to flash.
    assert!(zram.cpu_ms_compress > 0.0 && zram.flash_write_bytes == 0);
    assert!(flash.flash_write_bytes > 0 && flash.cpu_ms_compress == 0.0);
    // Swap keeps apps alive: more warm launches than vanilla LMK.
    assert!(zram.launches_warm > lmk.launches_warm);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// Every page is in exactly one place, lists are well formed and swap accounting
    /// matches, at many points of random runs.
    #[test]
    fn page_conservation_in_random_runs(seed in any::<u64>(), policy in 0usize..10, mem in 350.0f64..900.0, bg in 0usize..4) {
        let (mut dev, mut wl, cat) = tiny();
        dev.memory.app_mem_mib = mem;
        wl.rounds = 2;
        wl.use_s = 1.5;
        let name = ["android-lmk", "lru-cfs", "swap-all", "zswap", "llr", "llr-hpl", "seal:sl1=64:sl2=128", "asap", "ice", "ice-plus"][policy];
        let opts = RunOptions { seed, bg_apps: Some(bg), ..Default::default() };
        let mut sim = Sim::new(&dev, &wl, &cat, floe_policies::make_spec(name).unwrap(), &opts);
        let mut t = Nanos::ZERO;
        loop {
            t += Nanos::from_ms(250);
            let more = sim.run_until(t);
            if let Err(e) = sim.check_invariants() {
                prop_assert!(false, "{name} seed {seed} at {t}: {e}");
            }
            if !more { break; }
        }
    }

    /// The page table's lists behave like a reference model of ordered lists under
    /// random moves and rotations.
    #[test]
    fn lru_lists_match_a_reference_model(ops in proptest::collection::vec((0u32..40, 0usize..7, any::<bool>()), 1..400)) {
        let (mut t, _) = PageTable::new(&[(20, 0), (0, 20)]);
        let mut model: Vec<Vec<u32>> = vec![Vec::new(); 7]; // index by Loc; front = head
        let mut loc_of = vec![0usize; 40];
        for (p, to, rotate) in ops {
            let anon = p < 20;
            // Keep kinds on their own lists, as the engine does.
            let to = match (Loc::ALL[to], anon) {
                (Loc::InactiveFile | Loc::ActiveFile, true) => Loc::InactiveAnon,
                (Loc::InactiveAnon | Loc::ActiveAnon | Loc::Zram | Loc::Flash, false) => Loc::InactiveFile,
                (l, _) => l,
            };
            if rotate && t.loc(p) == to {
                t.rotate(p);
            } else {
                t.move_to(p, to);
            }
            model[loc_of[p as usize]].retain(|&q| q != p);
            loc_of[p as usize] = to as usize;
            if !matches!(to, Loc::Absent | Loc::Flash) {
                model[to as usize].insert(0, p);
            }
            prop_assert!(t.check().is_ok(), "{:?}", t.check());
        }
        for l in [Loc::InactiveAnon, Loc::ActiveAnon, Loc::InactiveFile, Loc::ActiveFile, Loc::Zram] {
            // Walk from the tail (oldest) to the head.
            let mut walked = Vec::new();
            let mut cur = t.tail(l);
            while let Some(p) = cur {
                walked.push(p);
                cur = t.newer(p);
            }
            walked.reverse();
            prop_assert_eq!(&walked, &model[l as usize]);
        }
    }
}

/// Every numeric line of the embedded data carries its source (or the control it is
/// calibrated on).
#[test]
fn every_number_in_data_has_a_source() {
    let files = floe_sim::config::embedded_files();
    assert!(files.iter().any(|(p, _)| *p == "apps.toml"), "data/apps.toml is embedded");
    let mut missing = Vec::new();
    for (path, src) in files {
        for (i, line) in src.lines().enumerate() {
            let code = line.split('#').next().unwrap_or("");
            let Some((_, value)) = code.split_once('=') else {
                continue;
            };
            let v = value.trim();
            let numeric = v.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '.')
                || (v.starts_with('[') && v.contains(|c: char| c.is_ascii_digit()) && !v.contains('"'));
            let sourced = ["# src:", "# derived:", "# assumption:", "# calibrated:"].iter().any(|m| line.contains(m));
            if numeric && !sourced {
                missing.push(format!("data/{path}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    assert!(missing.is_empty(), "numbers without a source:\n{}", missing.join("\n"));
}

/// Every embedded device and workload loads and validates.
#[test]
fn embedded_data_loads() {
    let cat = Catalog::embedded().unwrap();
    let devices = floe_sim::config::embedded_names("devices");
    assert!(devices.len() >= 7, "{devices:?}");
    for d in devices {
        Device::load(d).unwrap_or_else(|e| panic!("{e}"));
    }
    let workloads = floe_sim::config::embedded_names("workloads");
    assert!(workloads.len() >= 16, "{workloads:?}");
    for w in workloads {
        let wl = Workload::load(w, &cat).unwrap_or_else(|e| panic!("{e}"));
        wl.default_device().unwrap_or_else(|e| panic!("{w}: {e}"));
    }
}

/// One run of embedded data; background apps are drawn with the seed, as Ice's
/// evaluation re-draws them each round.
fn embedded_run_seed(device: &str, workload: &str, policy: &str, bg_apps: Option<usize>, seed: u64) -> floe_core::Metrics {
    let cat = Catalog::embedded().unwrap();
    let wl = Workload::load(workload, &cat).unwrap();
    let dev = Device::load(device).unwrap();
    floe_sim::run(&dev, &wl, &cat, policy, &RunOptions { seed, bg_apps, draw_bg: true, ..Default::default() }).unwrap().metrics
}

fn embedded_run(device: &str, workload: &str, policy: &str, bg_apps: Option<usize>) -> floe_core::Metrics {
    embedded_run_seed(device, workload, policy, bg_apps, 1)
}

/// Ice Fig. 2's observation: cached background apps refault pages that reclaim took,
/// and with none cached there is nothing to refault. Like Ice, which re-draws the
/// background apps each round, this sums over several draws (seeds).
#[test]
fn ice_background_apps_refault_under_lru_cfs() {
    let (mut bg0, mut bg8, mut rec0, mut rec8) = (0, 0, 0, 0);
    for seed in 1..=4 {
        let none = embedded_run_seed("p20", "ice-video-call", "lru-cfs", Some(0), seed);
        let eight = embedded_run_seed("p20", "ice-video-call", "lru-cfs", Some(8), seed);
        bg0 += none.refaults_bg_anon + none.refaults_bg_file;
        bg8 += eight.refaults_bg_anon + eight.refaults_bg_file;
        rec0 += none.reclaimed_pages;
        rec8 += eight.reclaimed_pages;
    }
    assert!(bg8 > 10_000, "8 BG apps: {bg8} BG refaults over 4 draws");
    assert!(bg8 > 10 * bg0.max(1), "BG refaults {bg8} vs {bg0}");
    assert!(rec8 > rec0, "reclaimed {rec8} vs {rec0}");
}

/// Ice Fig. 1 / Fig. 2 on the workload's defaults: the fixed set of eight apps Ice
/// cached for its motivation run brings reclaim and background refaults that a run
/// with nothing cached does not have; more apps than the set holds are drawn from the
/// pool, and --draw-bg replaces the set with a seeded draw.
#[test]
fn ice_motivation_runs_cache_the_papers_fixed_background_set() {
    let cat = Catalog::embedded().unwrap();
    let wl = Workload::load("ice-video-call", &cat).unwrap();
    let dev = Device::load("p20").unwrap();
    let run = |bg_apps: usize, draw_bg: bool, seed: u64| {
        floe_sim::run(&dev, &wl, &cat, "lru-cfs", &RunOptions { seed, bg_apps: Some(bg_apps), draw_bg, ..Default::default() }).unwrap()
    };
    let set = |r: &floe_core::RunRecord| match r.params.get("bg_set") {
        Some(floe_core::Param::Text(s)) => s.clone(),
        other => panic!("bg_set {other:?}"),
    };
    let fixed = wl.background.as_ref().unwrap().fixed.join(",");
    let (none, eight) = (run(0, false, 1), run(8, false, 1));
    assert_eq!(set(&eight), fixed);
    assert_eq!(set(&none), "");
    let bg = |m: &floe_core::Metrics| m.refaults_bg_anon + m.refaults_bg_file;
    assert!(bg(&eight.metrics) > 1_000 && bg(&none.metrics) == 0, "BG refaults {} vs {}", bg(&eight.metrics), bg(&none.metrics));
    // With nothing cached only kswapd's high-order wakeups reclaim (Fig. 2(a)'s BG-null:
    // 76 pages), some tens of pages each.
    let (r8, r0) = (eight.metrics.reclaimed_pages, none.metrics.reclaimed_pages);
    assert!(r8 > 10_000 && r0 < 1_000 && r8 > 100 * r0.max(1), "reclaimed {r8} vs {r0}");
    // The set does not depend on the seed; a draw does.
    assert_eq!(set(&run(8, false, 2)), fixed);
    let three = set(&run(3, false, 1));
    assert_eq!(three, wl.background.as_ref().unwrap().fixed[..3].join(","));
    let ten = set(&run(10, false, 1));
    assert!(ten.starts_with(&fixed) && ten.split(',').count() == 10, "{ten}");
    let (d1, d2) = (set(&run(8, true, 1)), set(&run(8, true, 2)));
    assert!(d1 != fixed && d1 != d2, "draws {d1} / {d2}");
    assert_eq!(eight.params.get("bg_fixed"), Some(&floe_core::Param::Bool(true)));
    assert_eq!(run(8, true, 1).params.get("bg_fixed"), Some(&floe_core::Param::Bool(false)));
}

/// Ice's BG-cputester (docs/MODEL.md, "CPU"): cputester's threads cost a scenario
/// frames through the cores it takes from them, and how many turns on the spread of
/// the frames' work. The call's frames fill most of a vsync and lose more the less
/// their work spreads; scrolling's short frames keep a vsync's slack at any spread.
#[test]
fn cputester_costs_the_frames_that_fill_the_vsync_more_the_less_they_spread() {
    let cat = Catalog::embedded().unwrap();
    let dev = Device::load("p20").unwrap();
    let loss = |workload: &str, cv: f64| {
        let mut wl = Workload::load(workload, &cat).unwrap();
        wl.foreground.as_mut().unwrap().frame_cpu_cv = Some(cv);
        wl.use_s = 120.0;
        let fps = |cputester_pct: Option<f64>| -> f64 {
            (1..=2)
                .map(|seed| {
                    let opts = RunOptions { seed, bg_apps: Some(0), cputester_pct, ..Default::default() };
                    floe_sim::run(&dev, &wl, &cat, "lru-cfs", &opts).unwrap().metrics.fps
                })
                .sum()
        };
        let (null, cputester) = (fps(None), fps(Some(20.0)));
        100.0 * (null - cputester) / null
    };
    let (call_narrow, call_wide) = (loss("ice-video-call", 0.1), loss("ice-video-call", 0.3));
    assert!(call_wide > 3.0, "the call loses {call_wide:.1} % of its frames at a spread of 0.3");
    assert!(call_narrow > call_wide + 2.0, "the call loses {call_narrow:.1} % at 0.1 against {call_wide:.1} % at 0.3");
    for cv in [0.1, 0.3] {
        let scrolling = loss("ice-scrolling", cv);
        assert!(scrolling.abs() < 1.0, "scrolling loses {scrolling:.2} % at a spread of {cv}");
    }
}

/// SEAL Fig. 2/3's trade-off: flash swap keeps more apps cached than vanilla LMK, and
/// pays for it with slower warm launches. Each round in a fresh order, as `floe
/// experiment seal` runs it: with Table I's order every round, Android 9's killer takes
/// each app just before its turn and neither caches any.
#[test]
fn seal_swap_all_caches_more_but_launches_slower() {
    let cat = Catalog::embedded().unwrap();
    let (wl, dev) = (Workload::load("seal-30apps", &cat).unwrap(), Device::load("hikey970").unwrap());
    let run = |policy| {
        floe_sim::run(&dev, &wl, &cat, policy, &RunOptions { seed: 1, shuffle_rounds: true, ..Default::default() }).unwrap().metrics
    };
    let (lmk, swap) = (run("android-lmk"), run("swap-all"));
    assert!(swap.caching_capability > 2.0 * lmk.caching_capability, "caching {} vs {}", swap.caching_capability, lmk.caching_capability);
    assert!(swap.switch_ms_mean > 1.5 * lmk.switch_ms_mean, "warm launch {} vs {} ms", swap.switch_ms_mean, lmk.switch_ms_mean);
    assert!(swap.kills < lmk.kills);
}

/// A test policy: records what it hears and freezes every app that refaults in the
/// background, so the dispatch and the freezer can be checked end to end.
struct Recorder {
    seen: std::rc::Rc<std::cell::RefCell<Vec<String>>>,
}

impl floe_core::Policy for Recorder {
    fn name(&self) -> &'static str {
        "test-recorder"
    }
    fn setup(&self) -> floe_core::Setup {
        floe_core::Setup { swap: floe_core::SwapSetup::Zram, events: floe_core::EventMask::ALL, ..floe_core::Setup::stock() }
    }
    fn on_event(&mut self, ev: &floe_core::Event, view: &dyn floe_core::SystemView, out: &mut Vec<floe_core::Action>) {
        use floe_core::{AppState, Event};
        let tag = format!("{ev:?}");
        self.seen.borrow_mut().push(tag.split([' ', '{', '(']).next().unwrap().to_string());
        if let Event::Refault { app, fg: false, .. } = ev {
            let info = view.app(*app).unwrap();
            assert_ne!(view.foreground(), Some(*app), "a background refault names the foreground app");
            if info.state == AppState::Cached {
                out.push(floe_core::Action::Freeze(*app));
            }
        }
        if let Event::LaunchStarted { app, .. } = ev {
            out.push(floe_core::Action::Thaw(*app));
        }
    }
}

#[test]
fn policies_hear_events_and_their_actions_take_effect() {
    let (dev, wl, cat) = tiny();
    let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let policy = Box::new(Recorder { seen: seen.clone() });
    let rec = Sim::new(&dev, &wl, &cat, policy, &RunOptions { seed: 5, ..Default::default() }).run();
    let seen = seen.borrow();
    for kind in ["LaunchStarted", "LaunchDone", "AppSwitch", "AppStarted", "Refault", "Pressure"] {
        assert!(seen.iter().any(|s| s == kind), "never heard {kind}: {:?}", seen.iter().take(20).collect::<Vec<_>>());
    }
    let m = rec.metrics;
    assert!(m.freezes > 0, "background refaults froze nothing");
    // Every app the policy froze and then launched was thawed first; launches all finished.
    assert!(m.thaws > 0);
    assert_eq!(m.launches_cold + m.launches_warm, 9);
    assert_eq!(rec.policy, "test-recorder");
}

/// Each app's part of a run (`RunRecord::apps`) adds up to the run's own counters:
/// refaults, freezes, thaws, kills and launches entirely (the system's refaults are
/// counted apart), reclaimed pages together with the system's; under Ice the apps
/// frozen are apps that refaulted, and the foreground is never one of them.
#[test]
fn the_apps_parts_add_up_to_the_run() {
    for policy in ["lru-cfs", "ice"] {
        let cat = Catalog::embedded().unwrap();
        let wl = Workload::load("ice-video-call", &cat).unwrap();
        let dev = Device::load("p20").unwrap();
        let r = floe_sim::run(&dev, &wl, &cat, policy, &RunOptions { bg_apps: Some(8), ..Default::default() }).unwrap();
        let (m, apps) = (&r.metrics, &r.apps);
        let sum = |f: &dyn Fn(&floe_core::AppStats) -> u64| apps.iter().map(f).sum::<u64>();
        assert_eq!(apps.len(), 9, "{policy}: the eight cached apps and the call: {apps:?}");
        assert_eq!(sum(&|a| a.refaults_anon), m.refaults_fg_anon + m.refaults_bg_anon, "{policy}");
        assert_eq!(sum(&|a| a.refaults_file), m.refaults_fg_file + m.refaults_bg_file, "{policy}");
        assert_eq!(sum(&|a| a.freezes), m.freezes, "{policy}");
        assert_eq!(sum(&|a| a.thaws), m.thaws, "{policy}");
        assert_eq!(sum(&|a| a.kills), m.kills, "{policy}");
        assert_eq!(sum(&|a| a.launches_cold), m.launches_cold, "{policy}");
        assert_eq!(sum(&|a| a.launches_warm), m.launches_warm, "{policy}");
        let reclaimed = sum(&|a| a.reclaimed_anon + a.reclaimed_file);
        assert!(reclaimed > 0 && reclaimed <= m.reclaimed_pages, "{policy}: apps {reclaimed} of {}", m.reclaimed_pages);
        let call = apps.iter().find(|a| a.app == "whatsapp").unwrap();
        assert_eq!((call.state.as_str(), call.launches_cold), ("foreground", 1), "{policy}");
        assert!(call.cpu_ms > apps.iter().filter(|a| a.app != "whatsapp").map(|a| a.cpu_ms).fold(0.0, f64::max), "{policy}");
        if policy == "ice" {
            assert!(m.freezes > 0, "ice froze nothing");
            // RPF freezes cached apps that refault; an app caught before the call began
            // (its refault outside the measured part) is frozen again in every epoch.
            let frozen: Vec<_> = apps.iter().filter(|a| a.freezes > 0).collect();
            assert!(frozen.iter().all(|a| a.app != "whatsapp"), "{frozen:?}");
            assert!(frozen.iter().any(|a| a.refaults_anon + a.refaults_file > 0), "{frozen:?}");
        }
    }
}

/// Ice §6.1 and Fig. 11, the part the model reproduces: with eight background apps on
/// the P20, Ice cuts background refaults (the paper: by 40-58 %) and reclaims (to
/// 70.7 %) against LRU+CFS, with MDT thawing the apps it froze between freezing
/// periods (§6.1: "thawed with MDT many times"); and Acclaim's FG-aware eviction puts
/// reclaim on the background apps (the game on the Pixel 3), whose refaults rise.
/// Summed over background draws.
#[test]
fn ice_family_cuts_refaults_and_acclaim_reclaims_from_the_background() {
    let sum = |device: &str, workload: &str, policy: &str| {
        let mut t = (0u64, 0u64, 0u64, 0u64, 0u64);
        for seed in 2..=4 {
            let m = embedded_run_seed(device, workload, policy, Some(8), seed);
            t.0 += m.refaults_bg_anon + m.refaults_bg_file;
            t.1 += m.reclaimed_pages;
            t.2 += m.refaults_fg_anon + m.refaults_fg_file;
            t.3 += m.freezes;
            t.4 += m.thaws;
        }
        t
    };
    let lru = sum("p20", "ice-video-call", "lru-cfs");
    let ice = sum("p20", "ice-video-call", "ice");
    // MDT sets H_wm against available memory: with the call's GiB of page cache the
    // freezing periods last tens of seconds, so the call sees thawing periods (set
    // against free memory, some 60 MiB, they would last the exponent's cap, 512 s,
    // and the call would see at most one).
    assert!(ice.4 >= 3 * 3, "MDT thawed the frozen apps {} times in 3 calls: {ice:?}", ice.4);
    assert!(lru.0 > 20_000, "the scenario needs background refaults to begin with: {lru:?}");
    assert!(ice.0 * 4 < lru.0 * 3, "Ice BG refaults {} vs LRU+CFS {}: less than a quarter cut", ice.0, lru.0);
    assert!(ice.1 < lru.1, "Ice reclaims {} vs LRU+CFS {}", ice.1, lru.1);
    assert!(ice.3 > 0 && lru.3 == 0);
    let lru = sum("pixel3", "ice-game", "lru-cfs");
    let acclaim = sum("pixel3", "ice-game", "acclaim");
    assert!(lru.2 > 1_000, "the game needs foreground refaults to begin with: {lru:?}");
    // The game streams content through the page cache; FG-aware eviction keeps those
    // use-once pages with the rest of the foreground's, so reclaim takes the background
    // apps' pages first and more of them (Ice Fig. 9 finds Acclaim no better than
    // LRU+CFS at the frame rate).
    assert!(acclaim.0 > lru.0, "Acclaim BG refaults {} vs LRU+CFS {}", acclaim.0, lru.0);
}

/// Ice+'s reclaim-or-kill exclusivity chooses which app the killer takes; it does not
/// leave the killer without one. On the Pixel 3's game with six cached apps (seed 3's
/// draw), sparing every app with pages in swap, whatever is left, lets the frozen heaps
/// fill the 512 MiB of zram while the killer finds no victim it may take, and reclaim
/// takes the game's own file pages, which it reads back over and over: 936 k of them
/// refault in the run, where Ice+ as it is refaults 10.8 k (Ice 15) and kills 4 apps.
#[test]
fn ice_plus_leaves_the_killer_a_victim_when_every_cached_app_has_swapped() {
    let ice = embedded_run_seed("pixel3", "ice-game", "ice", Some(6), 3);
    let plus = embedded_run_seed("pixel3", "ice-game", "ice-plus", Some(6), 3);
    assert!(plus.kills >= 2, "Ice+ killed {} apps (Ice {})", plus.kills, ice.kills);
    assert!(
        plus.refaults_fg_file < 100_000,
        "the game refaults {} file pages under Ice+ against {} under Ice",
        plus.refaults_fg_file,
        ice.refaults_fg_file
    );
}

/// What [`FreezeAtRefault`] heard: for each freeze it asked for, the refaults of that app
/// it heard after asking and before the thaw.
#[derive(Default)]
struct FreezeLog {
    after_freeze: Vec<u32>,
    apps: std::collections::BTreeSet<u16>,
}

/// Freezes a cached app at its refault, as Ice's RPF does, and thaws it a second later.
struct FreezeAtRefault {
    log: std::sync::Arc<std::sync::Mutex<FreezeLog>>,
    /// Frozen apps: when each was frozen and its entry in `after_freeze`.
    frozen: std::collections::BTreeMap<floe_core::AppId, (Nanos, usize)>,
}

impl floe_core::Policy for FreezeAtRefault {
    fn name(&self) -> &'static str {
        "test-freeze-at-refault"
    }
    fn setup(&self) -> floe_core::Setup {
        floe_core::Setup {
            swap: floe_core::SwapSetup::Zram,
            tick: Some(Nanos::from_ms(50)),
            events: floe_core::EventMask { refaults: true, ..floe_core::EventMask::NONE },
            ..floe_core::Setup::stock()
        }
    }
    fn on_event(&mut self, ev: &floe_core::Event, view: &dyn floe_core::SystemView, out: &mut Vec<floe_core::Action>) {
        use floe_core::{Action, AppState, Event};
        let mut log = self.log.lock().unwrap();
        match *ev {
            Event::Refault { app, fg: false, .. } => match self.frozen.get(&app) {
                Some(&(_, i)) => log.after_freeze[i] += 1,
                None if view.app(app).is_some_and(|a| a.state == AppState::Cached) => {
                    self.frozen.insert(app, (view.now(), log.after_freeze.len()));
                    log.after_freeze.push(0);
                    log.apps.insert(app.0);
                    out.push(Action::Freeze(app));
                }
                None => {}
            },
            Event::Tick => {
                let now = view.now();
                self.frozen.retain(|&app, &mut (at, _)| {
                    let thaw = now >= at + Nanos::from_secs(1);
                    if thaw {
                        out.push(Action::Thaw(app));
                    }
                    !thaw
                });
            }
            _ => {}
        }
    }
}

/// Ice §4.2.3: an app that refaults is "frozen instantly". Its task stops at that fault,
/// so it refaults no more pages than the one read brought in (a file cluster) until it
/// is thawed, and then it goes on with its wakeup and refaults again.
#[test]
fn an_app_frozen_at_a_refault_stops_there_and_goes_on_when_thawed() {
    let (dev, wl, cat) = tiny();
    let log = std::sync::Arc::new(std::sync::Mutex::new(FreezeLog::default()));
    let policy = FreezeAtRefault { log: log.clone(), frozen: Default::default() };
    let mut sim = Sim::new(&dev, &wl, &cat, Box::new(policy), &RunOptions { seed: 1, ..Default::default() });
    while sim.run_until(sim.now_ns() + Nanos::from_secs(10)) {}
    let log = log.lock().unwrap();
    let most = log.after_freeze.iter().copied().max().unwrap_or(0);
    assert!(most < 8, "an app refaulted {most} pages after it was frozen (a file cluster is 8): {:?}", log.after_freeze);
    assert!(
        log.after_freeze.len() >= 2 * log.apps.len().max(1),
        "{} freezes of {} apps: thawed apps did not go on with their wakeups",
        log.after_freeze.len(),
        log.apps.len()
    );
}

/// Makes every app unswappable when it starts; used to check that unswappable memory
/// is never swapped and stays accounted.
struct NoSwapFor;

impl floe_core::Policy for NoSwapFor {
    fn name(&self) -> &'static str {
        "test-noswap"
    }
    fn setup(&self) -> floe_core::Setup {
        floe_core::Setup { swap: floe_core::SwapSetup::Zram, events: floe_core::EventMask::ALL, ..floe_core::Setup::stock() }
    }
    fn on_event(&mut self, ev: &floe_core::Event, _view: &dyn floe_core::SystemView, out: &mut Vec<floe_core::Action>) {
        if let floe_core::Event::AppStarted { app } = ev {
            if app.0 % 2 == 0 {
                out.push(floe_core::Action::SetSwappable { app: *app, swappable: false });
            }
        }
    }
}

#[test]
fn unswappable_apps_are_never_swapped_and_stay_accounted() {
    let (dev, wl, cat) = tiny();
    let mut sim = Sim::new(&dev, &wl, &cat, Box::new(NoSwapFor), &RunOptions { seed: 2, ..Default::default() });
    let mut t = Nanos::ZERO;
    let mut swapped_odd = 0;
    loop {
        t += Nanos::from_ms(500);
        let more = sim.run_until(t);
        sim.check_invariants().unwrap();
        use floe_core::SystemView;
        for id in sim.apps() {
            let info = sim.app(id).unwrap();
            if id.0 % 2 == 0 {
                assert_eq!(info.swapped.0, 0, "{} was swapped", info.name);
            } else {
                swapped_odd += info.swapped.0;
            }
        }
        if !more {
            break;
        }
    }
    assert!(swapped_odd > 0, "the swappable apps were never swapped: the test proves nothing");
}

/// SmartLMK §6.4 (Fig. 10, 13): on its 256-launch benchmark without a balloon,
/// SmartLMK's value-aware, all-at-once kills spend less time launching in total than the
/// stock LMK, and keep the slow-starting apps (the three games, whose cold starts the
/// catalog gives over 10 s) warm more often. (Fig. 11's total resumes are not asserted:
/// floe's SmartLMK resumes fewer apps than Vanilla, where the paper's resumed more; the
/// report shows it.)
#[test]
fn smartlmk_launches_faster_and_keeps_slow_starting_apps_warm() {
    let cat = Catalog::embedded().unwrap();
    let wl = Workload::load("smartlmk-256", &cat).unwrap();
    let dev = Device::load("galaxy-nexus").unwrap();
    let slow: Vec<&str> = cat
        .apps
        .iter()
        .filter(|a| a.cold_launch_ms > 10_000.0 && wl.sequence.iter().any(|s| s == &a.name))
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(slow.len(), 3, "{slow:?}");
    let run = |policy: &str| floe_sim::run(&dev, &wl, &cat, policy, &RunOptions { seed: 1, ..Default::default() }).unwrap();
    let (lmk, smart) = (run("android-lmk"), run("smartlmk"));
    let warm_slow =
        |r: &RunRecord| r.launches.iter().filter(|l| l.kind == floe_core::LaunchKind::Warm && slow.contains(&l.app.as_str())).count();
    for r in [&lmk, &smart] {
        assert_eq!(r.metrics.launches_cold + r.metrics.launches_warm, 256);
    }
    // SmartLMK is the killer: its kills are the policy's (the OOM killer aside).
    let by = smart.kills_by;
    assert!(by.policy > 0 && by.policy + by.oom == smart.metrics.kills && by.lmk == 0, "{by:?}");
    assert!(
        smart.metrics.launch_ms_total < lmk.metrics.launch_ms_total,
        "total launch {} vs {} ms",
        smart.metrics.launch_ms_total,
        lmk.metrics.launch_ms_total
    );
    assert!(warm_slow(&smart) > warm_slow(&lmk), "slow-starting apps resumed {} vs {} times", warm_slow(&smart), warm_slow(&lmk));
}

/// Selective §V (Figs. 7-8): in the heavy scenario B, kill-first's launches are faster
/// and steadier than swap-all's, which pages every app through flash. The paper's cuts
/// (51 % of the mean, 78 % of the standard deviation) are over B1 and B2 together, as
/// here; in B1 alone kill-first's launches now vary more than swap-all's
/// (docs/MODEL.md, "Background activity").
#[test]
fn selective_kill_first_beats_swap_all_in_scenario_b() {
    let both = |policy: &str| {
        let (b1, b2) = (embedded_run("nexus5", "selective-b1", policy, None), embedded_run("nexus5", "selective-b2", policy, None));
        (b1.launch_ms_mean + b2.launch_ms_mean, b1.launch_ms_stddev + b2.launch_ms_stddev)
    };
    let (swap, kill) = (both("swap-all"), both("selective-kill-first"));
    assert!(kill.0 < swap.0, "mean {} vs {}", kill.0 / 2.0, swap.0 / 2.0);
    assert!(kill.1 < swap.1, "stddev {} vs {}", kill.1 / 2.0, swap.1 / 2.0);
}

/// SEAL §VI on a shortened seal-30apps (3 rounds, each in a fresh order as `floe
/// experiment seal` plays them): SEAL caches more apps than No-SWAP, adds fewer
/// interaction alerts to No-SWAP's than ZSWAP does, and its warm
/// launches exceed No-SWAP's by less than ZSWAP's do (Figs. 10, 11, 13; the paper's are
/// much closer to No-SWAP's; since the kernel's swap readahead speeds ZSWAP's swap-ins
/// from flash, SEAL's lie nearer ZSWAP's than No-SWAP's, see docs/MODEL.md "Swap tiers"); a larger mu caches more apps
/// (Fig. 17); over the full ten rounds, the largest k of `floe experiment seal`'s sweep
/// caches fewer apps than k = 1 (Fig. 16; in three rounds a page's weight cannot pass 3,
/// and k = 1 and k = 3 differ by less than the seed's scatter). Fig. 16's other half,
/// fewer alerts with a larger k, floe does not show since SL2 moves compressed pages
/// (seeds 1-5: k = 6 had more alerts than k = 1 in four; docs/MODEL.md, "Schemes' page-level hooks").
#[test]
fn seal_trades_caching_against_alerts_as_the_paper_shows() {
    let run_rounds = |policy: &str, rounds: u32| {
        let cat = Catalog::embedded().unwrap();
        let mut wl = Workload::load("seal-30apps", &cat).unwrap();
        wl.rounds = rounds;
        let dev = Device::load("hikey970").unwrap();
        floe_sim::run(&dev, &wl, &cat, policy, &RunOptions { seed: 1, shuffle_rounds: true, ..Default::default() }).unwrap().metrics
    };
    let run = |policy: &str| run_rounds(policy, 3);
    let (lmk, seal) = (run("android-lmk"), run("seal"));
    assert!(seal.caching_capability > 2.0 * lmk.caching_capability, "caching {} vs {}", seal.caching_capability, lmk.caching_capability);
    // The alerts swapping adds over No-SWAP's (Fig. 11: ZSWAP 4x No-SWAP's, SEAL 1.14x):
    // SEAL's are fewer than ZSWAP's with cached apps active for the 30 s Ice watched them
    // (seed 1, each round in a fresh order: 79 against 142) (with activity that never ends, their wakeups' reads from SL2 go on
    // beside the foreground for the whole run: `floe experiment seal` shows both).
    let windowed = |policy: &str| {
        let cat = Catalog::embedded().unwrap();
        let mut wl = Workload::load("seal-30apps", &cat).unwrap();
        wl.rounds = 3;
        let dev = Device::load("hikey970").unwrap();
        floe_sim::run(&dev, &wl, &cat, policy, &RunOptions { seed: 1, bg_window_s: Some(30.0), shuffle_rounds: true, ..Default::default() })
            .unwrap()
            .metrics
    };
    let (lmk, zswap, seal) = (windowed("android-lmk"), windowed("zswap"), windowed("seal"));
    let extra = |m: &floe_core::Metrics| m.interaction_alerts.saturating_sub(lmk.interaction_alerts);
    assert!(
        extra(&seal) < extra(&zswap),
        "alerts: no-swap {} seal {} zswap {}",
        lmk.interaction_alerts,
        seal.interaction_alerts,
        zswap.interaction_alerts
    );
    assert!(
        seal.switch_ms_mean - lmk.switch_ms_mean < zswap.switch_ms_mean - lmk.switch_ms_mean,
        "warm launch: no-swap {} seal {} zswap {}",
        lmk.switch_ms_mean,
        seal.switch_ms_mean,
        zswap.switch_ms_mean
    );
    let (k1, k6) = (run_rounds("seal:k=1", 10), run_rounds("seal:k=6", 10));
    assert!(k1.caching_capability > k6.caching_capability, "caching k=1 {} vs k=6 {}", k1.caching_capability, k6.caching_capability);
    // Fig. 17's range, mu from 0 to 1: its caching half. Its alert half (more alerts
    // with a larger mu) floe does not show with the cached apps on the HiKey's one
    // background core (seed 1, three rounds: 1,260 alerts at mu = 1 against 1,574 at 0;
    // docs/MODEL.md, "Schemes' page-level hooks").
    let (lo, hi) = (run("seal:mu=0"), run("seal:mu=1"));
    assert!(hi.caching_capability > lo.caching_capability, "caching mu=1 {} vs mu=0 {}", hi.caching_capability, lo.caching_capability);
}

/// Regression: a background app's fault made room by reclaim whose LMK pass killed that
/// same app; the fault then freed its zram page a second time (found by the property
/// test above with this seed under SEAL's small SL1).
#[test]
fn a_fault_whose_app_dies_making_room_frees_nothing_twice() {
    let (mut dev, mut wl, cat) = tiny();
    dev.memory.app_mem_mib = 350.0;
    wl.rounds = 2;
    wl.use_s = 1.5;
    let opts = RunOptions { seed: 12036932931365388731, bg_apps: Some(2), ..Default::default() };
    let mut sim = Sim::new(&dev, &wl, &cat, floe_policies::make_spec("seal:sl1=64:sl2=128").unwrap(), &opts);
    let mut t = Nanos::ZERO;
    loop {
        t += Nanos::from_ms(250);
        let more = sim.run_until(t);
        sim.check_invariants().unwrap_or_else(|e| panic!("at {t}: {e}"));
        if !more {
            break;
        }
    }
}

/// zswap's pool is zbud: two compressed pages per pool page at best, so its RAM cost is
/// half the pages it stores even when the device compresses 2.5:1 (zram's zsmalloc).
#[test]
fn the_zswap_pool_packs_two_pages_per_page_and_zram_packs_by_the_ratio() {
    use floe_core::SystemView;
    let (dev, wl, cat) = tiny();
    for (policy, ratio) in [("zswap", 2.0), ("lru-cfs", dev.zram.ratio)] {
        let p = floe_policies::make(policy).unwrap();
        let mut sim = Sim::new(&dev, &wl, &cat, p, &RunOptions { seed: 1, ..Default::default() });
        let (mut t, mut seen) = (Nanos::ZERO, 0u64);
        loop {
            t += Nanos::from_ms(250);
            let more = sim.run_until(t);
            let m = sim.mem();
            if m.zram_stored.0 > 0 {
                assert_eq!(m.zram_used.0, (m.zram_stored.0 as f64 / ratio).ceil() as u64, "{policy}: {m:?}");
                seen = seen.max(m.zram_stored.0);
            }
            if !more {
                break;
            }
        }
        assert!(seen > 1_000, "{policy} stored only {seen} pages: the test proves nothing");
    }
}

/// What `policy` sees of memory on `dev` before the tiny workload starts.
fn memory_at_start(dev: &Device, policy: &str) -> floe_core::MemInfo {
    use floe_core::SystemView;
    let (_, wl, cat) = tiny();
    Sim::new(dev, &wl, &cat, floe_policies::make(policy).unwrap(), &RunOptions::default()).mem()
}

/// zswap's pool is sized like SEAL's SL1 (the device's zram size, in pages) within the
/// kernel's cap of 20 % of RAM in pool pages (max_pool_percent), which zbud fills two
/// to a page; zram stores its disksize.
#[test]
fn the_zswap_pool_is_the_first_levels_size_within_a_fifth_of_ram() {
    let (dev, _, _) = tiny();
    let cap = |dev: &Device, policy: &str| memory_at_start(dev, policy).zram_capacity.0;
    let pages = |mib: f64| (mib * 256.0).round() as u64;
    // The tiny device: 300 MiB of zram, below the kernel's 2 x 409.6 MiB.
    assert!(dev.zram.size_mib < 2.0 * dev.memory.ram_mib * 0.2);
    assert_eq!(cap(&dev, "zswap"), pages(dev.zram.size_mib));
    assert_eq!(cap(&dev, "lru-cfs"), pages(dev.zram.size_mib));
    // A first level larger than the kernel lets the pool grow: the kernel's cap binds.
    let mut big = dev.clone();
    big.zram.size_mib = 4096.0;
    assert_eq!(cap(&big, "zswap"), 2 * pages(big.memory.ram_mib * 0.2));
    assert_eq!(cap(&big, "lru-cfs"), pages(4096.0));
    big.memory.ram_mib *= 2.0;
    assert_eq!(cap(&big, "zswap"), 2 * pages(big.memory.ram_mib * 0.2));
}

/// Under zswap a stored page holds a slot of the swap device, so the pool and what it
/// wrote back together never exceed the device: with a swap device smaller than the
/// pool nothing reaches flash, with a larger one the pool's overflow does.
#[test]
fn zswap_pool_and_flash_share_the_swap_devices_slots() {
    let (dev, wl, cat) = tiny();
    let opts = RunOptions { seed: 2, ..Default::default() };
    for (zram_mib, swap_mib) in [(300.0, 64.0), (300.0, 200.0), (64.0, 2048.0)] {
        let mut d = dev.clone();
        d.zram.size_mib = zram_mib;
        d.flash.swap_mib = Some(swap_mib);
        let mut tl = Vec::new();
        let rec = floe_sim::run_with_timeline(&d, &wl, &cat, "zswap", &opts, Nanos::from_ms(250), |s| {
            tl.push(s);
            true
        })
        .unwrap();
        let most = tl.iter().map(|s| s.zram_stored_mib + s.flash_swap_mib).fold(0.0, f64::max);
        assert!(most <= swap_mib + 0.01, "swap {swap_mib} MiB: {most} MiB swapped at once");
        assert!(tl.iter().all(|s| s.zram_stored_mib <= zram_mib + 0.01));
        if swap_mib < zram_mib {
            assert_eq!(rec.metrics.flash_write_bytes, 0, "swap {swap_mib} MiB: nothing should reach flash");
        } else {
            assert!(tl.iter().any(|s| s.flash_swap_mib > 0.0), "a {zram_mib} MiB pool overflows to flash");
        }
        if swap_mib == 64.0 {
            assert!(most > swap_mib - 1.0, "swap {swap_mib} MiB: the device fills ({most} MiB)");
        }
    }
}

/// The flash swap's size comes from the device file when it gives one (2 GiB otherwise),
/// for flash swap and zswap alike; a bad size is an error naming the field and line.
#[test]
fn the_flash_swap_size_is_the_devices() {
    let (dev, _, _) = tiny();
    let cap = |dev: &Device, policy: &str| memory_at_start(dev, policy).flash_swap_capacity.0;
    assert_eq!(cap(&dev, "swap-all"), 2048 * 256);
    let mut small = dev.clone();
    small.flash.swap_mib = Some(64.0);
    assert_eq!((cap(&small, "swap-all"), cap(&small, "zswap"), cap(&small, "lru-cfs")), (64 * 256, 64 * 256, 0));
    let src = std::fs::read_to_string(format!("{TD}/tiny-device.toml")).unwrap();
    let bad = src.replace("seq_write_mib_s = 100.0", "seq_write_mib_s = 100.0\nswap_mib = -1");
    let path = std::env::temp_dir().join(format!("floe-bad-swap-{}.toml", std::process::id()));
    std::fs::write(&path, &bad).unwrap();
    let err = Device::load(path.to_str().unwrap()).unwrap_err().to_string();
    std::fs::remove_file(&path).unwrap();
    let line = bad.lines().position(|l| l.starts_with("swap_mib")).unwrap() + 1;
    assert!(err.starts_with(&format!("{}:{line}:", path.display())), "{err}");
    assert!(err.contains("flash.swap_mib") && err.contains("positive"), "{err}");
}

/// A timeline samples the run without changing it, covers it step by step, and its
/// gauges keep memory's books: free + LRU + the compressed pool + pages under writeback
/// = the memory apps have.
#[test]
fn a_timeline_samples_the_run_without_changing_it() {
    let (dev, wl, cat) = tiny();
    for policy in ["lru-cfs", "swap-all", "android-lmk"] {
        let opts = RunOptions { seed: 3, ..Default::default() };
        let step = Nanos::from_ms(500);
        let mut tl = Vec::new();
        let rec = floe_sim::run_with_timeline(&dev, &wl, &cat, policy, &opts, step, |s| {
            tl.push(s);
            true
        })
        .unwrap();
        let plain = floe_sim::run(&dev, &wl, &cat, policy, &opts).unwrap();
        assert_eq!(serde_json::to_string(&rec).unwrap(), serde_json::to_string(&plain).unwrap(), "{policy}: sampling changed the run");
        assert!(tl.len() > 10, "{policy}: {} samples", tl.len());
        for (i, s) in tl.iter().enumerate() {
            assert_eq!(s.policy, policy);
            if i + 1 < tl.len() {
                assert!((s.t_s - 0.5 * (i + 1) as f64).abs() < 1e-9, "{policy}: step {i} ends at {}", s.t_s);
            } else {
                assert!(s.t_s > 0.5 * i as f64 && s.t_s <= 0.5 * (i + 1) as f64, "{policy}: last step ends at {}", s.t_s);
            }
            let held = s.free_mib + s.anon_lru_mib + s.file_lru_mib + s.zram_pool_mib + s.writeback_mib;
            assert!((held - dev.memory.app_mem_mib).abs() < 0.05, "{policy} at {} s: {held} MiB accounted", s.t_s);
            assert!(s.direct_reclaimed_pages <= s.reclaimed_pages);
            let frames = s.frames.expect("the simulator counts frames");
            assert!(frames as f64 <= 0.5 * 61.0, "{policy}: {frames} frames in half a second");
            assert!(s.measured.is_some() && s.fps.is_some() && s.cpu_ms_app.is_some() && s.flash_read_kib.is_some());
        }
        // The measured part is a suffix of the run, and its counts add up to at least
        // the metrics' (the step where it begins also holds some of what came before).
        let first = tl.iter().position(|s| s.measured == Some(true)).expect("a measured part");
        assert!(tl[first..].iter().all(|s| s.measured == Some(true)));
        let m = &rec.metrics;
        let sum = |f: fn(&floe_sim::Sample) -> u64| tl[first..].iter().map(f).sum::<u64>();
        assert_eq!(sum(|s| s.frames.unwrap_or(0)), m.frames, "{policy}: frames");
        assert!(sum(|s| s.reclaimed_pages) >= m.reclaimed_pages);
        assert!(sum(|s| s.refaults_bg_anon) >= m.refaults_bg_anon && sum(|s| s.refaults_fg_file) >= m.refaults_fg_file);
        assert!(sum(|s| s.kills) >= m.kills);
        let all = |f: fn(&floe_sim::Sample) -> u64| tl.iter().map(f).sum::<u64>();
        // Flash traffic is counted in whole KiB per step.
        assert!(all(|s| s.flash_read_kib.unwrap_or(0)) * 1024 + 1024 * tl.len() as u64 >= m.flash_read_bytes);
        assert!(all(|s| s.reclaimed_pages) > 0, "{policy}: the tiny device reclaims");
        if policy != "android-lmk" {
            // With swap the tiny device's allocations outrun kswapd now and then.
            assert!(all(|s| s.direct_reclaimed_pages) > 0, "{policy}: no direct reclaim");
        }
        match policy {
            "android-lmk" => assert!(tl.iter().all(|s| s.zram_stored_mib == 0.0 && s.flash_swap_mib == 0.0)),
            "swap-all" => assert!(tl.iter().all(|s| s.zram_stored_mib == 0.0)),
            _ => assert!(tl.iter().all(|s| s.flash_swap_mib == 0.0)),
        }
        // The anonymous pages reclaimed are those sent to swap: none without swap, and at
        // least every page swap holds at the end (each got there by being reclaimed).
        let anon = |s: &floe_sim::Sample| s.reclaimed_anon_pages.expect("the simulator counts them");
        assert!(tl.iter().all(|s| anon(s) <= s.reclaimed_pages), "{policy}");
        assert!(m.reclaimed_anon_pages <= m.reclaimed_pages && sum(|s| s.reclaimed_anon_pages.unwrap_or(0)) >= m.reclaimed_anon_pages);
        let last = tl.last().unwrap();
        let held = ((last.zram_stored_mib + last.flash_swap_mib) * 256.0).round() as u64;
        let swapped: u64 = tl.iter().map(anon).sum();
        match policy {
            "android-lmk" => assert_eq!(swapped, 0),
            _ => assert!(swapped > 0 && swapped + 3 >= held, "{policy}: {swapped} pages swapped out, {held} held"),
        }
    }
    let (dev, wl, cat) = tiny();
    assert!(floe_sim::run_with_timeline(&dev, &wl, &cat, "lru-cfs", &RunOptions::default(), Nanos::ZERO, |_| true).is_err());
    // The reader may stop the run: no sample after the one it refused.
    let mut seen = 0;
    let stopped = floe_sim::run_with_timeline(&dev, &wl, &cat, "lru-cfs", &RunOptions::default(), Nanos::from_secs(1), |_| {
        seen += 1;
        seen < 3
    });
    assert!(matches!(stopped, Err(floe_sim::SimError::Stopped)) && seen == 3);
}

/// The stock LMK compares minfree with free memory minus the kernel's reserve (the
/// high watermark: lowmemorykiller.c's and lmkd's `other_free = free pages -
/// totalreserve_pages`). On a device whose watermarks sit above every minfree level,
/// kswapd never lets free memory fall to a level, yet the LMK still kills once the file
/// cache is below one, instead of letting reclaim empty the page cache first.
#[test]
fn the_lmk_counts_free_memory_above_the_kernels_reserve() {
    let (mut dev, wl, cat) = tiny();
    (dev.memory.watermark_min_mib, dev.memory.watermark_low_mib, dev.memory.watermark_high_mib) = (100.0, 125.0, 150.0);
    let top_level = dev.memory.minfree.iter().map(|&(_, mib)| mib).fold(0.0, f64::max);
    assert!(top_level < dev.memory.watermark_min_mib, "the fixture's levels all lie below the watermarks");
    let mut tl = Vec::new();
    let opts = RunOptions { seed: 1, ..Default::default() };
    let rec = floe_sim::run_with_timeline(&dev, &wl, &cat, "android-lmk", &opts, Nanos::from_ms(100), |s| {
        tl.push(s);
        true
    })
    .unwrap();
    assert!(rec.metrics.kills > 0, "no kill");
    let min_free = tl.iter().map(|s| s.free_mib).fold(f64::INFINITY, f64::min);
    assert!(min_free > top_level, "free memory fell to {min_free} MiB, below the top minfree level {top_level}");
    // The file cache is cut to the levels, not emptied (with free memory alone compared,
    // it fell to 0 and the run reclaimed 880 k pages against 191 k).
    let late_file = tl.iter().filter(|s| s.t_s > 20.0).map(|s| s.file_lru_mib).fold(f64::INFINITY, f64::min);
    assert!(late_file > 32.0, "the file LRU fell to {late_file} MiB");
}

/// A run whose options do not fit its workload and device is refused, with a message
/// saying what there is, instead of running with fewer background apps, a cut balloon
/// or an SL1 larger than the phone.
#[test]
fn runs_that_do_not_fit_their_device_and_workload_are_refused() {
    let cat = Catalog::embedded().unwrap();
    let refused = |dev: &Device, wl: &Workload, policy: &str, opts: RunOptions| {
        let plain = floe_sim::run(dev, wl, &cat, policy, &opts).unwrap_err();
        let sampled = floe_sim::run_with_timeline(dev, wl, &cat, policy, &opts, Nanos::from_secs(1), |_| true).unwrap_err();
        assert_eq!(plain.to_string(), sampled.to_string());
        plain
    };
    let ice = Workload::load("ice-video-call", &cat).unwrap();
    let p20 = Device::load("p20").unwrap();
    let e = refused(&p20, &ice, "lru-cfs", RunOptions { bg_apps: Some(50), ..Default::default() });
    assert!(e.to_string().contains("50 background apps asked for, but the fixed set and the pool hold 19 apps"), "{e}");
    let seal = Workload::load("seal-30apps", &cat).unwrap();
    let hikey = Device::load("hikey970").unwrap();
    let e = refused(&hikey, &seal, "lru-cfs", RunOptions { bg_apps: Some(5), draw_bg: true, ..Default::default() });
    assert!(e.to_string().contains("the pool holds 0 apps"), "{e}");
    let src = std::fs::read_to_string(format!("{TD}/tiny-workload.toml")).unwrap();
    let no_bg =
        Workload::parse("nobg.toml", &src[..src.find("[background]").unwrap()], &Catalog::load(&format!("{TD}/tiny-apps.toml")).unwrap())
            .unwrap();
    let (tiny_dev, _, tiny_cat) = tiny();
    let e = floe_sim::run(&tiny_dev, &no_bg, &tiny_cat, "lru-cfs", &RunOptions { bg_apps: Some(3), ..Default::default() }).unwrap_err();
    assert!(e.to_string().contains("3 background apps asked for, but the workload has no [background] table"), "{e}");
    assert!(floe_sim::run(&tiny_dev, &no_bg, &tiny_cat, "lru-cfs", &RunOptions { bg_apps: Some(0), ..Default::default() }).is_ok());
    // SEAL's SL1 holds uncompressed pages like zram: at most twice the RAM.
    let e = refused(&hikey, &seal, "seal:sl1=999999", RunOptions::default());
    assert!(e.to_string().contains("SEAL's sl1 of 999999 MiB is more than 12288 MiB"), "{e}");
    // The options' balloon and the workload's obey the rule the CLI gives --balloon-mib.
    let e = refused(&p20, &ice, "lru-cfs", RunOptions { balloon_mib: Some(5000.0), ..Default::default() });
    assert!(e.to_string().contains("a balloon must be at least 0 and below 1708 MiB"), "{e}");
    let big = Workload::parse("wb.toml", &ice_src().replace("balloon_mib = 0.0", "balloon_mib = 999999"), &cat).unwrap();
    let e = refused(&p20, &big, "lru-cfs", RunOptions::default());
    let line = ice_src().lines().position(|l| l.starts_with("balloon_mib")).unwrap() + 1;
    assert!(e.to_string().starts_with(&format!("wb.toml:{line}: field `balloon_mib`: 999999 MiB: a balloon must be")), "{e}");
    assert!(floe_sim::run(&p20, &big, &cat, "lru-cfs", &RunOptions { balloon_mib: Some(100.0), bg_apps: Some(0), ..Default::default() })
        .is_ok());
    // Fields changed after loading are checked again when the run is set up.
    let mut long = Workload::load("ice-video-call", &cat).unwrap();
    long.use_s = 1e9;
    let e = refused(&p20, &long, "lru-cfs", RunOptions::default());
    assert!(e.to_string().contains("field `use_s`") && e.to_string().contains("a week"), "{e}");
}

fn ice_src() -> String {
    let (_, src) = floe_sim::config::embedded_files().iter().find(|(p, _)| *p == "workloads/ice-video-call.toml").unwrap();
    src.to_string()
}

/// A value for any numeric field: zero, negative, huge, not a number, infinite, or
/// anything; written as TOML writes it (integers as integers, so integer fields get
/// some).
fn toml_number() -> impl Strategy<Value = String> {
    let f = prop_oneof![
        Just(0.0),
        Just(-1.0),
        Just(1e300),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        -1e4f64..1e4,
        any::<f64>(),
        (0i64..100_000).prop_map(|i| i as f64),
    ];
    f.prop_map(|v| match v {
        v if v.is_nan() => "nan".to_string(),
        v if v.is_infinite() => if v > 0.0 { "inf" } else { "-inf" }.to_string(),
        v if v.fract() == 0.0 && v.abs() < 1e15 => format!("{}", v as i64),
        v => format!("{v:e}"),
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, .. ProptestConfig::default() })]

    /// No number in an input file makes floe-sim panic: the tiny device, catalog or
    /// workload with one numeric field set to any value is refused with the file and
    /// the line, or it loads and its runs end (in a record or an error).
    #[test]
    fn any_number_in_an_input_is_refused_at_its_line_or_runs(which in 0usize..3, pick in any::<prop::sample::Index>(), value in toml_number()) {
        let file = ["tiny-device.toml", "tiny-apps.toml", "tiny-workload.toml"][which];
        let src = std::fs::read_to_string(format!("{TD}/{file}")).unwrap();
        // Lines `key = NUMBER  # ...`: the candidates.
        let numeric: Vec<usize> = src
            .lines()
            .enumerate()
            .filter(|(_, l)| l.split_once('=').is_some_and(|(_, v)| v.split('#').next().unwrap().trim().parse::<f64>().is_ok()))
            .map(|(i, _)| i)
            .collect();
        let at = numeric[pick.index(numeric.len())];
        let edited: Vec<String> = src
            .lines()
            .enumerate()
            .map(|(i, l)| if i == at { format!("{} = {value}", l.split_once('=').unwrap().0.trim_end()) } else { l.to_string() })
            .collect();
        let edited = edited.join("\n");
        let (mut dev, mut wl, mut cat) = tiny();
        let loaded = match which {
            0 => Device::parse(file, &edited).map(|d| dev = d),
            1 => Catalog::parse(file, &edited).map(|c| cat = c),
            _ => Workload::parse(&format!("{TD}/{file}"), &edited, &cat).map(|w| wl = w),
        };
        match loaded {
            Err(e) => prop_assert!(e.line.is_some() && e.field.is_some(), "{e} (line {} set to {value})", at + 1),
            Ok(()) => {
                // The tiny workload again (its apps may have changed), if it is short enough
                // to run here; the loaders bound a run at a simulated week.
                if which == 1 {
                    wl = Workload::parse(&format!("{TD}/tiny-workload.toml"), &std::fs::read_to_string(format!("{TD}/tiny-workload.toml")).unwrap(), &cat).unwrap();
                }
                let bg = wl.background.as_ref().map_or(0.0, |b| b.count as f64 * b.use_s);
                let total_s = wl.rounds as f64 * wl.sequence.len() as f64 * (wl.use_s + wl.idle_s) + bg;
                if total_s <= 120.0 {
                    for policy in ["lru-cfs", "seal"] {
                        let _ = floe_sim::run(&dev, &wl, &cat, policy, &RunOptions { seed: 1, ..Default::default() });
                    }
                }
            }
        }
    }
}

/// The render thread loses frames when it cannot run: on the P20's big.LITTLE CPU a
/// CPU hog beside the call (Ice's BG-cputester, 20 % of the cores) takes the big cores
/// the call's frames would run on often enough to cost frames, and a game whose
/// working set no longer fits (the largest balloon the P20 takes, beyond memtester's:
/// with the system's cold pages to reclaim, memtester's 2,070 MiB leave the game room)
/// stalls its frames on its own refaults.
#[test]
fn a_render_thread_that_waits_loses_its_frames() {
    let cat = Catalog::embedded().unwrap();
    let p20 = Device::load("p20").unwrap();
    let run = |wl: &str, opts: RunOptions| {
        let wl = Workload::load(wl, &cat).unwrap();
        floe_sim::run(&p20, &wl, &cat, "lru-cfs", &RunOptions { bg_apps: Some(0), ..opts }).unwrap().metrics
    };
    let null = run("ice-video-call", RunOptions::default());
    let hog = run("ice-video-call", RunOptions { cputester_pct: Some(20.0), ..Default::default() });
    assert!(hog.fps < null.fps * 0.98, "cputester: {} fps against {}", hog.fps, null.fps);
    assert!(hog.refaults_fg_anon + hog.refaults_fg_file == 0, "no memory pressure in either");
    let game = run("ice-game", RunOptions::default());
    let largest = p20.balloon_room_mib().ceil() - 1.0;
    let squeezed = run("ice-game", RunOptions { balloon_mib: Some(largest), ..Default::default() });
    assert!(squeezed.refaults_fg_anon + squeezed.refaults_fg_file > 10_000, "{squeezed:?}");
    assert!(squeezed.fps < game.fps * 0.5, "memtester: {} fps against {}", squeezed.fps, game.fps);
}

/// Records the oom_adj the app that left the foreground has when the policy hears of
/// the switch.
struct LeaverAdj(std::rc::Rc<std::cell::RefCell<Vec<i32>>>);

impl floe_core::Policy for LeaverAdj {
    fn name(&self) -> &'static str {
        "leaver-adj"
    }
    fn setup(&self) -> floe_core::Setup {
        floe_core::Setup { events: floe_core::EventMask { launches: true, ..floe_core::EventMask::NONE }, ..floe_core::Setup::stock() }
    }
    fn on_event(&mut self, ev: &floe_core::Event, view: &dyn floe_core::SystemView, _: &mut Vec<floe_core::Action>) {
        if let floe_core::Event::AppSwitch { from: Some(app), to: Some(_) } = ev {
            if let Some(info) = view.app(*app) {
                self.0.borrow_mut().push(info.oom_adj);
            }
        }
    }
}

/// A policy hears of an app switch after ActivityManager re-ranked the processes: the
/// app that left is at its background level (cached, or perceptible), not still at the
/// foreground's 0.
#[test]
fn the_app_that_left_the_foreground_is_cached_when_the_policy_hears_of_it() {
    let (dev, wl, cat) = tiny();
    let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    floe_sim::run_policy(&dev, &wl, &cat, Box::new(LeaverAdj(seen.clone())), &RunOptions { seed: 1, ..Default::default() }).unwrap();
    let seen = seen.borrow();
    assert!(!seen.is_empty(), "no switch between apps");
    // Perceptible (200) or the previous app (700): never the foreground's 0.
    assert!(seen.iter().all(|&adj| adj >= 200) && seen.contains(&floe_core::PREVIOUS_APP_ADJ), "{seen:?}");
}

/// Records, at each switch, the cached apps' oom_adj from the most recently used on.
struct CachedAdjs(std::rc::Rc<std::cell::RefCell<Vec<Vec<i32>>>>);

impl floe_core::Policy for CachedAdjs {
    fn name(&self) -> &'static str {
        "cached-adjs"
    }
    fn setup(&self) -> floe_core::Setup {
        floe_core::Setup { events: floe_core::EventMask { launches: true, ..floe_core::EventMask::NONE }, ..floe_core::Setup::stock() }
    }
    fn on_event(&mut self, ev: &floe_core::Event, view: &dyn floe_core::SystemView, _: &mut Vec<floe_core::Action>) {
        if let floe_core::Event::AppSwitch { .. } = ev {
            let mut cached: Vec<floe_core::AppInfo> =
                view.apps().into_iter().filter_map(|a| view.app(a)).filter(|i| i.state == floe_core::AppState::Cached).collect();
            cached.sort_by_key(|i| std::cmp::Reverse(i.last_used));
            self.0.borrow_mut().push(cached.iter().map(|i| i.oom_adj).collect());
        }
    }
}

/// Android 9 (the HiKey 970) shares three cached slots, 900 to 906, a third of the
/// cached apps each; Android 10 (the Pixel 4) gives each cached app its own level. On
/// both the app just left is the previous app, at 700, outside the cached levels.
#[test]
fn android_9_shares_cached_slots_and_android_10_gives_each_app_a_level() {
    let cat = Catalog::embedded().unwrap();
    let mut wl = Workload::load("seal-30apps", &cat).unwrap();
    (wl.rounds, wl.use_s) = (1, 2.0);
    for (device, want) in [("hikey970", floe_core::CachedAdj::SharedSlots), ("pixel4", floe_core::CachedAdj::PerApp)] {
        let dev = Device::load(device).unwrap();
        assert_eq!(dev.memory.cached_adj, want);
        let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        floe_sim::run_policy(&dev, &wl, &cat, Box::new(CachedAdjs(seen.clone())), &RunOptions { seed: 1, ..Default::default() }).unwrap();
        let seen = seen.borrow();
        assert!(seen.iter().any(|adj| adj.len() >= 7), "{device}: too few apps cached to share a slot: {seen:?}");
        for adj in seen.iter().filter(|adj| !adj.is_empty()) {
            assert_eq!(adj[0], floe_core::PREVIOUS_APP_ADJ, "{device}: the app just left: {adj:?}");
            assert_eq!(adj[1..], want.levels(adj.len() - 1), "{device}");
        }
    }
    assert_eq!(floe_core::CachedAdj::SharedSlots.levels(6), vec![900, 900, 901, 901, 903, 903]);
}
