//! Sweeps: the lists of a sweep file (devices, workloads, policies, run flags, seeds)
//! crossed into runs in a fixed order; a shard of them run into a JSON Lines file that a
//! re-run resumes; shards merged back into one file, checked for missing and duplicated
//! runs. `floe sweep` and the Python package both run sweeps through here.
//!
//! The order of the runs: devices outermost, then workloads, policies, the run flags'
//! combinations, and seeds innermost, each list in the order the file gives it. The
//! flags' combinations cross the flags by name in alphabetical order, the last name
//! changing fastest. Shard I of N (from 1) holds the runs whose index (from 0) leaves
//! I - 1 over when divided by N: every N-th run, so slow devices and workloads are
//! spread over the shards.
//!
//! One line per run: `{"key":{...},"run":{...}}`, the run's key (device, workload and
//! policy as the sweep file names them, seed, and the flags it sets) and its record as
//! `floe sim --json` prints it, in a fixed field order. The same key gives the same line
//! byte for byte wherever it runs.

use floe_core::input::{num, parse, ConfigError, Input};
use floe_core::{Param, RunRecord};
use floe_sim::{Catalog, Device, RunOptions, SimError, Workload};
use rayon::prelude::*;
use serde::de::{self, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The most runs a sweep may expand into.
pub const MAX_RUNS: usize = 10_000_000;

/// The flags a run sets, as `floe sim` takes them (`--bg-apps`, `--balloon-mib`, ...)
/// and the shortening of a workload `floe experiment --quick` uses (`use_s`, `rounds`,
/// `launches`). Absent: the workload's or device's own. Serialised in this (the
/// alphabetical) order, absent flags left out.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flags {
    /// App catalog file replacing the embedded data/apps.toml.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apps: Option<String>,
    /// Memory pinned away from apps, MiB (the workload's balloon otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub balloon_mib: Option<f64>,
    /// Apps cached in the background before the measured part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bg_apps: Option<u32>,
    /// Cached apps' background activity ends this long after they leave the foreground.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bg_window_s: Option<f64>,
    /// A CPU hog beside the workload taking this percentage of all cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cputester_pct: Option<f64>,
    /// Draw the background apps from the workload's pool with the seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draw_bg: Option<bool>,
    /// Keep only the first this many launches of the workload's sequence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launches: Option<u32>,
    /// The device's low-memory killer: `minfree`, `psi` or `psi-minfree`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lmkd: Option<String>,
    /// The workload's number of rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<u32>,
    /// Launch each round's apps in a fresh order drawn with the seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shuffle_rounds: Option<bool>,
    /// The workload's foreground time per launch, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub use_s: Option<f64>,
}

/// The flag names, in the order of [`Flags`].
pub const FLAG_NAMES: [&str; 11] =
    ["apps", "balloon_mib", "bg_apps", "bg_window_s", "cputester_pct", "draw_bg", "launches", "lmkd", "rounds", "shuffle_rounds", "use_s"];

/// One run of a sweep: what names it, and what a line of a shard's output starts with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunKey {
    /// An embedded device or a device file; null: the device the workload names.
    pub device: Option<String>,
    /// An embedded workload or a workload file.
    pub workload: String,
    /// A policy spec, `NAME[:key=value...]`.
    pub policy: String,
    pub seed: u64,
    pub flags: Flags,
}

impl RunKey {
    /// The key as it is written in a line: two keys are the same run if and only if
    /// this is the same.
    pub fn id(&self) -> String {
        serde_json::to_string(self).expect("a key serialises")
    }
}

impl fmt::Display for RunKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.id())
    }
}

/// A problem with a sweep: its file, a run, or a shard's output.
#[derive(Debug)]
pub enum SweepError {
    /// The sweep file (or a device, workload or catalog it names).
    Spec(ConfigError),
    /// A run that failed.
    Run { key: String, error: SimError },
    /// A file that cannot be read or written.
    Io { path: String, error: std::io::Error },
    /// A shard's output that does not fit the sweep: a line that is not a run, a run
    /// of another sweep or shard, a run twice, runs missing.
    Output(String),
}

