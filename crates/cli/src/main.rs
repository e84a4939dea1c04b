//! The `floe` command: simulate a policy, list what floe knows, benchmark the simulator.

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use floe_core::input::num;
use floe_core::RunRecord;
use floe_sim::{Catalog, Device, RunOptions, Sim, Workload};
use std::io::Write;
use std::time::Instant;

mod daemon_cmd;
mod sweep;

/// `println!` to standard output that returns an error (a full disk, a closed
/// descriptor) instead of panicking.
macro_rules! outln {
    ($($t:tt)*) => {
        writeln!(std::io::stdout(), $($t)*).context("cannot write to standard output")?
    };
}

/// `print!` to standard output that returns an error instead of panicking.
macro_rules! out {
    ($($t:tt)*) => {
        write!(std::io::stdout(), $($t)*).context("cannot write to standard output")?
    };
}

#[derive(Parser)]
#[command(name = "floe", version, about = "floe: a user-experience-aware memory manager for phones and small Linux devices", long_about = None)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Simulate a workload on a device under one or more policies and print the metrics.
    ///
    /// Devices, workloads and policies are named as `floe list` shows; a device or
    /// workload may also be a path to a TOML file in the format of data/README.md.
    #[command(after_help = "Examples:
  floe sim                                           Ice's video call on the P20, 8 apps cached: lru-cfs beside ice
  floe sim --policy lru-cfs                          the same under one policy
  floe sim --policy lru-cfs,ice,ice-plus --bg-apps 6 --device pixel3 --draw-bg --seed 3
  floe sim --workload seal-30apps --policy zswap,seal,seal:k=1:mu=0.5 --shuffle-rounds
  floe sim --workload my-workload.toml --json        one run object (an array for several policies)
  floe sim --timeline run.csv                        also the run as it went, one CSV row a second
  floe sim --policy lru-cfs,ice --per-app            also each app's refaults, reclaims, freezes and CPU")]
    Sim(SimArgs),
    /// List the embedded devices, apps, workloads or policies, the experiments, or the
    /// metrics.
    List {
        #[arg(value_enum)]
        what: ListWhat,
        /// App catalog file to list (or to check the embedded workloads against)
        /// instead of the embedded data/apps.toml.
        #[arg(long, value_name = "FILE")]
        apps: Option<String>,
    },
    /// Re-run a seed paper's evaluation and print its tables, the paper's figure beside ours.
    ///
    /// NAME is one of: ice, seal, smartlmk, selective, asap, calibration (`floe list
    /// experiments` says what each re-runs); several separated by commas, or `all` (the
    /// five papers' evaluations, not calibration), run one after another and end with
    /// the count of each paper's findings that hold (--json: an array). `calibration`
    /// re-runs every paper's controls against the paper's figures, within ±15 % or not,
    /// and lists the values in data/ calibrated on each.
    ///
    /// While the runs go, stderr shows a bar on a terminal; elsewhere (a log, a pipe) a
    /// line a minute ($FLOE_HEARTBEAT_S seconds) gives the runs done and the time left
    /// at the pace so far, reckoned by the runs' simulated seconds (the longest go
    /// first). With --json, neither.
    #[command(after_help = "Examples:
  floe experiment seal --quick          SEAL's figures in under a minute
  floe experiment all --quick           every paper's evaluation, then how many of each one's findings hold
  floe experiment ice                   the full evaluation over five seeds, each effect with its 95 % interval
  floe experiment asap --json > asap.json
  floe experiment calibration --quick   every paper's controls against its figures, and the values calibrated on them
  floe experiment seal --seeds 1        the full evaluation once: verdicts without intervals
  floe experiment all                   stopped part-way and run again: it resumes from the runs kept")]
    Experiment {
        /// Which paper's evaluation.
        name: String,
        /// Same policies and devices at a size that runs in well under a minute.
        #[arg(long)]
        quick: bool,
        /// Replicate the whole evaluation over N seeds (replicate r adds 1000 r to every
        /// run's seed) and print each figure as their mean beside its standard deviation,
        /// the findings judged on the means with each effect's 95 % interval: an effect
        /// whose interval takes in none is vacuous. Takes N times as long. Default: 5 for
        /// a full run, 1 with --quick (whose verdicts are then indicative).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100))]
        seeds: Option<u32>,
        /// Print `{"experiment": NAME, "runs": [...]}` instead of tables.
        #[arg(long)]
        json: bool,
        /// Also write every run to FILE as CSV: one row per run, one column per key
        /// (policy, device, workload, seed), run parameter and metric.
        #[arg(long, value_name = "FILE")]
        csv: Option<String>,
        /// Also write DIR/index.html: a self-contained page with each finding's figures
        /// (the paper's beside floe's, with the interval and verdict), one run of the
        /// paper's baseline and scheme over time per experiment, and the tables; with
        /// `all`, the calibration's controls too (run for the page only).
        #[arg(long, value_name = "DIR")]
        report: Option<String>,
        /// Keep each finished run in DIR and take runs from there, so that a stopped
        /// experiment resumes where it stopped and another output of the same runs
        /// (`--json`, `--report`) takes seconds. Runs are kept per build of floe: a
        /// rebuilt floe runs everything afresh (the last three builds' runs are kept).
        /// Default: $FLOE_CACHE_DIR (empty: none), else $XDG_CACHE_HOME/floe/runs, else
        /// ~/.cache/floe/runs.
        #[arg(long, value_name = "DIR", conflicts_with = "no_cache")]
        cache: Option<String>,
        /// Run every run afresh and keep none.
        #[arg(long)]
        no_cache: bool,
    },
    /// Measure simulator speed: play a workload (by default a simulated day of app
    /// sessions on the 4 GiB Pixel 3) and report page accesses and simulated seconds per
    /// wall-clock second (docs/PERFORMANCE.md).
    Bench(BenchArgs),
    /// Replay a cache trace on floe's page-cache model and print its miss ratio,
    /// refaults, activations and requests per second (reading the trace included).
    ///
    /// TRACE is libCacheSim's oracleGeneral binary format (24-byte records: u32 time,
    /// u64 object id, u32 size, i64 next access; size-0 records are skipped) or, for a
    /// `.csv`/`.txt` name, lines `time,page id`. Each object is one page. `linux` is the
    /// simulator's own page cache: active and inactive file lists, young and referenced
    /// bits, shadow entries and refault-distance activation, reclaim in batches of 32
    /// pages when a miss finds the cache full; `lru` is plain LRU over the same lists.
    #[command(after_help = "Examples:
  floe replay trace.oracleGeneral.bin --cache-pages 250000
  floe replay trace.csv --cache-pages 4096 --policy lru --json")]
    Replay(ReplayArgs),
    /// Run a sweep: the lists of a sweep file (devices, workloads, policies with their
    /// parameters, run flags, seeds) crossed into runs in a fixed order, all of them or
    /// one shard (--shard I/N), each run a line of JSON Lines as it finishes. A shard run
    /// again skips the runs its output holds. `floe sweep merge` joins the shards.
    #[command(after_help = "Examples:
  floe sweep examples/sweep.toml                         every run, into sweep.jsonl
  floe sweep examples/sweep.toml --shard 2/4             the second of four slices, into sweep-2-of-4.jsonl
  floe sweep examples/sweep.toml --list                  the runs in order, one key a line
  floe sweep merge --spec examples/sweep.toml sweep-*-of-4.jsonl -o sweep.csv")]
    Sweep(sweep::SweepArgs),
    /// Run the policies on this Linux kernel: apps are cgroups filled with the processes
    /// the config's rules match (or an adopted uid_N/pid_M layout); a low-memory killer
    /// works over the machine or a memory budget; what policies learn is kept in SQLite;
    /// `floe ctl` talks to it; every app it froze is thawed when it exits, however it
    /// exits. Needs root. With `--check`, try every mechanism the policy needs (cgroups,
    /// freezer, kill, pidfds, process_madvise, pagemap, readahead, PSI triggers, refault
    /// counters, swappiness, zram and its writeback), one verdict per line, and exit.
    #[command(after_help = daemon_cmd::AFTER_HELP)]
    Daemon(daemon_cmd::DaemonArgs),
    /// Talk to a running daemon: `fg APP` (APP comes to the foreground: a launch
    /// begins), `launch-done APP [MS]` (its first frame is up, after MS ms or the time
    /// since `fg`), `status`, `apps`, `metrics` (OpenMetrics text), `run` (the run so
    /// far as `floe sim --json` prints one, JSON), `reclaim APP [MIB]`
    /// (page APP's anonymous memory out to swap, MIB of it or all; not the foreground
    /// app) and `prepage APP [MIB]` (read its swapped-out memory back ahead of use), each
    /// through the daemon's guard, replying with what it did (64 MiB a sample: the reply
    /// to a larger one comes when it ends, and says over how many samples).
    Ctl {
        /// The daemon's control socket.
        #[arg(long, default_value = "/run/floe.sock")]
        socket: String,
        /// The request and its arguments.
        #[arg(required = true, num_args = 1..=3)]
        request: Vec<String>,
    },
    /// Show what the daemon's policies learned (its SQLite state database), or replace
    /// one policy's state with a JSON file (stop the daemon first: it saves at exit).
    State {
        /// The state database (the config's `state_db`).
        #[arg(long, default_value = "/var/lib/floe/state.db")]
        db: String,
        /// Only this policy's state (or the policy whose state --set replaces).
        policy: Option<String>,
        /// Replace POLICY's state with this JSON file.
        #[arg(long, requires = "policy", value_name = "FILE")]
        set: Option<String>,
    },
}