impl fmt::Display for SweepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SweepError::Spec(e) => write!(f, "{e}"),
            SweepError::Run { key, error } => write!(f, "run {key}: {error}"),
            SweepError::Io { path, error } => write!(f, "{path}: {error}"),
            SweepError::Output(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for SweepError {}

impl From<ConfigError> for SweepError {
    fn from(e: ConfigError) -> Self {
        SweepError::Spec(e)
    }
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> SweepError + '_ {
    move |error| SweepError::Io { path: path.display().to_string(), error }
}

/// One value, or a list of values to cross.
struct OneOrMany<T>(Vec<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for OneOrMany<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = OneOrMany<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a value or a list of values")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(x) = seq.next_element()? {
                    out.push(x);
                }
                Ok(OneOrMany(out))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                T::deserialize(v.into_deserializer()).map(|x| OneOrMany(vec![x]))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                T::deserialize(v.into_deserializer()).map(|x| OneOrMany(vec![x]))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                T::deserialize(v.into_deserializer()).map(|x| OneOrMany(vec![x]))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                T::deserialize(v.into_deserializer()).map(|x| OneOrMany(vec![x]))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                T::deserialize(v.into_deserializer()).map(|x| OneOrMany(vec![x]))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// `seeds`: a list, or `{ first = F, count = N }` for F, F + 1, ..., F + N - 1.
struct Seeds(Vec<u64>);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SeedRange {
    first: u64,
    count: u64,
}

impl<'de> Deserialize<'de> for Seeds {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Seeds;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of seeds or a table `{ first = F, count = N }`")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Seeds, A::Error> {
                let mut out = Vec::new();
                while let Some(x) = seq.next_element()? {
                    out.push(x);
                }
                Ok(Seeds(out))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Seeds, A::Error> {
                let r = SeedRange::deserialize(de::value::MapAccessDeserializer::new(map))?;
                if r.count == 0 || r.count > MAX_RUNS as u64 {
                    return Err(de::Error::custom(format!("`count` must be from 1 to {MAX_RUNS}")));
                }
                if r.first.checked_add(r.count - 1).is_none() {
                    return Err(de::Error::custom(format!("the last seed would pass {}", u64::MAX)));
                }
                Ok(Seeds((r.first..r.first + r.count).collect()))
            }
        }
        d.deserialize_any(V)
    }
}

/// The flags' lists, as a sweep file's `[flags]` table gives them.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FlagLists {
    apps: Option<OneOrMany<String>>,
    balloon_mib: Option<OneOrMany<f64>>,
    bg_apps: Option<OneOrMany<u32>>,
    bg_window_s: Option<OneOrMany<f64>>,
    cputester_pct: Option<OneOrMany<f64>>,
    draw_bg: Option<OneOrMany<bool>>,
    launches: Option<OneOrMany<u32>>,
    lmkd: Option<OneOrMany<String>>,
    rounds: Option<OneOrMany<u32>>,
    shuffle_rounds: Option<OneOrMany<bool>>,
    use_s: Option<OneOrMany<f64>>,
}

/// A sweep file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SpecFile {
    #[serde(default)]
    devices: Option<Vec<String>>,
    workloads: Vec<String>,
    policies: Vec<String>,
    seeds: Seeds,
    #[serde(default)]
    flags: FlagLists,
}

/// A sweep: its runs in order, and the directory its relative file names are taken from.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The sweep file's name in messages.
    pub file: String,
    /// Where relative device, workload and catalog files are: the sweep file's directory.
    pub base: PathBuf,
    pub runs: Vec<RunKey>,
}

/// An embedded name under `dir`, as it is; a file name, taken from `base`.
fn resolve(base: &Path, dir: &str, name: &str) -> String {
    if floe_sim::config::embedded_names(dir).contains(&name) {
        name.to_string()
    } else {
        base.join(name).display().to_string()
    }
}

/// The lmkd modes a flag may name.
fn lmkd_mode(name: &str) -> Option<floe_core::LmkdMode> {
    use floe_core::LmkdMode::*;
    [Minfree, Psi, PsiMinfree].into_iter().find(|m| m.name() == name)
}

impl Sweep {
    /// Reads and checks the sweep file at `path`.
    pub fn load(path: &Path) -> Result<Sweep, SweepError> {
        let src = std::fs::read_to_string(path).map_err(io_error(path))?;
        let base = path.parent().unwrap_or(Path::new("")).to_path_buf();
        Ok(Sweep::parse(&path.display().to_string(), &src, &base)?)
    }

    /// Parses and checks a sweep file's text; `file` names it in messages, `base` is the
    /// directory relative file names are taken from.
    pub fn parse(file: &str, src: &str, base: &Path) -> Result<Sweep, ConfigError> {
        let input = Input::new(file, src);
        let spec: SpecFile = parse(&input)?;
        Sweep::build(file, spec, base, &|path, message| input.error(path, message))
    }

    /// A sweep given as JSON (the Python package's dicts), its lists as a sweep file's;
    /// `base` is the directory relative file names are taken from.
    pub fn from_json(text: &str, base: &Path) -> Result<Sweep, ConfigError> {
        let file = "sweep spec";
        let spec: SpecFile =
            serde_json::from_str(text).map_err(|e| ConfigError { file: file.into(), line: None, field: None, message: e.to_string() })?;
        let at = |path: &str, message: String| {
            let field: Vec<&str> = path.split('.').map(|p| p.split('[').next().unwrap_or(p)).collect();
            ConfigError { file: file.into(), line: None, field: Some(field.join(".")), message }
        };
        Sweep::build(file, spec, base, &at)
    }