#[derive(clap::Args)]
struct SimArgs {
    /// Device name or device file. Default: the device the workload's paper used.
    #[arg(long)]
    device: Option<String>,
    /// Workload name or workload file.
    #[arg(long, default_value = "ice-video-call")]
    workload: String,
    /// Policy name; several separated by commas are run side by side. The SEAL family
    /// takes parameters after colons: `seal:k=2:mu=0.5:sl1=256:sl2=512`. Default: the
    /// workload's paper's baseline and scheme side by side, with a line saying what the
    /// scheme changed (lru-cfs and ice for Ice's workloads); lru-cfs alone for a
    /// workload of no paper.
    #[arg(long, value_delimiter = ',')]
    policy: Vec<String>,
    /// Seed of every random choice; the same seed gives the same result.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    seed: u64,
    /// Run every policy with N seeds, --seed and the N - 1 after it, and print each
    /// metric's mean beside its standard deviation across them (with --json, every
    /// run: an array, policy by policy).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000), conflicts_with = "timeline")]
    seeds: u32,
    /// Number of apps cached in the background before the measured part. Where the
    /// workload names a fixed set (Ice's Fig. 1 apps), its first N; beyond it, and
    /// with --draw-bg, a draw from the workload's pool with the seed.
    #[arg(long, allow_negative_numbers = true)]
    bg_apps: Option<usize>,
    /// Draw the background apps from the workload's pool with the seed, as Ice's
    /// evaluation does each round, instead of the workload's fixed set.
    #[arg(long)]
    draw_bg: bool,
    /// Launch each round's apps in a fresh order drawn with the seed instead of the
    /// workload's listed order (SEAL and Ice publish no launch order; the workloads
    /// list their tables' order).
    #[arg(long)]
    shuffle_rounds: bool,
    /// End each cached app's background activity this many seconds after it left the
    /// foreground. By default it never ends: apps keep what Ice measured in their first
    /// seconds in the background (Table 1, Fig. 4) for as long as they stay cached, an
    /// upper bound; a window of 30 s keeps only what Fig. 4 observed.
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    bg_window_s: Option<f64>,
    /// Keep a foreground app nobody uses (a launch-only workload's: Selective's,
    /// SmartLMK's) at the pages its launch mapped. By default it grows to its footprint
    /// as a used app does, an upper bound: the catalog's footprints are of apps in use.
    #[arg(long)]
    no_idle_growth: bool,
    /// Run Ice's cputester beside the workload: a process outside the apps that keeps
    /// this percentage of all cores busy (Ice's BG-cputester took 20).
    #[arg(long, value_name = "PCT", allow_negative_numbers = true)]
    cputester_pct: Option<f64>,
    /// The device's low-memory killer, overriding its file: `minfree` (the minfree
    /// table, checked while memory is reclaimed: the in-kernel driver), `psi` (Android
    /// 10 lmkd's default: kills on memory-stall events by free memory seen at low
    /// pressure) or `psi-minfree` (lmkd on memory-stall events with
    /// use_minfree_levels, as Pixels set it: the minfree table decides).
    #[arg(long, value_name = "KILLER", value_parser = ["minfree", "psi", "psi-minfree"])]
    lmkd: Option<String>,
    /// Memory pinned away from apps, in MiB (overrides the workload's balloon).
    #[arg(long, allow_negative_numbers = true)]
    balloon_mib: Option<f64>,
    /// App catalog file replacing the embedded data/apps.toml.
    #[arg(long)]
    apps: Option<String>,
    /// Print JSON: one run object (an array of them for several policies).
    #[arg(long)]
    json: bool,
    /// Also print each app's part of the measured part: launches, kills, freezes and
    /// thaws, its refaults and reclaimed pages, its CPU, and its state and memory at the
    /// end (first seed; with --json, an `apps` array in every run object).
    #[arg(long)]
    per_app: bool,
    /// Also write the runs to FILE as CSV: one row per run, one column per key (policy,
    /// device, workload, seed), run parameter and metric.
    #[arg(long, value_name = "FILE")]
    csv: Option<String>,
    /// Also write the runs (first seed) as they went to FILE in the Chrome trace-event
    /// format, which Perfetto's UI (ui.perfetto.dev) and chrome://tracing open: a
    /// process per policy, the foreground app's spans, direct reclaim's stretches, a
    /// track per app with its launches, freezes and kills, counters of memory, frame
    /// rate, reclaim and refaults at each step of --timeline-step (1 s by default), and
    /// instants at the steps where apps were killed, frozen or thawed.
    #[arg(long, value_name = "FILE")]
    trace: Option<String>,
    /// Also write DIR/index.html: a self-contained page with the runs (first seed) over
    /// time, the policies overlaid, and the metrics side by side.
    #[arg(long, value_name = "DIR")]
    report: Option<String>,
    /// Also write the run as it went, one CSV row per step of simulated time (see
    /// --timeline-step): free memory, LRU and swap sizes, the foreground app, frame
    /// rate, reclaim, refaults, kills, freezes, CPU and flash traffic, from the start of
    /// the run (`measured` marks the workload's measured part). With several policies,
    /// their rows follow one another. `-` writes the CSV to standard output instead of
    /// the metrics.
    #[arg(long, value_name = "FILE")]
    timeline: Option<String>,
    /// Step of --timeline, in simulated seconds.
    #[arg(long, value_name = "SECS", default_value_t = 1.0, requires = "timeline", allow_negative_numbers = true)]
    timeline_step: f64,
}