    /// Checks the lists and crosses them.
    fn build(file: &str, spec: SpecFile, base: &Path, at: &dyn Fn(&str, String) -> ConfigError) -> Result<Sweep, ConfigError> {
        fn distinct<T: PartialEq>(
            xs: &[T],
            what: &str,
            show: impl Fn(&T) -> String,
            at: &dyn Fn(&str, String) -> ConfigError,
        ) -> Result<(), ConfigError> {
            if xs.is_empty() {
                return Err(at(what, "the list is empty: a sweep crosses lists of one value or more".into()));
            }
            for (i, x) in xs.iter().enumerate() {
                if xs[..i].contains(x) {
                    return Err(at(&format!("{what}[{i}]"), format!("{} is listed twice; each run is run once", show(x))));
                }
            }
            Ok(())
        }
        let quote = |s: &String| format!("`{s}`");
        if let Some(d) = &spec.devices {
            distinct(d, "devices", quote, at)?;
        }
        distinct(&spec.workloads, "workloads", quote, at)?;
        distinct(&spec.policies, "policies", quote, at)?;
        distinct(&spec.seeds.0, "seeds", |s| format!("seed {s}"), at)?;
        let f = &spec.flags;
        macro_rules! list {
            ($name:ident, $show:expr) => {{
                match &f.$name {
                    None => vec![None],
                    Some(v) => {
                        distinct(&v.0, concat!("flags.", stringify!($name)), $show, at)?;
                        v.0.iter().cloned().map(Some).collect()
                    }
                }
            }};
        }
        let shown = |x: &f64| num(*x);
        let apps: Vec<Option<String>> = list!(apps, quote);
        let balloon: Vec<Option<f64>> = list!(balloon_mib, shown);
        let bg_apps: Vec<Option<u32>> = list!(bg_apps, |x: &u32| x.to_string());
        let bg_window: Vec<Option<f64>> = list!(bg_window_s, shown);
        let cputester: Vec<Option<f64>> = list!(cputester_pct, shown);
        let draw_bg: Vec<Option<bool>> = list!(draw_bg, |x: &bool| x.to_string());
        let launches: Vec<Option<u32>> = list!(launches, |x: &u32| x.to_string());
        let lmkd: Vec<Option<String>> = list!(lmkd, quote);
        let rounds: Vec<Option<u32>> = list!(rounds, |x: &u32| x.to_string());
        let shuffle: Vec<Option<bool>> = list!(shuffle_rounds, |x: &bool| x.to_string());
        let use_s: Vec<Option<f64>> = list!(use_s, shown);

        // Each value on its own.
        for (i, p) in spec.policies.iter().enumerate() {
            let name = p.split_once(':').map_or(p.as_str(), |x| x.0);
            if floe_policies::lookup(name).is_none() {
                let known: Vec<_> = floe_policies::REGISTRY.iter().map(|e| e.name).collect();
                return Err(at(&format!("policies[{i}]"), format!("unknown policy `{name}` (known: {})", known.join(", "))));
            }
            if let Err(e) = floe_policies::make_spec(p) {
                return Err(at(&format!("policies[{i}]"), e));
            }
        }
        let check = |name: &str, i: usize, ok: bool, rule: &str, v: String| {
            if ok {
                Ok(())
            } else {
                Err(at(&format!("flags.{name}[{i}]"), format!("{v}: {rule}")))
            }
        };
        for (i, w) in bg_window.iter().flatten().enumerate() {
            check("bg_window_s", i, floe_sim::bg_window_fits(*w), "must be a number of seconds from 0 to a week", num(*w))?;
        }
        for (i, p) in cputester.iter().flatten().enumerate() {
            check("cputester_pct", i, p.is_finite() && *p > 0.0 && *p < 100.0, "must be above 0 and below 100", num(*p))?;
        }
        for (i, u) in use_s.iter().flatten().enumerate() {
            check("use_s", i, u.is_finite() && *u > 0.0 && *u <= floe_sim::MAX_RUN_S, "must be above 0 and at most a week", num(*u))?;
        }
        for (i, r) in rounds.iter().flatten().enumerate() {
            check("rounds", i, *r >= 1, "must be at least 1", r.to_string())?;
        }
        for (i, n) in launches.iter().flatten().enumerate() {
            check("launches", i, *n >= 1, "must be at least 1", n.to_string())?;
        }
        for (i, k) in lmkd.iter().flatten().enumerate() {
            check("lmkd", i, lmkd_mode(k).is_some(), "must be `minfree`, `psi` or `psi-minfree`", format!("`{k}`"))?;
        }
        // Every input loads: the catalogs, each workload against each catalog, the
        // devices (or the workloads' own), and each balloon fits each device.
        let wrap = |path: &str, e: ConfigError| at(path, e.to_string());
        let mut catalogs = Vec::new();
        for (i, a) in apps.iter().enumerate() {
            catalogs.push(match a {
                None => Catalog::embedded().map_err(|e| at("flags", e.to_string()))?,
                Some(a) => Catalog::load(&base.join(a).display().to_string()).map_err(|e| wrap(&format!("flags.apps[{i}]"), e))?,
            });
        }
        let mut devices: Vec<Device> = Vec::new();
        for (i, w) in spec.workloads.iter().enumerate() {
            for cat in &catalogs {
                let wl = Workload::load(&resolve(base, "workloads", w), cat).map_err(|e| wrap(&format!("workloads[{i}]"), e))?;
                if spec.devices.is_none() {
                    devices.push(wl.default_device().map_err(|e| wrap(&format!("workloads[{i}]"), e))?);
                }
            }
        }
        for (i, d) in spec.devices.iter().flatten().enumerate() {
            devices.push(Device::load(&resolve(base, "devices", d)).map_err(|e| wrap(&format!("devices[{i}]"), e))?);
        }
        for (i, b) in balloon.iter().flatten().enumerate() {
            if let Some(d) = devices.iter().find(|d| !d.balloon_fits(*b)) {
                return Err(at(&format!("flags.balloon_mib[{i}]"), format!("{} MiB on {}: {}", num(*b), d.name, d.balloon_rule())));
            }
        }

        let device_list: Vec<Option<String>> = match spec.devices {
            None => vec![None],
            Some(d) => d.into_iter().map(Some).collect(),
        };
        let sizes = [
            device_list.len(),
            spec.workloads.len(),
            spec.policies.len(),
            apps.len(),
            balloon.len(),
            bg_apps.len(),
            bg_window.len(),
            cputester.len(),
            draw_bg.len(),
            launches.len(),
            lmkd.len(),
            rounds.len(),
            shuffle.len(),
            use_s.len(),
            spec.seeds.0.len(),
        ];
        let total = sizes.iter().try_fold(1usize, |acc, &n| acc.checked_mul(n).filter(|&t| t <= MAX_RUNS));
        if total.is_none() {
            return Err(at("", format!("the lists cross into more than {MAX_RUNS} runs")));
        }
        let mut runs = Vec::with_capacity(total.unwrap_or(0));
        // Devices outermost, then workloads, policies, the flags in the order of
        // `Flags` (the last changing fastest), and seeds innermost.
        for device in &device_list {
            for workload in &spec.workloads {
                for policy in &spec.policies {
                    for a in &apps {
                        for b in &balloon {
                            for bg in &bg_apps {
                                for bw in &bg_window {
                                    for c in &cputester {
                                        for db in &draw_bg {
                                            for l in &launches {
                                                for k in &lmkd {
                                                    for r in &rounds {
                                                        for s in &shuffle {
                                                            for u in &use_s {
                                                                let flags = Flags {
                                                                    apps: a.clone(),
                                                                    balloon_mib: *b,
                                                                    bg_apps: *bg,
                                                                    bg_window_s: *bw,
                                                                    cputester_pct: *c,
                                                                    draw_bg: *db,
                                                                    launches: *l,
                                                                    lmkd: k.clone(),
                                                                    rounds: *r,
                                                                    shuffle_rounds: *s,
                                                                    use_s: *u,
                                                                };
                                                                for &seed in &spec.seeds.0 {
                                                                    runs.push(RunKey {
                                                                        device: device.clone(),
                                                                        workload: workload.clone(),
                                                                        policy: policy.clone(),
                                                                        seed,
                                                                        flags: flags.clone(),
                                                                    });
                                                                }
                                                            }
                                                        }
                                                    }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        Ok(Sweep { file: file.to_string(), base: base.to_path_buf(), runs })
    }

    /// The runs of `shard`, in the sweep's order.
    pub fn shard(&self, shard: Shard) -> impl Iterator<Item = &RunKey> {
        self.runs.iter().enumerate().filter(move |(i, _)| shard.holds(*i)).map(|(_, k)| k)
    }
}

/// The I-th of N slices of a sweep (`I/N`, I from 1 to N): the runs whose index
/// (from 0) leaves I - 1 over when divided by N.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// The whole sweep.
    pub const ALL: Shard = Shard { index: 1, count: 1 };

    /// Whether the run at `i` (from 0) is in this shard.
    pub fn holds(&self, i: usize) -> bool {
        i % self.count == self.index - 1
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("`{s}`: a shard is I/N, I from 1 to N (the third of four: 3/4)");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count): (usize, usize) = (i.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// Runs `key`, its relative file names taken from `base`: the run `floe sim` makes with
/// the same device, workload, policy, seed and flags; `use_s`, `rounds` and `launches`
/// are recorded in its params, as `floe experiment --quick` records them.
pub fn run_key(key: &RunKey, base: &Path) -> Result<RunRecord, SimError> {
    let f = &key.flags;
    let catalog = match &f.apps {
        Some(a) => Catalog::load(&base.join(a).display().to_string())?,
        None => Catalog::embedded()?,
    };
    let mut wl = Workload::load(&resolve(base, "workloads", &key.workload), &catalog)?;
    if let Some(u) = f.use_s {
        wl.use_s = u;
    }
    if let Some(r) = f.rounds {
        wl.rounds = r;
    }
    if let Some(n) = f.launches {
        wl.sequence.truncate((n as usize).max(1));
    }
    let mut dev = match &key.device {
        Some(d) => Device::load(&resolve(base, "devices", d))?,
        None => wl.default_device()?,
    };
    if let Some(k) = &f.lmkd {
        dev.memory.lmkd = lmkd_mode(k).ok_or_else(|| SimError::Run(format!("unknown low-memory killer `{k}`")))?;
    }
    if let Some(b) = f.balloon_mib.filter(|&b| !dev.balloon_fits(b)) {
        return Err(SimError::Run(format!("balloon_mib {}: {}", num(b), dev.balloon_rule())));
    }
    let opts = RunOptions {
        seed: key.seed,
        bg_apps: f.bg_apps.map(|n| n as usize),
        balloon_mib: f.balloon_mib,
        draw_bg: f.draw_bg.unwrap_or(false),
        shuffle_rounds: f.shuffle_rounds.unwrap_or(false),
        bg_window_s: f.bg_window_s,
        no_idle_growth: false,
        cputester_pct: f.cputester_pct,
    };
    let mut rec = floe_sim::run(&dev, &wl, &catalog, &key.policy, &opts)?;
    if let Some(u) = f.use_s {
        rec.params.insert("use_s".into(), Param::Float(u));
    }
    if let Some(r) = f.rounds {
        rec.params.insert("rounds".into(), Param::Int(i64::from(r)));
    }
    if let Some(n) = f.launches {
        rec.params.insert("launches".into(), Param::Int(i64::from(n.max(1))));
    }
    Ok(rec)
}

#[derive(Serialize)]
struct LineOut<'a> {
    key: &'a RunKey,
    run: &'a RunRecord,
}

#[derive(Deserialize)]
struct LineIn {
    key: RunKey,
    run: RunRecord,
}

/// A run's line (without its newline): `{"key":...,"run":...}`.
pub fn line(key: &RunKey, run: &RunRecord) -> String {
    serde_json::to_string(&LineOut { key, run }).expect("a run serialises")
}

/// Runs `key` into its line.
pub fn run_line(key: &RunKey, base: &Path) -> Result<String, SweepError> {
    let rec = run_key(key, base).map_err(|error| SweepError::Run { key: key.id(), error })?;
    Ok(line(key, &rec))
}

/// The complete lines of a shard's output, each with its line number, and the length
/// of the text they take (an incomplete last line, cut by a killed run, follows it).
fn complete_lines(text: &str) -> (Vec<(usize, &str)>, usize) {
    let end = text.rfind('\n').map_or(0, |i| i + 1);
    let lines = text[..end].lines().enumerate().map(|(i, l)| (i + 1, l)).filter(|(_, l)| !l.trim().is_empty()).collect();
    (lines, end)
}

/// The key of a line of `path` (at `n`).
fn key_of(path: &Path, n: usize, text: &str) -> Result<RunKey, SweepError> {
    serde_json::from_str::<LineIn>(text)
        .map(|l| l.key)
        .map_err(|e| SweepError::Output(format!("{}:{n}: not a run of a sweep: {e}", path.display())))
}

/// What running a shard did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShardRun {
    /// Runs in the shard.
    pub runs: usize,
    /// Runs its output held already.
    pub skipped: usize,
    /// Runs run now.
    pub ran: usize,
}

/// Runs shard `shard` of `sweep` into `out`, one line per run appended as each run
/// finishes, on `jobs` threads (`None`: one per core). Runs `out` holds already are not
/// run again; an incomplete last line (a run cut short when the shard was killed) is
/// dropped and its run done again. `progress` hears the shard's runs and those found
/// done, then each run as it ends (a run's cost counted as one).
pub fn run_shard(sweep: &Sweep, shard: Shard, out: &Path, jobs: Option<usize>, progress: crate::Progress) -> Result<ShardRun, SweepError> {
    let mine: Vec<&RunKey> = sweep.shard(shard).collect();
    let mut index: HashMap<String, usize> = mine.iter().enumerate().map(|(i, k)| (k.id(), i)).collect();
    let mut done = vec![false; mine.len()];
    let mut skipped = 0;
    if out.exists() {
        let text = std::fs::read_to_string(out).map_err(io_error(out))?;
        let (lines, end) = complete_lines(&text);
        for (n, l) in lines {
            let key = key_of(out, n, l)?;
            match index.remove(&key.id()) {
                Some(i) => {
                    done[i] = true;
                    skipped += 1;
                }
                None if mine.iter().any(|k| **k == key) => {
                    return Err(SweepError::Output(format!("{}:{n}: run {key} is there twice", out.display())));
                }
                None => {
                    return Err(SweepError::Output(format!(
                        "{}:{n}: run {key} is not in shard {shard} of {}: the file holds another sweep's or shard's runs",
                        out.display(),
                        sweep.file
                    )))
                }
            }
        }
        if end < text.len() {
            // A line cut short: drop it, and do its run again.
            let f = std::fs::OpenOptions::new().write(true).open(out).map_err(io_error(out))?;
            f.set_len(end as u64).map_err(io_error(out))?;
        }
    }
    let todo: Vec<&RunKey> = mine.iter().zip(&done).filter(|(_, d)| !**d).map(|(k, _)| *k).collect();
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io_error(dir))?;
    }
    let file = std::fs::OpenOptions::new().create(true).append(true).open(out).map_err(io_error(out))?;
    let file = std::sync::Mutex::new(file);
    progress(crate::Step::Begin { runs: mine.len(), done: skipped });
    progress(crate::Step::Cost { cost: todo.len() as f64 });
    let work = || {
        todo.par_iter().try_for_each(|key| {
            let mut text = run_line(key, &sweep.base)?;
            text.push('\n');
            let mut f = file.lock().unwrap_or_else(|e| e.into_inner());
            f.write_all(text.as_bytes()).and_then(|()| f.flush()).map_err(io_error(out))?;
            drop(f);
            progress(crate::Step::Done { runs: 1, cost: 1.0 });
            Ok::<(), SweepError>(())
        })
    };
    match jobs {
        None => work()?,
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build()
            .map_err(|e| SweepError::Output(format!("cannot start {n} threads: {e}")))?
            .install(work)?,
    }
    Ok(ShardRun { runs: mine.len(), skipped, ran: todo.len() })
}

/// Joins shards' outputs into the sweep's lines, in the sweep's order: every run of the
/// sweep once. A run missing, a run twice, a run of another sweep or an incomplete
/// line (a shard that did not finish) is an error naming the run and where it is.
pub fn merge(sweep: &Sweep, files: &[PathBuf]) -> Result<Vec<String>, SweepError> {
    let index: HashMap<String, usize> = sweep.runs.iter().enumerate().map(|(i, k)| (k.id(), i)).collect();
    let mut slots: Vec<Option<(String, String)>> = vec![None; sweep.runs.len()];
    for (i, path) in files.iter().enumerate() {
        let same = |p: &PathBuf| p == path || p.canonicalize().ok().is_some_and(|c| path.canonicalize().ok() == Some(c));
        if files[..i].iter().any(same) {
            return Err(SweepError::Output(format!("{} is named twice", path.display())));
        }
        let text = std::fs::read_to_string(path).map_err(io_error(path))?;
        let (lines, end) = complete_lines(&text);
        if end < text.len() {
            let n = text.lines().count();
            return Err(SweepError::Output(format!(
                "{}:{n}: the last line is cut short: its shard did not finish (run it again to finish it)",
                path.display()
            )));
        }
        for (n, l) in lines {
            let key = key_of(path, n, l)?;
            let at = format!("{}:{n}", path.display());
            let Some(&i) = index.get(&key.id()) else {
                return Err(SweepError::Output(format!("{at}: run {key} is not in the sweep {}", sweep.file)));
            };
            if let Some((_, first)) = &slots[i] {
                return Err(SweepError::Output(format!("run {key} is there twice: {first} and {at}")));
            }
            slots[i] = Some((l.to_string(), at));
        }
    }
    let missing: Vec<&RunKey> = sweep.runs.iter().zip(&slots).filter(|(_, s)| s.is_none()).map(|(k, _)| k).collect();
    if let Some(first) = missing.first() {
        let more = match missing.len() {
            1 => String::new(),
            n => format!(" and {} more", n - 1),
        };
        return Err(SweepError::Output(format!(
            "{} of the sweep's {} runs are missing: run {first}{more} (are all shards there, and finished?)",
            missing.len(),
            sweep.runs.len()
        )));
    }
    Ok(slots.into_iter().map(|s| s.expect("checked").0).collect())
}

/// The JSON keys of a value serialised as an object, in the order it writes them.
struct Ordered(Vec<(String, serde_json::Value)>);

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ordered;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                let mut out = Vec::new();
                while let Some(kv) = map.next_entry()? {
                    out.push(kv);
                }
                Ok(Ordered(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// Runs' lines as CSV, one row per run: `device` (as the sweep names it, or the device
/// the run's workload names), `workload`, `policy` (as the sweep names them), `seed`,
/// the flags any run sets (in the order of [`Flags`], empty where a run sets none),
/// then the metrics in the order of their JSON keys (an absent one empty).
pub fn csv(lines: &[String]) -> Result<String, SweepError> {
    let bad = |e: &dyn fmt::Display| SweepError::Output(format!("not a run of a sweep: {e}"));
    let mut rows = Vec::with_capacity(lines.len());
    for l in lines {
        let LineIn { key, run } = serde_json::from_str(l).map_err(|e| bad(&e))?;
        let flags: serde_json::Map<String, serde_json::Value> = match serde_json::to_value(&key.flags) {
            Ok(serde_json::Value::Object(m)) => m,
            _ => serde_json::Map::new(),
        };
        let metrics: Ordered = serde_json::from_str(&serde_json::to_string(&run.metrics).map_err(|e| bad(&e))?).map_err(|e| bad(&e))?;
        rows.push((key, run.device, flags, metrics.0));
    }
    let flags: Vec<&str> = FLAG_NAMES.iter().copied().filter(|f| rows.iter().any(|r| r.2.contains_key(*f))).collect();
    let metrics: Vec<String> = rows.first().map(|r| r.3.iter().map(|(k, _)| k.clone()).collect()).unwrap_or_default();
    let cell = |v: &serde_json::Value| match v {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut w = csv::Writer::from_writer(Vec::new());
    let head = ["device", "workload", "policy", "seed"].into_iter().chain(flags.iter().copied()).chain(metrics.iter().map(String::as_str));
    let csv_error = |e: csv::Error| SweepError::Output(format!("cannot make the CSV: {e}"));
    w.write_record(head).map_err(csv_error)?;
    for (key, device, fl, m) in &rows {
        let mut row =
            vec![key.device.clone().unwrap_or_else(|| device.clone()), key.workload.clone(), key.policy.clone(), key.seed.to_string()];
        row.extend(flags.iter().map(|f| fl.get(*f).map(cell).unwrap_or_default()));
        row.extend(metrics.iter().map(|name| m.iter().find(|(k, _)| k == name).map(|(_, v)| cell(v)).unwrap_or_default()));
        w.write_record(&row).map_err(csv_error)?;
    }
    let bytes = w.into_inner().map_err(|e| SweepError::Output(format!("cannot make the CSV: {}", e.error())))?;
    Ok(String::from_utf8(bytes).expect("CSV of UTF-8 fields"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../sim/testdata");

    /// A small sweep over the test fixtures: 2 policies x 2 bg_apps x 3 seeds.
    fn tiny() -> Sweep {
        let src = "devices = [\"tiny-device.toml\"]\nworkloads = [\"tiny-workload.toml\"]\npolicies = [\"lru-cfs\", \"android-lmk\"]\nseeds = { first = 1, count = 3 }\n\n[flags]\napps = \"tiny-apps.toml\"\nbg_apps = [1, 2]\n";
        Sweep::parse("tiny.toml", src, Path::new(TD)).unwrap()
    }

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("floe-sweep-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn runs_come_in_the_documented_order() {
        let s = tiny();
        assert_eq!(s.runs.len(), 12);
        let got: Vec<(&str, u32, u64)> = s.runs.iter().map(|k| (k.policy.as_str(), k.flags.bg_apps.unwrap(), k.seed)).collect();
        assert_eq!(&got[..4], [("lru-cfs", 1, 1), ("lru-cfs", 1, 2), ("lru-cfs", 1, 3), ("lru-cfs", 2, 1)]);
        assert_eq!(got[6], ("android-lmk", 1, 1));
        assert!(s.runs.iter().all(|k| k.flags.apps.as_deref() == Some("tiny-apps.toml")));
        // The flags cross in alphabetical order, the last fastest.
        let src = "workloads = [\"selective-c\"]\npolicies = [\"zswap\"]\nseeds = [5]\n[flags]\nuse_s = [1, 2]\nbg_apps = [3, 4]\n";
        let s = Sweep::parse("x.toml", src, Path::new("")).unwrap();
        let got: Vec<(u32, f64)> = s.runs.iter().map(|k| (k.flags.bg_apps.unwrap(), k.flags.use_s.unwrap())).collect();
        assert_eq!(got, [(3, 1.0), (3, 2.0), (4, 1.0), (4, 2.0)]);
        assert_eq!(s.runs[0].device, None, "no devices: the workload's own");
        assert_eq!(
            s.runs[0].id(),
            r#"{"device":null,"workload":"selective-c","policy":"zswap","seed":5,"flags":{"bg_apps":3,"use_s":1.0}}"#
        );
    }

    #[test]
    fn shards_split_the_runs_round_robin_and_cover_them_once() {
        let s = tiny();
        let mut seen = vec![0; s.runs.len()];
        for i in 1..=5 {
            let shard: Shard = format!("{i}/5").parse().unwrap();
            for k in s.shard(shard) {
                seen[s.runs.iter().position(|r| r == k).unwrap()] += 1;
            }
        }
        assert!(seen.iter().all(|&n| n == 1), "{seen:?}");
        let second: Vec<&RunKey> = s.shard(Shard { index: 2, count: 5 }).collect();
        assert_eq!(second, [&s.runs[1], &s.runs[6], &s.runs[11]]);
        for bad in ["0/3", "4/3", "3", "a/b", "1/0"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn bad_sweep_files_are_errors_at_their_line() {
        let ok = "workloads = [\"selective-c\"]\npolicies = [\"zswap\"]\nseeds = [1]\n";
        let err = |extra: &str| Sweep::parse("s.toml", &format!("{ok}{extra}"), Path::new("")).unwrap_err().to_string();
        assert_eq!(err("[flags]\ncolour = 3\n").split(':').take(2).collect::<Vec<_>>(), ["s.toml", "5"]);
        assert!(err("[flags]\nbg_apps = [1, \"x\"]\n").starts_with("s.toml:5: field `flags.bg_apps`"));
        let e =
            Sweep::parse("s.toml", "workloads = [\"selective-c\"]\npolicies = [\"zswap\",\n  \"nope:k=1\"]\nseeds = [1]\n", Path::new(""))
                .unwrap_err()
                .to_string();
        assert!(e.starts_with("s.toml:3: field `policies`: unknown policy `nope`"), "{e}");
        let e = Sweep::parse(
            "s.toml",
            "devices = [\"nexus5\", \"nexus5\"]\nworkloads = [\"selective-c\"]\npolicies = [\"zswap\"]\nseeds = [1]\n",
            Path::new(""),
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("s.toml:1: field `devices`: `nexus5` is listed twice"), "{e}");
        assert!(err("[flags]\nballoon_mib = [0, 100000]\n").starts_with("s.toml:5: field `flags.balloon_mib`: 100000 MiB on nexus5"));
        assert!(err("[flags]\nlmkd = \"oom\"\n").starts_with("s.toml:5: field `flags.lmkd`: `oom`"));
        let e = Sweep::parse(
            "s.toml",
            "devices = [\"no-such-phone\"]\nworkloads = [\"selective-c\"]\npolicies = [\"zswap\"]\nseeds = [1]\n",
            Path::new(""),
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("s.toml:1: field `devices`:") && e.contains("no-such-phone"), "{e}");
        let e =
            Sweep::parse("s.toml", "workloads = [\"selective-c\"]\npolicies = []\nseeds = [1]\n", Path::new("")).unwrap_err().to_string();
        assert!(e.starts_with("s.toml:2: field `policies`: the list is empty"), "{e}");
        let e = Sweep::from_json(r#"{"workloads":["selective-c"],"policies":["zswap"],"seeds":[1],"flags":{"bg_app":1}}"#, Path::new(""))
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `bg_app`"), "{e}");
    }

    /// A shard killed mid-line resumes: the complete lines are kept and not run again,
    /// the cut line is dropped and its run done; the merge of all shards is the whole
    /// sweep run in one go, byte for byte, in the sweep's order.
    #[test]
    fn a_killed_shard_resumes_and_merges_into_the_whole_sweep() {
        let s = tiny();
        let dir = temp("resume");
        let whole = dir.join("whole.jsonl");
        let all = run_shard(&s, Shard::ALL, &whole, Some(2), &crate::no_progress).unwrap();
        assert_eq!(all, ShardRun { runs: 12, skipped: 0, ran: 12 });
        let merged_whole = merge(&s, std::slice::from_ref(&whole)).unwrap();
        let expected: Vec<String> = s.runs.iter().map(|k| run_line(k, &s.base).unwrap()).collect();
        assert_eq!(merged_whole, expected);

        let shard1 = Shard { index: 1, count: 2 };
        let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
        run_shard(&s, shard1, &a, Some(1), &crate::no_progress).unwrap();
        // Keep two lines and half of the third: a shard killed while writing.
        let text = std::fs::read_to_string(&a).unwrap();
        let cut: usize = text.split_inclusive('\n').take(2).map(str::len).sum::<usize>() + 20;
        std::fs::write(&a, &text[..cut]).unwrap();
        let heard = std::sync::Mutex::new(Vec::new());
        let again = run_shard(&s, shard1, &a, None, &|step| heard.lock().unwrap().push(step)).unwrap();
        assert_eq!(again, ShardRun { runs: 6, skipped: 2, ran: 4 });
        let heard = heard.into_inner().unwrap();
        assert_eq!(heard[..2], [crate::Step::Begin { runs: 6, done: 2 }, crate::Step::Cost { cost: 4.0 }]);
        assert_eq!(heard[2..], [crate::Step::Done { runs: 1, cost: 1.0 }; 4]);
        assert_eq!(std::fs::read_to_string(&a).unwrap().lines().count(), 6);
        // A third go runs nothing.
        assert_eq!(run_shard(&s, shard1, &a, None, &crate::no_progress).unwrap().ran, 0);

        // Shard 2 missing, then there; a line twice; another shard's file given as shard 1.
        let e = merge(&s, std::slice::from_ref(&a)).unwrap_err().to_string();
        assert!(e.starts_with("6 of the sweep's 12 runs are missing: run {"), "{e}");
        run_shard(&s, Shard { index: 2, count: 2 }, &b, None, &crate::no_progress).unwrap();
        assert_eq!(merge(&s, &[b.clone(), a.clone()]).unwrap(), expected);
        let e = merge(&s, &[a.clone(), b.clone(), a.clone()]).unwrap_err().to_string();
        assert!(e.ends_with("a.jsonl is named twice"), "{e}");
        let copy = dir.join("copy.jsonl");
        std::fs::copy(&a, &copy).unwrap();
        let e = merge(&s, &[a.clone(), b.clone(), copy]).unwrap_err().to_string();
        assert!(e.contains("is there twice: ") && e.contains("a.jsonl:1 and ") && e.contains("copy.jsonl:1"), "{e}");
        let e = run_shard(&s, shard1, &b, None, &crate::no_progress).unwrap_err().to_string();
        assert!(e.contains("b.jsonl:1: run") && e.contains("is not in shard 1/2"), "{e}");
        // An unfinished shard cannot be merged.
        std::fs::write(&b, &std::fs::read_to_string(&b).unwrap()[..50]).unwrap();
        let e = merge(&s, &[a.clone(), b.clone()]).unwrap_err().to_string();
        assert!(e.contains("b.jsonl:1: the last line is cut short"), "{e}");

        // The CSV: one row per run, the key's columns, the flags set, the metrics.
        let text = csv(&expected).unwrap();
        let head = text.lines().next().unwrap();
        assert!(head.starts_with("device,workload,policy,seed,apps,bg_apps,fps,ria,"), "{head}");
        assert_eq!(text.lines().count(), 13);
        assert!(text.lines().nth(1).unwrap().starts_with("tiny-device.toml,tiny-workload.toml,lru-cfs,1,tiny-apps.toml,1,"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A key's run is the run `floe sim` makes of the same inputs.
    #[test]
    fn a_key_runs_as_floe_sim_runs_it() {
        let s = tiny();
        let k = &s.runs[4];
        let cat = Catalog::load(&format!("{TD}/tiny-apps.toml")).unwrap();
        let wl = Workload::load(&format!("{TD}/tiny-workload.toml"), &cat).unwrap();
        let dev = Device::load(&format!("{TD}/tiny-device.toml")).unwrap();
        let opts = RunOptions { seed: k.seed, bg_apps: Some(2), ..Default::default() };
        assert_eq!(run_key(k, &s.base).unwrap(), floe_sim::run(&dev, &wl, &cat, &k.policy, &opts).unwrap());
    }
}