#[derive(Clone, Copy, ValueEnum)]
enum ListWhat {
    Devices,
    Apps,
    Workloads,
    Policies,
    Experiments,
    /// Each metric of `floe sim`'s table and JSON: name, unit, meaning.
    Metrics,
}

#[derive(clap::Args)]
struct BenchArgs {
    /// Device to simulate.
    #[arg(long, default_value = "pixel3")]
    device: String,
    /// Workload to play (bench-day: 24 h of a user's app sessions).
    #[arg(long, default_value = "bench-day")]
    workload: String,
    /// Policy to run (one; see `floe list policies`).
    #[arg(long, default_value = "lru-cfs")]
    policy: String,
    /// Seed of every random choice.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    seed: u64,
    /// App catalog file replacing the embedded data/apps.toml.
    #[arg(long)]
    apps: Option<String>,
}

#[derive(clap::Args)]
struct ReplayArgs {
    /// The trace file.
    trace: std::path::PathBuf,
    /// The most pages the cache holds.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    cache_pages: u32,
    /// The page-level policy: `linux` (the simulator's two lists with workingset
    /// refault activation) or `lru` (plain LRU).
    #[arg(long, default_value = "linux", value_parser = ["linux", "lru"])]
    policy: String,
    /// Pages `linux` reclaims when a miss finds the cache full (the kernel's
    /// SWAP_CLUSTER_MAX by default; 1 evicts on demand).
    #[arg(long, value_name = "PAGES", default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..))]
    batch: u32,
    /// The trace's format, instead of the one its name implies.
    #[arg(long, value_parser = ["oracle-general", "csv"])]
    format: Option<String>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // Help and version go to standard output, usage errors to standard error; a
        // help text that cannot be written is a failure, not a success.
        Err(e) => std::process::exit(if e.print().is_err() { 2 } else { e.exit_code() }),
    };
    if !matches!(cli.cmd, Cmd::Daemon(_) | Cmd::Ctl { .. }) {
        // A report piped into `head` stops at the reader's end like any Unix filter,
        // instead of panicking on the closed pipe (Rust ignores SIGPIPE by default).
        // The daemon and `ctl` keep it ignored: they write to sockets whose peer may go.
        // SAFETY: called before any thread starts; SIG_DFL is a valid disposition.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    let r = match cli.cmd {
        Cmd::Sim(a) => sim(a),
        Cmd::List { what, apps } => list(what, apps.as_deref()),
        Cmd::Bench(a) => bench(a),
        Cmd::Replay(a) => replay(a),
        Cmd::Sweep(a) => sweep::sweep(a),
        Cmd::Experiment { name, quick, seeds, json, csv, report, cache, no_cache } => {
            // The names first: a mistyped one makes no cache directory.
            experiment_names(&name).and_then(|_| open_run_cache(cache.as_deref(), no_cache)).and_then(|()| {
                experiment(&name, quick, seeds.unwrap_or(if quick { 1 } else { FULL_SEEDS }), json, csv.as_deref(), report.as_deref())
            })
        }
        Cmd::Daemon(a) => daemon_cmd::run(a, &["daemon"]),
        Cmd::State { db, policy, set } => state(&db, policy.as_deref(), set.as_deref()),
        Cmd::Ctl { socket, request } => {
            // The answer goes to stdout, a refusal to stderr only (with status 2), so
            // that a script reading stdout never takes an error for an answer.
            floe_linux::daemon::ctl(std::path::Path::new(&socket), &request.join(" ")).map_err(anyhow::Error::from).and_then(
                |out| match out.strip_prefix("error: ") {
                    Some(e) => Err(anyhow::anyhow!("{}", e.trim())),
                    None => {
                        out!("{out}");
                        Ok(())
                    }
                },
            )
        }
    };
    // Standard output is line-buffered: what is left is written (and may fail) here.
    let r = r.and_then(|()| std::io::stdout().flush().context("cannot write to standard output"));
    if let Err(e) = r {
        eprintln!("floe: error: {e:#}");
        std::process::exit(2);
    }
}

fn state(db: &str, policy: Option<&str>, set: Option<&str>) -> Result<()> {
    let path = std::path::Path::new(db);
    if let Some(p) = policy {
        let (key, _) = floe_linux::state::key_policy(p);
        if floe_policies::lookup(key).is_none() {
            bail!("unknown policy `{key}` (see `floe list policies`)");
        }
    }
    if let (Some(p), Some(file)) = (policy, set) {
        // Everything is checked before the database is opened (and so created).
        let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {file}"))?;
        serde_json::from_str::<serde_json::Value>(&text).map_err(|e| anyhow::anyhow!("{file}:{}: {e}", e.line()))?;
        floe_linux::state::check(p, text.trim())
            .map_err(|e| anyhow::anyhow!("{file}: not a state the daemon would restore for `{p}`: {e}"))?;
        let mut store = floe_linux::state::Store::open(path)?;
        store.save(p, text.trim())?;
        outln!("{p}: state replaced from {file}");
        return Ok(());
    }
    if !path.exists() {
        bail!("{db}: no state database (the daemon creates it at `state_db`)");
    }
    let store = floe_linux::state::Store::open(path)?;
    let mut shown = 0;
    for (key, st, at) in store.list()? {
        // A policy's prepaging tables are kept under `POLICY/prepage-tables`.
        if policy.is_none_or(|want| key == want || floe_linux::state::key_policy(&key) == (want, true)) {
            outln!("{key} (saved at unix {at}): {st}");
            shown += 1;
        }
    }
    if shown == 0 {
        eprintln!("floe: {db} holds no saved state{}", policy.map(|p| format!(" for `{p}`")).unwrap_or_default());
    }
    Ok(())
}

fn catalog(path: Option<&str>) -> Result<Catalog> {
    Ok(match path {
        Some(p) => Catalog::load(p)?,
        None => Catalog::embedded()?,
    })
}

fn sim(a: SimArgs) -> Result<()> {
    let cat = catalog(a.apps.as_deref())?;
    let wl = Workload::load(&a.workload, &cat)?;
    // The main job: without --policy, the paper's baseline beside its scheme.
    let main_job = a.policy.is_empty();
    let mut a = a;
    if main_job {
        a.policy = main_job_policies(&wl.name).iter().map(|p| p.to_string()).collect();
    }
    let mut dev = match a.device.as_deref() {
        Some(d) => Device::load(d)?,
        None => wl.default_device()?,
    };
    if let Some(k) = a.lmkd.as_deref() {
        use floe_core::LmkdMode::*;
        dev.memory.lmkd = [Minfree, Psi, PsiMinfree].into_iter().find(|m| m.name() == k).expect("clap checks the value");
    }
    for (i, p) in a.policy.iter().enumerate() {
        // The same run twice would print two identical columns under one name.
        if a.policy[..i].contains(p) {
            bail!("--policy names `{p}` twice; each policy runs once");
        }
        let name = p.split_once(':').map_or(p.as_str(), |x| x.0);
        if floe_policies::lookup(name).is_none() {
            let known: Vec<_> = floe_policies::REGISTRY.iter().map(|e| e.name).collect();
            bail!("unknown policy `{name}` (known: {})", known.join(", "));
        }
        if let Err(e) = floe_policies::make_spec(p) {
            bail!("{e}");
        }
    }
    // The run checks this too; here the message names the flag.
    if let Some(b) = a.balloon_mib.filter(|&b| !dev.balloon_fits(b)) {
        bail!("--balloon-mib {}: {}", num(b), dev.balloon_rule());
    }
    if let Some(w) = a.bg_window_s.filter(|&w| !floe_sim::bg_window_fits(w)) {
        bail!("--bg-window-s {}: must be a number of seconds from 0 to {} (a week)", num(w), floe_sim::MAX_RUN_S);
    }
    if let Some(p) = a.cputester_pct.filter(|p| !(p.is_finite() && *p > 0.0 && *p < 100.0)) {
        bail!("--cputester-pct {}: must be above 0 and below 100 (percent of all cores)", num(p));
    }
    let opts = RunOptions {
        seed: a.seed,
        bg_apps: a.bg_apps,
        balloon_mib: a.balloon_mib,
        draw_bg: a.draw_bg,
        shuffle_rounds: a.shuffle_rounds,
        bg_window_s: a.bg_window_s,
        no_idle_growth: a.no_idle_growth,
        cputester_pct: a.cputester_pct,
    };
    if a.seed.checked_add(u64::from(a.seeds) - 1).is_none() {
        bail!("--seed {} --seeds {}: the last seed would pass {}", a.seed, a.seeds, u64::MAX);
    }
    let runs: Vec<RunRecord> = match &a.timeline {
        None => floe_lab::compare_seeds(&dev, &wl, &cat, &a.policy, &opts, a.seeds)?,
        Some(path) => {
            if !(a.timeline_step.is_finite() && a.timeline_step >= 0.001) {
                bail!("--timeline-step {}: must be a finite number of seconds, at least 0.001", num(a.timeline_step));
            }
            if path == "-" && a.json {
                bail!("--timeline - writes the CSV to standard output; it cannot share it with --json");
            }
            let out: Box<dyn std::io::Write> = if path == "-" {
                Box::new(std::io::stdout().lock())
            } else {
                Box::new(std::fs::File::create(path).with_context(|| format!("cannot write the timeline to {path}"))?)
            };
            let mut w = csv::Writer::from_writer(out);
            let step = floe_core::Nanos::from_secs_f64(a.timeline_step);
            let mut runs = Vec::new();
            // Rows are written as the run goes; a write error stops the run.
            let mut failed: Option<csv::Error> = None;
            for p in &a.policy {
                let rec = floe_sim::run_with_timeline(&dev, &wl, &cat, p, &opts, step, |s| match w.serialize(&s) {
                    Ok(()) => true,
                    Err(e) => {
                        failed = Some(e);
                        false
                    }
                });
                if let Some(e) = failed {
                    return Err(e).with_context(|| format!("cannot write the timeline to {path}"));
                }
                runs.push(rec?);
            }
            w.flush().with_context(|| format!("cannot write the timeline to {path}"))?;
            if path == "-" {
                return Ok(());
            }
            runs
        }
    };
    if let Some(path) = &a.csv {
        write_csv(path, &runs)?;
    }
    if a.trace.is_some() || a.report.is_some() {
        // The runs again, deterministic, their samples kept.
        let step = floe_core::Nanos::from_secs_f64(a.timeline_step);
        let mut traced = Vec::new();
        for p in &a.policy {
            let mut samples = Vec::new();
            let (_, apps) = floe_sim::timeline::run_with_app_events(&dev, &wl, &cat, p, &opts, step, |s| {
                samples.push(s);
                true
            })?;
            traced.push(floe_lab::export::TracedRun { policy: p.clone(), samples, apps });
        }
        if let Some(path) = &a.trace {
            let text = serde_json::to_string(&floe_lab::export::trace_json(&traced))?;
            std::fs::write(path, text).with_context(|| format!("cannot write the trace to {path}"))?;
        }
        if let Some(dir) = &a.report {
            let caption = format!("device {}, workload {}, seed {}", dev.name, wl.name, a.seed);
            let timeline = floe_lab::html::Timeline {
                caption: caption.clone(),
                runs: traced.into_iter().map(|t| (t.policy, t.samples)).collect(),
                step_s: a.timeline_step,
            };
            write_report(dir, &floe_lab::html::runs_page(&caption, &runs, Some(&timeline)))?;
        }
    }
    if a.json && a.per_app {
        let with_apps = runs
            .iter()
            .map(|r| {
                let mut v = serde_json::to_value(r)?;
                if let Some(o) = v.as_object_mut() {
                    o.insert("apps".into(), serde_json::to_value(&r.apps)?);
                }
                Ok(v)
            })
            .collect::<serde_json::Result<Vec<_>>>()?;
        outln!("{}", one_or_array(&with_apps)?);
    } else if a.json {
        outln!("{}", one_or_array(&runs)?);
    } else {
        // Where a name came from a file, say which: a copy of an embedded device keeps
        // its name.
        let from = |arg: Option<&str>, name: &str| match arg {
            Some(f) if f != name => format!("{name} (from {f})"),
            _ => name.to_string(),
        };
        let inputs = format!(
            "device {}  workload {}{}",
            from(a.device.as_deref(), &dev.name),
            from(Some(&a.workload), &wl.name),
            a.apps.as_deref().map(|f| format!("  apps from {f}")).unwrap_or_default()
        );
        let pair = main_job && a.policy.len() == 2;
        print_table(&runs, &a.policy, a.seeds as usize, &inputs, pair)?;
        if pair {
            let seeds = a.seeds as usize;
            outln!("{}", what_changed(&runs[..seeds], &runs[seeds..], &a.policy[0], &a.policy[1]));
            outln!("{LEGEND}");
        }
        if let Some(line) = exit_speeds(&runs, &a.policy, a.seeds as usize) {
            outln!("{line}");
        }
        if a.per_app {
            for run in runs.iter().step_by(a.seeds as usize) {
                outln!("\n{}", per_app_table(run));
            }
        }
    }
    Ok(())
}

/// `floe sim --per-app`: one row per app of `run`, in the workload's order.
fn per_app_table(run: &RunRecord) -> String {
    let mut out = format!("per app: {}, seed {} (measured part; state and memory at the end)\n", run.policy, run.seed);
    out += &format!(
        "{:<18} {:<10} {:>5} {:>5} {:>5} {:>7} {:>5} {:>9} {:>9} {:>10} {:>10} {:>9} {:>9} {:>9}\n",
        "app",
        "state",
        "cold",
        "warm",
        "kills",
        "freezes",
        "thaws",
        "rf_anon",
        "rf_file",
        "rcl_anon",
        "rcl_file",
        "cpu_s",
        "res_mib",
        "swap_mib"
    );
    for s in &run.apps {
        out += &format!(
            "{:<18} {:<10} {:>5} {:>5} {:>5} {:>7} {:>5} {:>9} {:>9} {:>10} {:>10} {:>9.2} {:>9.1} {:>9.1}\n",
            s.app,
            s.state,
            s.launches_cold,
            s.launches_warm,
            s.kills,
            s.freezes,
            s.thaws,
            s.refaults_anon,
            s.refaults_file,
            s.reclaimed_anon,
            s.reclaimed_file,
            s.cpu_ms / 1e3,
            s.resident_mib,
            s.swapped_mib
        );
    }
    out.trim_end().to_string()
}

/// The policies `floe sim` runs without `--policy`: the baseline the workload's paper
/// measured its scheme against, then the scheme (by the workload's name, `PAPER-...`);
/// lru-cfs alone for a workload of no paper.
fn main_job_policies(workload: &str) -> &'static [&'static str] {
    const PAIRS: [(&str, [&str; 2]); 5] = [
        ("ice-", ["lru-cfs", "ice"]),
        ("seal-", ["zswap", "seal"]),
        ("smartlmk-", ["android-lmk", "smartlmk"]),
        ("asap-", ["demand-paging", "asap"]),
        ("selective-", ["android-lmk", "selective-kill-first"]),
    ];
    PAIRS.iter().find(|(prefix, _)| workload.starts_with(prefix)).map_or(&["lru-cfs"], |(_, pair)| pair)
}

/// Under the main job's table: what the metrics mean, in short (crates/core/src/metrics.rs).
const LEGEND: &str = "\
fps: frames a second in the foreground; ria: share of frames over 16.6 ms (interaction_alerts: their count)
launch_ms_*: launch latency; switch_ms_mean: warm launches; caching_capability: warm launches a round after the first
refaults_fg|bg_anon|file: evicted pages read back, by the foreground or cached apps; refaults_system: by the system's
processes (devices that list them); reclaimed_pages: pages evicted (reclaimed_anon_pages: of them, to swap)
kills, freezes, thaws: apps killed, frozen, thawed; *_bytes: flash traffic, RAM held compressed (zram) at the end
cpu_ms_*: CPU time of apps, kswapd, (de)compression, prepaging; rows 0 under both policies are left out
Every metric's unit and meaning: floe list metrics";

/// One line saying what the scheme (`after`, runs over the same seeds as `before`)
/// changed against the baseline: the headline metrics that moved, in the metrics' order.
fn what_changed(before: &[RunRecord], after: &[RunRecord], base: &str, scheme: &str) -> String {
    let mean = |runs: &[RunRecord], f: &dyn Fn(&floe_core::Metrics) -> f64| floe_lab::report::mean(runs.iter().map(|r| f(&r.metrics)));
    type Get = fn(&floe_core::Metrics) -> f64;
    // (label, metric, digits): a whole-number count when digits is 0.
    let headline: [(&str, Get, usize); 11] = [
        ("fps", |m| if m.frames == 0 { f64::NAN } else { m.fps }, 2),
        ("slow frames", |m| m.interaction_alerts as f64, 0),
        ("mean launch ms", |m| if m.launches_cold + m.launches_warm == 0 { f64::NAN } else { m.launch_ms_mean }, 0),
        ("warm launches a round", |m| m.caching_capability, 2),
        ("background refaults", |m| (m.refaults_bg_anon + m.refaults_bg_file) as f64, 0),
        ("foreground refaults", |m| (m.refaults_fg_anon + m.refaults_fg_file) as f64, 0),
        ("system refaults", |m| m.refaults_system as f64, 0),
        ("pages reclaimed", |m| m.reclaimed_pages as f64, 0),
        ("kills", |m| m.kills as f64, 0),
        ("freezes", |m| m.freezes as f64, 0),
        ("MiB read from flash", |m| m.flash_read_bytes as f64 / 1_048_576.0, 0),
    ];
    // A count with thousands separated, a rate with its digits.
    let show = |x: f64, digits: usize| {
        let text = format!("{x:.digits$}");
        if digits > 0 {
            return text;
        }
        let (sign, num) = text.split_at(usize::from(text.starts_with('-')));
        let mut out = String::new();
        for (i, c) in num.chars().enumerate() {
            if i > 0 && (num.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        format!("{sign}{out}")
    };
    let mut moved = Vec::new();
    let mut same = Vec::new();
    for (label, get, digits) in headline {
        let (b, s) = (mean(before, &get), mean(after, &get));
        if b.is_nan() || s.is_nan() {
            continue;
        }
        // The frame rate always; the rest when it moved by 1 % or more.
        let pct = 100.0 * (s - b) / b;
        if label != "fps" && (show(b, digits) == show(s, digits) || pct.abs() < 1.0) {
            if b != 0.0 {
                same.push(label);
            }
            continue;
        }
        let pct = if b == 0.0 { String::new() } else { format!(" ({pct:+.1} %)") };
        moved.push(format!("{label} {} -> {}{pct}", show(b, digits), show(s, digits)));
    }
    let mut line = format!("What {scheme} changed against {base}: ");
    if moved.is_empty() {
        line.push_str("nothing in the headline metrics");
    } else {
        line.push_str(&moved.join(", "));
    }
    if !same.is_empty() {
        line.push_str(&format!("; {} unchanged", same.join(", ")));
    }
    line
}

/// On a device that models a killed process's exit (`cpu.exit_us_per_page`), how fast
/// each policy's kills freed memory (SmartLMK Fig. 15): the victims' RSS over their
/// summed kill-to-free times, victim by victim and, where a decision took several,
/// decision by decision, pooled over each policy's `seeds` runs. None when no run timed
/// an exit.
fn exit_speeds(runs: &[RunRecord], specs: &[String], seeds: usize) -> Option<String> {
    if runs.iter().all(|r| r.kills_by.exit_ns == 0) {
        return None;
    }
    let parts: Vec<String> = runs
        .chunks(seeds.max(1))
        .zip(specs)
        .map(|(group, p)| {
            let mut k = floe_core::KillCauses::default();
            for r in group {
                k += r.kills_by;
            }
            match (k.reclaim_mib_s_each(), k.reclaim_mib_s_batch()) {
                (Some(each), Some(batch)) if k.exit_batches < k.exits => {
                    format!("{p} {each:.0} a victim, {batch:.0} a kill decision")
                }
                (Some(each), _) => format!("{p} {each:.0}"),
                _ => format!("{p} none exited"),
            }
        })
        .collect();
    Some(format!("killed apps' memory freed as their exits ran, MiB/s: {}", parts.join("; ")))
}

/// Prints the runs side by side, one column per policy as the user named it (each
/// policy's `seeds` runs follow one another in `runs`), under a line naming the inputs
/// (`inputs`: device and workload), the seeds and the parameters all runs share. With
/// several seeds a cell is the mean and, after `±`, the standard deviation across them.
/// `compact` leaves out the rows that are 0 (or empty) in every column.
fn print_table(runs: &[RunRecord], specs: &[String], seeds: usize, inputs: &str, compact: bool) -> Result<()> {
    let r0 = &runs[0];
    let params: Vec<String> = r0
        .params
        .iter()
        .filter(|(k, v)| *k != "policy_params" && runs.iter().all(|r| r.params.get(*k) == Some(v)))
        .map(|(k, v)| format!("{k}={}", serde_json::to_string(v).unwrap_or_default()))
        .collect();
    let seed = match seeds {
        1 => format!("seed {}", r0.seed),
        n => format!("seeds {} to {} (mean ±standard deviation of {n} runs)", r0.seed, r0.seed + n as u64 - 1),
    };
    outln!("{inputs}  {seed}  {}", params.join(" "));
    let cols: Vec<serde_json::Value> = runs.iter().map(|r| serde_json::to_value(&r.metrics).expect("metrics serialise")).collect();
    let names: Vec<String> = match &cols[0] {
        serde_json::Value::Object(m) => m.keys().cloned().collect(),
        _ => vec![],
    };
    // serde_json keeps struct order only with preserve_order; use the schema's order.
    let order = metric_order();
    let mut rows: Vec<(&str, Vec<String>)> = Vec::new();
    for name in order.iter().filter(|n| names.iter().any(|m| m == *n)) {
        let cells = cols
            .chunks(seeds)
            .map(|group| {
                // A run that rendered no frame has no frame rate (the JSON keeps its 0).
                let frameless = |c: &serde_json::Value| matches!(*name, "fps" | "ria") && c["frames"].as_u64() == Some(0);
                let xs: Vec<&serde_json::Value> =
                    group.iter().filter(|c| !frameless(c)).map(|c| &c[*name]).filter(|v| !v.is_null()).collect();
                // Bytes in the table in binary units (the JSON keeps the count).
                let v: Vec<f64> = xs.iter().filter_map(|x| x.as_f64()).collect();
                let m = floe_lab::report::mean(v.iter().copied());
                if name.ends_with("_bytes") && !v.is_empty() && m != 0.0 {
                    let (d, unit) = byte_unit(m);
                    return match v.len() {
                        1 if d == 1.0 => format!("{m:.0} B"),
                        1 => format!("{:.1} {unit}", m / d),
                        _ => format!("{:.1} ±{:.1} {unit}", m / d, floe_lab::report::stddev(&v) / d),
                    };
                }
                match xs.as_slice() {
                    [] => "-".to_string(),
                    [serde_json::Value::Number(n)] if n.is_f64() => format!("{:.3}", n.as_f64().unwrap()),
                    [one] => one.to_string(),
                    many => {
                        let v: Vec<f64> = many.iter().filter_map(|x| x.as_f64()).collect();
                        let (m, sd) = (floe_lab::report::mean(v.iter().copied()), floe_lab::report::stddev(&v));
                        if many.iter().all(|x| x.is_u64()) {
                            format!("{m:.1} ±{sd:.1}")
                        } else {
                            format!("{m:.3} ±{sd:.3}")
                        }
                    }
                }
            })
            .collect::<Vec<String>>();
        if compact && cells.iter().all(|c| c.trim_start_matches(['0', '.', '±', ' ']).is_empty() || c == "-") {
            continue;
        }
        rows.push((name, cells));
    }
    let widest = rows.iter().flat_map(|r| r.1.iter().map(|c| c.chars().count())).max().unwrap_or(0);
    let width = specs.iter().map(|p| p.len()).max().unwrap_or(8).max(widest).max(12);
    out!("{:<20}", "metric");
    for p in specs {
        out!(" {p:>width$}");
    }
    writeln!(std::io::stdout()).context("cannot write to standard output")?;
    for (name, cells) in rows {
        out!("{name:<20}");
        for c in cells {
            out!(" {c:>width$}");
        }
        writeln!(std::io::stdout()).context("cannot write to standard output")?;
    }
    Ok(())
}

/// The metrics in the order of the schema (DESIGN.md "Metrics"): name, unit and
/// meaning (crates/core/src/metrics.rs), for the table's rows and `floe list metrics`.
const METRICS: [(&str, &str, &str); 32] = [
    ("fps", "frames/s", "frames a second while an interactive app was in the foreground"),
    ("ria", "ratio", "share of frames that took longer than 16.6 ms (ratio of interaction alerts)"),
    ("interaction_alerts", "frames", "frames that took longer than 16.6 ms"),
    ("frames", "frames", "frames rendered in the foreground"),
    ("launches_cold", "launches", "launches that started the app's process anew"),
    ("launches_warm", "launches", "launches that found the app cached (an app switch)"),
    ("launch_ms_mean", "ms", "mean launch latency, cold and warm"),
    ("launch_ms_p50", "ms", "median launch latency"),
    ("launch_ms_p95", "ms", "95th percentile of launch latency"),
    ("launch_ms_stddev", "ms", "standard deviation of launch latency"),
    ("launch_ms_total", "ms", "all launches' latency added up"),
    ("switch_ms_mean", "ms", "mean latency of warm launches (an app switch back to a cached app)"),
    ("caching_capability", "launches", "warm launches per round after the first, averaged (0 for one-round workloads)"),
    ("refaults_fg_anon", "pages", "evicted anonymous pages the foreground app read back"),
    ("refaults_fg_file", "pages", "evicted file pages the foreground app read back"),
    ("refaults_bg_anon", "pages", "evicted anonymous pages cached apps read back"),
    ("refaults_bg_file", "pages", "evicted file pages cached apps read back"),
    ("refaults_system", "pages", "evicted pages the system's own processes read back (devices with a [system] table)"),
    ("reclaimed_pages", "pages", "pages evicted by reclaim"),
    ("reclaimed_anon_pages", "pages", "of those, anonymous pages sent to swap (the kernel's pgsteal_anon; Ice watched pswpout)"),
    ("kills", "apps", "apps killed"),
    ("freezes", "apps", "apps frozen"),
    ("thaws", "apps", "apps thawed"),
    ("flash_read_bytes", "bytes", "bytes read from flash"),
    ("flash_write_bytes", "bytes", "bytes written to flash"),
    ("zram_stored_bytes", "bytes", "uncompressed bytes held in compressed RAM at the end of the run"),
    ("cpu_ms_app", "ms", "CPU time of the apps"),
    ("cpu_ms_kswapd", "ms", "CPU time of kswapd, the kernel's background reclaim"),
    ("cpu_ms_compress", "ms", "CPU time of compressing and decompressing swapped pages"),
    ("cpu_ms_prepage", "ms", "CPU time of prepaging"),
    ("prepage_precision", "ratio", "share of prepaged pages that were used; null when nothing was prepaged"),
    ("prepage_recall", "ratio", "share of pages needed at switch-in that were prepaged; null when nothing was prepaged"),
];

/// Metric names in the order of the schema (DESIGN.md "Metrics").
fn metric_order() -> Vec<&'static str> {
    METRICS.iter().map(|m| m.0).collect()
}

/// `bytes` in the largest binary unit under which it is at least 1 (B, KiB, MiB, GiB),
/// and that unit's divisor; a table shows a mean and its deviation in the mean's unit.
fn byte_unit(bytes: f64) -> (f64, &'static str) {
    const UNITS: [(f64, &str); 3] = [(1_073_741_824.0, "GiB"), (1_048_576.0, "MiB"), (1024.0, "KiB")];
    UNITS.into_iter().find(|(d, _)| bytes.abs() >= *d).unwrap_or((1.0, "B"))
}

fn list(what: ListWhat, apps: Option<&str>) -> Result<()> {
    match what {
        ListWhat::Devices => {
            for n in floe_sim::config::embedded_names("devices") {
                let d = Device::load(n)?;
                let killer = d.memory.lmkd.name();
                outln!(
                    "{:<14} {:>6.0} MiB RAM, {:>6.0} MiB to apps, {} cores, {:<8} {:<11}  {}",
                    d.name,
                    d.memory.ram_mib,
                    d.memory.app_mem_mib,
                    d.cpu.cores,
                    d.flash.kind,
                    killer,
                    d.description
                );
            }
        }
        ListWhat::Apps => {
            for a in catalog(apps)?.apps {
                outln!(
                    "{:<18} {:<13} anon {:>5.0} MiB  file {:>5.0} MiB  cold {:>6.0} ms  {}",
                    a.name,
                    a.category,
                    a.anon_mib,
                    a.file_mib,
                    a.cold_launch_ms,
                    a.package
                );
            }
        }
        ListWhat::Workloads => {
            let cat = catalog(apps)?;
            for n in floe_sim::config::embedded_names("workloads") {
                let w = Workload::load(n, &cat).with_context(|| format!("workload {n}"))?;
                outln!("{:<16} {:>3} launches x {:>2} rounds on {:<12} {}", w.name, w.sequence.len(), w.rounds, w.device, w.description);
            }
        }
        ListWhat::Policies => {
            for e in floe_policies::REGISTRY {
                outln!("{:<22} {}  [{}]", e.name, e.about, e.source);
            }
        }
        ListWhat::Experiments => {
            for (name, about) in floe_lab::EXPERIMENTS {
                outln!("{name:<11} {about}");
            }
        }
        ListWhat::Metrics => {
            for (name, unit, meaning) in METRICS {
                outln!("{name:<20} {unit:<9} {meaning}");
            }
        }
    }
    Ok(())
}

/// Seed replicates of a full `floe experiment` run: enough for each effect's 95 %
/// interval to tell an effect from the noise.
const FULL_SEEDS: u32 = 5;

/// The experiments `name` names (`all`: the five papers' evaluations), each checked:
/// known, and named once.
fn experiment_names(name: &str) -> Result<Vec<&str>> {
    let names: Vec<&str> = if name == "all" { floe_lab::evaluations().collect() } else { name.split(',').collect() };
    for (i, n) in names.iter().enumerate() {
        if !floe_lab::EXPERIMENTS.iter().any(|e| e.0 == *n) {
            bail!("{} or `all`", floe_lab::LabError::Unknown(n.to_string()));
        }
        if names[..i].contains(n) {
            bail!("experiment `{n}` is named twice; each runs once");
        }
    }
    Ok(names)
}

fn experiment(name: &str, quick: bool, seeds: u32, json: bool, csv: Option<&str>, report: Option<&str>) -> Result<()> {
    let names = experiment_names(name)?;
    // A run two experiments share (the calibration's controls are the papers' runs) is
    // made once.
    floe_lab::keep_runs(true);
    let mut reports = Vec::new();
    for (i, n) in names.iter().enumerate() {
        let report = run_one_experiment(n, quick, seeds, !json)?;
        if !json {
            // Each report as it is done, then (with several) the count of their findings.
            out!("{}{}", if i > 0 { "\n" } else { "" }, report.text());
        }
        reports.push(report);
    }
    if let Some(path) = csv {
        let runs: Vec<_> = reports.iter().flat_map(|r| r.runs.iter().cloned()).collect();
        write_csv(path, &runs)?;
    }
    if let Some(dir) = report {
        // `all` leaves the calibration out; its page shows the controls too.
        let mut shown = reports.clone();
        if name == "all" {
            shown.push(run_one_experiment(floe_lab::calibration::NAME, quick, seeds, !json)?);
        }
        write_report(dir, &floe_lab::html::experiments_report(&shown, quick)?)?;
    }
    if json {
        let records: Vec<_> = reports.iter().map(|r| r.record()).collect();
        outln!("{}", one_or_array(&records)?);
    } else if reports.len() > 1 {
        out!("\n{}", floe_lab::report::summary(&reports));
    }
    Ok(())
}

/// Where `floe experiment` keeps finished runs: `--cache DIR`, or by default
/// $FLOE_CACHE_DIR (empty: nowhere), $XDG_CACHE_HOME/floe/runs or ~/.cache/floe/runs.
/// A directory named with `--cache` that cannot be used is an error; the default one
/// only a note, the experiment then keeping no runs.
fn open_run_cache(cache: Option<&str>, no_cache: bool) -> Result<()> {
    if no_cache {
        return Ok(());
    }
    if let Some(dir) = cache {
        floe_lab::store_runs(Some(std::path::Path::new(dir))).with_context(|| format!("cannot keep runs in {dir}"))?;
        return Ok(());
    }
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(std::path::PathBuf::from);
    let dir = match std::env::var_os("FLOE_CACHE_DIR") {
        Some(v) if v.is_empty() => return Ok(()),
        Some(v) => std::path::PathBuf::from(v),
        None => match var("XDG_CACHE_HOME").or_else(|| var("HOME").map(|h| h.join(".cache"))) {
            Some(base) => base.join("floe").join("runs"),
            None => return Ok(()),
        },
    };
    if let Err(e) = floe_lab::store_runs(Some(&dir)) {
        eprintln!("floe: runs are not kept ({}: {e}); --cache DIR names another place", dir.display());
    }
    Ok(())
}

/// Writes the report page `html` to `DIR/index.html` (floe_lab::html), saying where on
/// standard error.
fn write_report(dir: &str, html: &str) -> Result<()> {
    let path = floe_lab::html::write(std::path::Path::new(dir), html).with_context(|| format!("cannot write the report to {dir}"))?;
    eprintln!("floe: report written to {}", path.display());
    Ok(())
}

/// Writes `runs` to `path` as CSV (floe_lab::export).
fn write_csv(path: &str, runs: &[floe_core::RunRecord]) -> Result<()> {
    let text = floe_lab::export::runs_csv(runs).context("cannot make the CSV")?;
    std::fs::write(path, text).with_context(|| format!("cannot write the CSV to {path}"))
}

/// Pretty JSON of `xs`: the one object alone, or an array of several.
fn one_or_array<T: serde::Serialize>(xs: &[T]) -> serde_json::Result<String> {
    match xs {
        [one] => serde_json::to_string_pretty(one),
        many => serde_json::to_string_pretty(many),
    }
}

/// Runs experiment `name`, with a bar on stderr while its runs go.
fn run_one_experiment(name: &str, quick: bool, seeds: u32, show: bool) -> Result<floe_lab::Report> {
    // indicatif draws nothing when stderr is not a terminal, so piped and CI output
    // stay clean; with --json (`show` false) it draws nothing either.
    let bar = if show { indicatif::ProgressBar::new(0) } else { indicatif::ProgressBar::hidden() };
    // The bar fills by the runs' cost (their simulated seconds), so its estimate holds
    // while the longest runs go first; the message counts the runs.
    bar.set_style(
        indicatif::ProgressStyle::with_template("{prefix} [{bar:30}] {msg}, {elapsed} (~{eta} left)")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_prefix(format!("experiment {name}"));
    // Where no bar is drawn (stderr is a file or a pipe: CI logs, batch jobs), a line
    // every minute says how far the runs are (FLOE_HEARTBEAT_S sets the period).
    let heartbeat = (show && !std::io::IsTerminal::is_terminal(&std::io::stderr())).then(|| {
        let every = std::env::var("FLOE_HEARTBEAT_S").ok().and_then(|v| v.parse::<f64>().ok()).filter(|v| *v >= 0.0).unwrap_or(60.0);
        (std::time::Duration::from_secs_f64(every), Instant::now(), std::sync::Mutex::new(Instant::now()))
    });
    // Steps come from several threads: one lock keeps the batch's tally whole.
    let tally = std::sync::Mutex::new(Tally::default());
    let progress = |step: floe_lab::Step| {
        let mut t = tally.lock().unwrap_or_else(|e| e.into_inner());
        match step {
            floe_lab::Step::Begin { runs, done } => {
                *t = Tally { runs, done, started: Some(Instant::now()), ..Tally::default() };
                bar.set_length(0);
                bar.set_position(0);
            }
            floe_lab::Step::Cost { cost } => {
                t.cost = cost;
                bar.set_length(cost.ceil() as u64);
            }
            floe_lab::Step::Done { runs, cost } => {
                t.done += runs;
                t.cost_done += cost;
                bar.set_position(t.cost_done.round() as u64);
            }
        }
        bar.set_message(format!("{}/{} runs", t.done, t.runs));
        if let Some((every, t0, last)) = &heartbeat {
            let mut last = last.lock().unwrap_or_else(|e| e.into_inner());
            if matches!(step, floe_lab::Step::Done { .. }) && last.elapsed() >= *every {
                *last = Instant::now();
                let batch = t.started.map_or(0.0, |s| s.elapsed().as_secs_f64());
                eprintln!(
                    "experiment {name}: {}/{} runs done, {:.0} s, {} left at this pace",
                    t.done,
                    t.runs,
                    t0.elapsed().as_secs_f64(),
                    time_left(batch, t.cost_done, t.cost)
                );
            }
        }
    };
    let before = floe_lab::runs_from_store();
    let report = floe_lab::run_experiment(name, quick, seeds, &progress);
    bar.finish_and_clear();
    let taken = floe_lab::runs_from_store() - before;
    if show && taken > 0 {
        eprintln!("floe: experiment {name}: {taken} runs taken from the run cache (--no-cache runs them afresh)");
    }
    Ok(report?)
}

/// An experiment's batch of runs as its steps have told it (`floe_lab::Step`).
#[derive(Default)]
struct Tally {
    runs: usize,
    done: usize,
    /// What the runs to simulate cost, and what of it the runs done took.
    cost: f64,
    cost_done: f64,
    started: Option<Instant>,
}

/// The time the rest of a batch's runs would take at the pace so far, as the heartbeat
/// prints it (seconds under two minutes, then minutes): `taken` seconds for `done` of
/// the runs' `cost` (their simulated seconds, which runs taken from the cache do not
/// add to). A run's time follows its simulated seconds only roughly: SEAL's take about
/// 1.5 times as long a simulated second as Ice's frame-rate runs.
fn time_left(taken: f64, done: f64, cost: f64) -> String {
    let left = if done >= cost {
        0.0
    } else if done > 0.0 {
        taken * (cost - done) / done
    } else {
        f64::NAN
    };
    match left {
        l if !l.is_finite() => "an unknown time".to_string(),
        l if l < 120.0 => format!("about {l:.0} s"),
        l => format!("about {:.0} min", l / 60.0),
    }
}

fn bench(a: BenchArgs) -> Result<()> {
    let cat = catalog(a.apps.as_deref())?;
    let wl = Workload::load(&a.workload, &cat)?;
    let dev = Device::load(&a.device)?;
    let name = a.policy.split_once(':').map_or(a.policy.as_str(), |x| x.0);
    if floe_policies::lookup(name).is_none() {
        let known: Vec<_> = floe_policies::REGISTRY.iter().map(|e| e.name).collect();
        bail!("unknown policy `{name}` (bench runs one; known: {})", known.join(", "));
    }
    let policy = floe_policies::make_spec(&a.policy).map_err(anyhow::Error::msg)?;
    let opts = RunOptions { seed: a.seed, ..Default::default() };
    let t0 = Instant::now();
    let mut sim = Sim::try_new(&dev, &wl, &cat, policy, &opts)?;
    sim.run_to_end();
    let wall = t0.elapsed().as_secs_f64();
    let simulated = sim.now_ns().as_secs_f64();
    let touches = sim.touches();
    outln!("device {} ({:.0} MiB RAM)  workload {}  policy {}", dev.name, dev.memory.ram_mib, wl.name, a.policy);
    outln!("simulated          {:>12.0} s ({:.2} days)", simulated, simulated / 86_400.0);
    outln!("wall               {:>12.3} s", wall);
    outln!("page accesses      {:>12}", touches);
    outln!("pages scanned      {:>12}  reclaimed {}", sim.scanned(), sim.reclaimed());
    outln!("accesses / wall s  {:>12.3e}", touches as f64 / wall);
    outln!("sim s / wall s     {:>12.0}", simulated / wall);
    Ok(())
}

fn replay(a: ReplayArgs) -> Result<()> {
    use floe_sim::replay::{ReplayOptions, ReplayPolicy, Trace, TraceFormat};
    let format = match a.format.as_deref() {
        Some("csv") => TraceFormat::Csv,
        Some(_) => TraceFormat::OracleGeneral,
        None => TraceFormat::of_path(&a.trace),
    };
    let policy = ReplayPolicy::from_name(&a.policy).context("unknown replay policy")?;
    let opts = ReplayOptions { policy, cache_pages: a.cache_pages, batch: a.batch };
    let t0 = Instant::now();
    let trace = Trace::read(&a.trace, format)?;
    let read_s = t0.elapsed().as_secs_f64();
    let stats = floe_sim::replay::replay(&trace, &opts);
    let total_s = t0.elapsed().as_secs_f64();
    let per_s = stats.requests as f64 / total_s;
    if a.json {
        let mut v = serde_json::to_value(&stats)?;
        let o = v.as_object_mut().context("replay stats are an object")?;
        o.insert("trace".into(), a.trace.display().to_string().into());
        o.insert("format".into(), format.name().into());
        o.insert("policy".into(), policy.name().into());
        o.insert("cache_pages".into(), a.cache_pages.into());
        o.insert("batch".into(), a.batch.into());
        o.insert("objects".into(), trace.objects.into());
        o.insert("skipped_size_zero".into(), trace.skipped.into());
        o.insert("read_s".into(), read_s.into());
        o.insert("replay_s".into(), (total_s - read_s).into());
        o.insert("requests_per_s".into(), per_s.into());
        outln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    outln!("trace        {} ({}, {} requests, {} objects)", a.trace.display(), format.name(), stats.requests, trace.objects);
    if trace.skipped > 0 {
        outln!("skipped      {} records of size 0", trace.skipped);
    }
    let batch = if policy == ReplayPolicy::Linux { format!(", reclaim batch {}", a.batch) } else { String::new() };
    outln!("policy       {}, cache {} pages{batch}", policy.name(), a.cache_pages);
    outln!("miss ratio   {:.6} ({} misses)", stats.miss_ratio, stats.misses);
    outln!("refaults     {}  activated {}", stats.refaults, stats.activations);
    outln!("evictions    {}  scanned {}  promoted {}", stats.evictions, stats.scanned, stats.promotions);
    outln!("requests/s   {:.3e} ({:.3} s: {:.3} s reading, {:.3} s replaying)", per_s, total_s, read_s, total_s - read_s);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::time_left;

    /// The heartbeat's estimate scales the time so far by the cost left over the cost
    /// done, in seconds under two minutes and in minutes above; with nothing left to
    /// simulate (every run done, or taken from the cache) nothing is left.
    #[test]
    fn the_time_left_is_the_pace_so_far_over_the_cost_left() {
        assert_eq!(time_left(30.0, 1_000.0, 4_000.0), "about 90 s");
        assert_eq!(time_left(600.0, 100.0, 400.0), "about 30 min");
        assert_eq!(time_left(55.0, 7.0, 7.0), "about 0 s");
        assert_eq!(time_left(0.1, 0.0, 0.0), "about 0 s");
        assert_eq!(time_left(5.0, 0.0, 7.0), "an unknown time");
    }
}
