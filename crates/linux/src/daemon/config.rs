//! The daemon's configuration: the TOML file, its defaults, app rules, and the checks
//! that refuse a bad value at its file, line and key.
use floe_core::input::{num, parse, ConfigError, Input};
use floe_core::{LmkdMode, PriorityClass};
use serde::Deserialize;
use std::path::PathBuf;

/// The daemon's configuration file (TOML).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Policy name as `floe list policies` shows (default: ice).
    #[serde(default = "default_policy")]
    pub policy: String,
    /// Cgroup directory, under each hierarchy, that holds the app groups.
    #[serde(default = "default_root")]
    pub cgroup_root: String,
    /// Control socket path.
    #[serde(default = "default_socket")]
    pub socket: PathBuf,
    /// Group (gid) allowed on the control socket besides root.
    #[serde(default)]
    pub ctl_gid: Option<u32>,
    /// How often refault counters, app liveness, memory and CPU use are sampled, in ms,
    /// while anything is happening: memory pressure (the PSI trigger fired), refaults,
    /// a low-memory level, a launch or switch in the last few seconds.
    #[serde(default = "default_sample_ms")]
    pub sample_ms: u64,
    /// The sampling period, in ms, while nothing is happening (no pressure, no refaults,
    /// no launch): the PSI trigger and `floe ctl` wake the daemon at once regardless.
    #[serde(default = "default_idle_sample_ms")]
    pub idle_sample_ms: u64,
    /// How often /proc is scanned for new processes of the apps, in ms (the costly part:
    /// it reads every process's exe, cmdline and status).
    #[serde(default = "default_discover_ms")]
    pub discover_ms: u64,
    /// Process names (comm) never frozen, killed or compressed.
    #[serde(default)]
    pub protected: Vec<String>,
    /// Log every action instead of taking it.
    #[serde(default)]
    pub dry_run: bool,
    /// SQLite database (WAL) where what the policy learned is kept across restarts and
    /// crashes (SmartLMK's history store, selective's demotions); saved every
    /// `state_save_s` seconds and at exit, loaded at start.
    #[serde(default = "default_state_db")]
    pub state_db: PathBuf,
    #[serde(default = "default_state_save_s")]
    pub state_save_s: u64,
    /// Memory budget of all the apps together (the root group's limit), in MiB. When
    /// set, policies see the budget as the device's memory: total is the budget, free
    /// is what is left of it (plus the apps' inactive page cache), and the LRU sizes
    /// are the apps' own. Unset: the whole machine (/proc/meminfo's MemTotal,
    /// MemAvailable and LRU sizes).
    #[serde(default)]
    pub memory_limit_mib: Option<u64>,
    /// The low-memory killer's levels as [oom_adj, MiB] pairs: below MiB free, apps with
    /// oom_adj at or above the level's may die (stock policies kill the highest adj,
    /// largest first; `lmk = "policy"` policies such as SmartLMK choose for themselves).
    /// Default: AOSP ProcessList's mOomMinFreeHigh (72, 90, 108, 126, 144, 180 MiB for
    /// adj 0, 100, 200, 250, 900, 950). A policy's own kill threshold (selective)
    /// replaces the table.
    #[serde(default = "default_minfree", deserialize_with = "levels")]
    pub minfree_mib: Vec<(i32, f64)>,
    /// Which killer runs for policies that keep Android's: "minfree" (the table above,
    /// each sample); "psi", Android 10 lmkd's default: triggers on /proc/pressure/memory
    /// (some 70 ms and 100 ms per 1 s); a low event records free memory, a medium one
    /// kills the highest oom_adj of 800 or more (least recently used first) while free
    /// memory is below what low pressure saw, re-checked every 10 ms for a second, the
    /// table unused; or "psi-minfree", lmkd with use_minfree_levels as Pixels set it: the
    /// same triggers and polls, each checking the table (the largest app at the highest
    /// adj it allows dies; for 100 ms after a kill, not while the victim is dying). Free memory is what policies see (MemAvailable, or what is
    /// left of the budget), where lmkd reads MemFree.
    #[serde(default)]
    pub lmkd: LmkdMode,
    /// Adopt an existing app layout instead of making groups: a directory of the
    /// cgroup v2 hierarchy (relative to its mount; "." for the mount itself) whose
    /// `uid_N` children are apps, their processes in `pid_M` subgroups, as Android lays
    /// them out. floe freezes and kills at the `uid_N` level and leaves the layout as it
    /// is; [[app]] entries then only name apps and set their class, by `uid`.
    #[serde(default)]
    pub adopt_layout: Option<String>,
    /// Write a timeline here: one CSV row every `timeline_ms`, with the columns of
    /// `floe sim --timeline` (memory from /proc/meminfo or the budget, zram, swap,
    /// reclaim from /proc/vmstat, the apps' refaults and CPU, kswapd's CPU, kills,
    /// freezes and thaws; frames, compression CPU and flash traffic left empty).
    /// Appended to, each row flushed as written.
    #[serde(default)]
    pub timeline: Option<PathBuf>,
    #[serde(default = "default_timeline_ms")]
    pub timeline_ms: u64,
    /// Write the run here when the daemon stops: one JSON object in `floe sim --json`'s
    /// schema (DESIGN.md's metrics), what the kernel and the daemon counted since the
    /// first sample (`floe ctl run` prints it at any time). Replaced, not appended to.
    #[serde(default)]
    pub run_json: Option<PathBuf>,
    /// Emergency margin, in MiB: when free memory (of the budget, or the machine's)
    /// falls below it, the daemon kills at once, whatever the policy, the highest
    /// oom_adj app that is not the foreground (default: 32 MiB, or an eighth of a
    /// smaller budget's size), ahead of the kernel's OOM killer at the hard limit.
    #[serde(default)]
    pub emergency_mib: Option<u64>,
    /// Ice's H_wm, in MiB: MDT freezes the apps RPF caught for 8 x 2^ceil(H_wm / S_am)
    /// seconds a thaw, S_am the memory available (MemAvailable, or what is left of the
    /// budget). Unset: the kernel's high watermark, which available memory stays above
    /// until the machine is nearly out, so the freezing period stays at 16 s. Ice Table 4
    /// set 1,024 on a 6 GB phone and 256 on a 4 GB one.
    #[serde(default)]
    pub mdt_high_mib: Option<u64>,
    /// The apps floe manages.
    #[serde(default, rename = "app")]
    pub apps: Vec<AppRule>,
    /// What the checks found suspicious but not wrong (a rule that may never match),
    /// located as errors are; the daemon logs them at start.
    #[serde(skip)]
    pub warnings: Vec<ConfigError>,
}

/// What a configuration must fit on this machine: its RAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Host {
    pub ram_bytes: u64,
}

impl Host {
    /// This machine: MemTotal from /proc/meminfo (unbounded where it cannot be read).
    pub fn detect() -> Host {
        // parse_kb_table gives bytes.
        let bytes = crate::read("/proc/meminfo")
            .ok()
            .and_then(|t| crate::procfs::parse_kb_table("/proc/meminfo", &t).ok())
            .and_then(|m| m.get("MemTotal").copied());
        Host { ram_bytes: bytes.unwrap_or(u64::MAX) }
    }
}

/// The names cgroup filesystems give their own files in every group: a group named so
/// would collide with (or pose as) one of them.
const CGROUP_FILE_PREFIXES: &[&str] = &[
    "cgroup",
    "memory",
    "freezer",
    "cpu",
    "cpuacct",
    "cpuset",
    "io",
    "blkio",
    "pids",
    "hugetlb",
    "rdma",
    "misc",
    "devices",
    "net_cls",
    "net_prio",
    "perf_event",
    "notify_on_release",
    "release_agent",
    "tasks",
];

/// Whether `name` is a plain cgroup directory name: 1 to 64 of `A-Z a-z 0-9 . _ -`,
/// beginning with a letter or digit (so never `.` or `..`), and not one of the names
/// cgroup filesystems use for their files (`cgroup.procs`, `memory.*`, `tasks`, ...).
pub fn cgroup_safe(name: &str) -> std::result::Result<(), String> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "._-".contains(c);
    if name.is_empty() || name.len() > 64 {
        return Err(format!("`{name}`: must be 1 to 64 characters"));
    }
    if !name.chars().all(plain) || !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Err(format!(
            "`{name}`: must be a plain name (letters, digits, `.`, `_`, `-`, beginning with a letter or digit), as a cgroup directory"
        ));
    }
    let first = name.split('.').next().unwrap_or(name);
    if CGROUP_FILE_PREFIXES.contains(&first) && (name.contains('.') || name == first) {
        return Err(format!("`{name}`: names a cgroup interface file (`{first}...`), not a group"));
    }
    Ok(())
}

/// Each `/`-separated part of a relative cgroup path passes [`cgroup_safe`].
fn cgroup_path_safe(path: &str) -> std::result::Result<(), String> {
    if path.starts_with('/') {
        return Err(format!("`{path}`: must be a relative path"));
    }
    path.split('/').try_for_each(cgroup_safe)
}

/// What stands at `path` if it is not what the daemon may create or append to: a file
/// of another kind, or a symbolic link (never followed).
pub(super) fn not_a(path: &std::path::Path, want: &str, ok: impl Fn(&std::fs::FileType) -> bool) -> Option<String> {
    let t = std::fs::symlink_metadata(path).ok()?.file_type();
    if t.is_symlink() {
        Some(format!("{} is a symbolic link; it must be a {want} or not exist (links are not followed)", path.display()))
    } else if !ok(&t) {
        Some(format!("{} exists and is not a {want}; it would be replaced or written into", path.display()))
    } else {
        None
    }
}

fn default_policy() -> String {
    "ice".into()
}
fn default_root() -> String {
    "floe".into()
}
fn default_socket() -> PathBuf {
    "/run/floe.sock".into()
}
fn default_sample_ms() -> u64 {
    100
}
fn default_idle_sample_ms() -> u64 {
    1000
}
fn default_discover_ms() -> u64 {
    1000
}
fn default_state_db() -> PathBuf {
    "/var/lib/floe/state.db".into()
}
fn default_state_save_s() -> u64 {
    5
}
fn default_timeline_ms() -> u64 {
    1000
}
/// assumption: 32 MiB, what a 400 MiB/s allocation burst takes in 80 ms, above the
/// v1 threshold events' own granularity (128 page charges per CPU).
const EMERGENCY_MIB: u64 = 32;
/// src: AOSP frameworks/base ProcessList.java (Android 10), mOomAdj and mOomMinFreeHigh
/// (KB / 1024), at scale 1.
/// The killer's levels, each exactly `[oom_adj, MiB]`: a third value (a typo, a level
/// meant for another table) is an error, not ignored.
fn levels<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Vec<(i32, f64)>, D::Error> {
    struct Level(i32, f64);
    impl<'de> Deserialize<'de> for Level {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Level, D::Error> {
            struct V;
            impl<'de> serde::de::Visitor<'de> for V {
                type Value = Level;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("a level [oom_adj, MiB]")
                }
                fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Level, A::Error> {
                    use serde::de::Error;
                    let adj = seq.next_element()?.ok_or_else(|| A::Error::invalid_length(0, &self))?;
                    let mib = seq.next_element()?.ok_or_else(|| A::Error::invalid_length(1, &self))?;
                    if seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                        return Err(A::Error::custom("a level is [oom_adj, MiB], two values; this one has more"));
                    }
                    Ok(Level(adj, mib))
                }
            }
            d.deserialize_seq(V)
        }
    }
    Ok(Vec::<Level>::deserialize(d)?.into_iter().map(|Level(a, m)| (a, m)).collect())
}

fn default_minfree() -> Vec<(i32, f64)> {
    vec![(0, 72.0), (100, 90.0), (200, 108.0), (250, 126.0), (900, 144.0), (950, 180.0)]
}

/// Which processes make up an app: every given criterion must hold.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AppRule {
    pub name: String,
    /// The executable's path (/proc/PID/exe).
    #[serde(default)]
    pub exe: Option<String>,
    /// A substring of the command line (arguments joined by spaces).
    #[serde(default)]
    pub cmdline: Option<String>,
    #[serde(default)]
    pub uid: Option<u32>,
    /// Android's perceptible class: never frozen (music, navigation, downloads).
    #[serde(default)]
    pub perceptible: bool,
    /// The app saves its own context (selective swap/kill makes it a kill-target).
    #[serde(default)]
    pub saves_context: bool,
    /// A file whose existence shows that the app has saved its state (the paper's
    /// saved-state marker, checked at every sample); present means `saves_context`.
    #[serde(default)]
    pub state_marker: Option<PathBuf>,
    /// Selective swap/kill's priority class: high, medium (default) or low.
    #[serde(default = "default_priority")]
    pub priority: PriorityClass,
}

fn default_priority() -> PriorityClass {
    PriorityClass::Medium
}

impl Config {
    /// Parses and validates against this machine ([`Host::detect`]); errors name the
    /// file, line and key.
    pub fn parse(path: &str, text: &str) -> std::result::Result<Config, ConfigError> {
        Config::parse_on(path, text, &Host::detect())
    }

    /// The emergency margin in bytes: `emergency_mib`, or its default (32 MiB, at most
    /// an eighth of the budget).
    pub fn emergency_bytes(&self) -> u64 {
        let default = self.memory_limit_mib.map_or(EMERGENCY_MIB, |l| EMERGENCY_MIB.min(l / 8).max(1));
        self.emergency_mib.unwrap_or(default) << 20
    }

    /// Parses and validates for a machine with `host`'s RAM.
    pub fn parse_on(path: &str, text: &str, host: &Host) -> std::result::Result<Config, ConfigError> {
        let input = Input::new(path, text);
        let mut c: Config = parse(&input)?;
        let err = |key: &str, message: String| Err(input.error(key, message));
        if floe_policies::lookup(&c.policy).is_none() {
            return err("policy", format!("unknown policy `{}` (see `floe list policies`)", c.policy));
        }
        if let Err(e) = cgroup_path_safe(&c.cgroup_root) {
            return err("cgroup_root", format!("{e}: a relative path of plain cgroup names"));
        }
        if c.socket.as_os_str().is_empty() {
            return err("socket", "must be a path (the control socket), got \"\"".into());
        }
        if !c.socket.is_absolute() {
            return err("socket", format!("`{}`: must be an absolute path", c.socket.display()));
        }
        if c.socket.as_os_str().len() > 107 {
            return err("socket", format!("`{}`: longer than a socket address holds (107 bytes)", c.socket.display()));
        }
        if let Some(m) = not_a(&c.socket, "socket", std::os::unix::fs::FileTypeExt::is_socket) {
            return err("socket", m);
        }
        if c.state_db.as_os_str().is_empty() {
            return err("state_db", "must be a path".into());
        }
        if let Some(m) = not_a(&c.state_db, "regular file", |t| t.is_file()) {
            return err("state_db", m);
        }
        for (key, path) in [("timeline", &c.timeline), ("run_json", &c.run_json)] {
            match path.as_deref() {
                Some(p) if p.as_os_str().is_empty() => {
                    return err(key, "must be a path (a file to write), got \"\"; leave the key out for none".into())
                }
                Some(p) => {
                    if let Some(m) = not_a(p, "regular file", |t| t.is_file()) {
                        return err(key, m);
                    }
                }
                None => {}
            }
        }
        if !(10..=60_000).contains(&c.sample_ms) {
            return err("sample_ms", format!("must be 10..=60000, got {}", c.sample_ms));
        }
        if !(c.sample_ms..=600_000).contains(&c.idle_sample_ms) {
            return err("idle_sample_ms", format!("must be sample_ms ({})..=600000, got {}", c.sample_ms, c.idle_sample_ms));
        }
        if !(10..=600_000).contains(&c.discover_ms) {
            return err("discover_ms", format!("must be 10..=600000, got {}", c.discover_ms));
        }
        if !(1..=86_400).contains(&c.state_save_s) {
            return err("state_save_s", format!("must be 1..=86400, got {}", c.state_save_s));
        }
        if !(100..=3_600_000).contains(&c.timeline_ms) {
            return err("timeline_ms", format!("must be 100..=3600000, got {}", c.timeline_ms));
        }
        let ram_mib = host.ram_bytes >> 20;
        if let Some(l) = c.memory_limit_mib {
            if l == 0 {
                return err("memory_limit_mib", "must be above 0".into());
            }
            if l.checked_mul(1 << 20).is_none() {
                return err("memory_limit_mib", format!("{l} MiB does not fit in 64 bits of bytes"));
            }
            if l > ram_mib {
                return err(
                    "memory_limit_mib",
                    format!("{l} MiB is above this machine's RAM ({ram_mib} MiB): the budget would never bind and the kernel's OOM killer would act first"),
                );
            }
        }
        let bound_mib = c.memory_limit_mib.unwrap_or(ram_mib);
        if let Some(e) = c.emergency_mib {
            if e == 0 || e >= bound_mib {
                return err(
                    "emergency_mib",
                    format!(
                        "must be above 0 and below {} ({bound_mib} MiB), got {e}",
                        if c.memory_limit_mib.is_some() { "memory_limit_mib" } else { "the machine's RAM" }
                    ),
                );
            }
        }
        if let Some(h) = c.mdt_high_mib {
            if h == 0 || h > bound_mib {
                return err(
                    "mdt_high_mib",
                    format!(
                        "must be above 0 and at most {} ({bound_mib} MiB), got {h}",
                        if c.memory_limit_mib.is_some() { "memory_limit_mib" } else { "the machine's RAM" }
                    ),
                );
            }
        }
        for (i, &(adj, mib)) in c.minfree_mib.iter().enumerate() {
            // The element is named with its index: the levels are a list of values.
            let key = format!("minfree_mib[{i}]");
            let err = |message: String| Err(input.error_at(&key, &key, message));
            if !((-1000..=1000).contains(&adj) && mib >= 0.0 && mib.is_finite()) {
                return err(format!("needs an oom_adj in -1000..=1000 and MiB >= 0, got [{adj}, {}]", num(mib)));
            }
            if i > 0 && adj <= c.minfree_mib[i - 1].0 {
                return err("levels must be in ascending oom_adj order".into());
            }
            if let Some(limit) = c.memory_limit_mib.filter(|&l| mib >= l as f64) {
                return err(format!(
                    "level {} MiB is not below memory_limit_mib ({limit}): free memory never reaches it, so the killer would kill at every check",
                    num(mib)
                ));
            }
            if mib >= ram_mib as f64 {
                return err(format!(
                    "level {} MiB is not below this machine's RAM ({ram_mib} MiB): the killer would kill at every check",
                    num(mib)
                ));
            }
        }
        if let Some(l) = &c.adopt_layout {
            if l != "." {
                if let Err(e) = cgroup_path_safe(l) {
                    return err(
                        "adopt_layout",
                        format!("{e}: must be a path relative to the cgroup v2 mount of plain cgroup names (\".\" for the mount)"),
                    );
                }
            }
        }
        let mut warnings = Vec::new();
        if c.ctl_gid == Some(u32::MAX) {
            return err("ctl_gid", "4294967295 is (gid_t)-1, which chown takes as \"leave the group\": no group would be granted the socket; leave the key out for root only".into());
        }
        for (i, p) in c.protected.iter().enumerate() {
            if p.is_empty() || p.len() > 15 {
                let key = format!("protected[{i}]");
                warnings.push(input.error_at(&key, &key, format!("`{p}`: process names (comm) are 1 to 15 bytes; this one never matches")));
            }
        }
        for (i, a) in c.apps.iter().enumerate() {
            let at = |key: &str, message: String| input.error_at(&format!("app[{i}].{key}"), &format!("app.{key}"), message);
            if c.adopt_layout.is_some() && (a.exe.is_some() || a.cmdline.is_some() || a.uid.is_none()) {
                let key = if a.exe.is_some() {
                    "exe"
                } else if a.cmdline.is_some() {
                    "cmdline"
                } else {
                    "uid"
                };
                return Err(at(
                    key,
                    format!("app `{}`: with adopt_layout, apps are the layout's uid_N groups; name them by `uid` only", a.name),
                ));
            }
            if let Err(e) = cgroup_safe(&a.name) {
                return Err(at("name", format!("{e}: an app's name is its cgroup's")));
            }
            if a.exe.is_none() && a.cmdline.is_none() && a.uid.is_none() {
                return Err(at("name", format!("app `{}` needs at least one of exe, cmdline, uid", a.name)));
            }
            if c.apps[..i].iter().any(|b| b.name == a.name) {
                return Err(at("name", format!("`{}` appears twice", a.name)));
            }
            if let Some(exe) = &a.exe {
                if !exe.starts_with('/') {
                    return Err(at(
                        "exe",
                        format!(
                            "app `{}`: `{exe}` is not an absolute path; /proc/PID/exe always is, so the rule would never match",
                            a.name
                        ),
                    ));
                }
                if std::path::Path::new(exe).is_dir() {
                    return Err(at(
                        "exe",
                        format!("app `{}`: `{exe}` is a directory; /proc/PID/exe is a program, so the rule would never match", a.name),
                    ));
                }
                match std::fs::canonicalize(exe) {
                    Ok(real) if real != std::path::Path::new(exe) => warnings.push(at(
                        "exe",
                        format!(
                            "app `{}`: `{exe}` resolves to `{}`, the path /proc/PID/exe shows; the rule matches only `{exe}` itself",
                            a.name,
                            real.display()
                        ),
                    )),
                    Ok(_) => {}
                    Err(_) => {
                        warnings.push(at("exe", format!("app `{}`: `{exe}` does not exist (yet): no process matches it now", a.name)))
                    }
                }
            }
            if let Some(cmd) = &a.cmdline {
                if cmd.trim().is_empty() {
                    return Err(at("cmdline", format!("app `{}`: an empty command-line substring matches every process", a.name)));
                }
                if cmd.contains(['*', '?', '[']) {
                    warnings.push(at(
                        "cmdline",
                        format!("app `{}`: `{cmd}` is matched as a plain substring; `*`, `?` and `[` are no wildcards here", a.name),
                    ));
                }
            }
            if a.uid == Some(0) && a.exe.is_none() && a.cmdline.is_none() && c.adopt_layout.is_none() {
                return Err(at(
                    "uid",
                    format!(
                        "app `{}`: uid 0 alone matches every root process, the system's own daemons among them; add exe or cmdline",
                        a.name
                    ),
                ));
            }
        }
        if c.minfree_mib.is_empty() {
            warnings.push(input.error("minfree_mib", "no levels: the killer acts only below the emergency margin (emergency_mib)"));
        }
        for (i, w) in c.minfree_mib.windows(2).enumerate() {
            if w[1].1 < w[0].1 {
                let key = format!("minfree_mib[{}]", i + 1);
                warnings.push(input.error_at(
                    &key,
                    &key,
                    format!(
                        "level {} MiB at adj {} is below the level of adj {} ({} MiB): it never decides a kill (levels rise with oom_adj, as Android's minfree does)",
                        num(w[1].1),
                        w[1].0,
                        w[0].0,
                        num(w[0].1)
                    ),
                ));
            }
        }
        if c.apps.is_empty() && c.adopt_layout.is_none() {
            warnings.push(input.error("policy", "no [[app]]: the daemon manages no app (add one [[app]] table per app, or adopt_layout)"));
        }
        c.warnings = warnings;
        Ok(c)
    }

    pub fn load(path: &str) -> std::result::Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: path.to_string(),
            line: None,
            field: None,
            message: format!("cannot read: {e}"),
        })?;
        Config::parse(path, &text)
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use super::*;
    use crate::procfs::parse_flat;

    /// Every number of the sample config made absurd in turn is accepted or refused at
    /// its own line, never a panic; the sample itself parses.
    #[test]
    fn any_number_of_the_sample_config_made_absurd_is_refused_at_its_line() {
        let sample = include_str!("../../../../packaging/floe.toml");
        assert!(Config::parse("floe.toml", sample).is_ok());
        let (mut tried, mut refused) = (0, 0);
        for (i, line) in sample.lines().enumerate() {
            let code = line.split('#').next().unwrap_or("");
            if code.contains('"') {
                continue;
            }
            let mut at = 0;
            for token in code.split(|c: char| " =[],".contains(c)) {
                let start = at + code[at..].find(token).unwrap_or(0);
                at = start + token.len();
                if token.is_empty() || token.parse::<f64>().is_err() {
                    continue;
                }
                for bad in ["-1", "0", "1e300", "nan", "18446744073709551616"] {
                    let edited = format!("{}{bad}{}", &code[..start], &code[start + token.len()..]);
                    let text: Vec<&str> = sample.lines().enumerate().map(|(j, l)| if j == i { edited.as_str() } else { l }).collect();
                    tried += 1;
                    if let Err(e) = Config::parse("floe.toml", &text.join("\n")) {
                        refused += 1;
                        assert_eq!(e.line, Some(i + 1), "`{token}` -> {bad}: {e}");
                        assert!(e.field.is_some(), "{e}");
                    }
                }
            }
        }
        assert!(tried >= 60 && refused * 2 > tried, "{refused} of {tried} refused");
    }

    /// Configurations that would do damage, each refused with its own error at its
    /// line and key: names that are not plain cgroup names, sizes that overflow or
    /// exceed the machine, rules that match everything or never match, paths the
    /// daemon would replace or follow.
    #[test]
    fn bad_configs_are_refused_each_with_its_error() {
        let dir = crate::scratch_dir("config-table");
        let file = dir.join("precious.txt");
        std::fs::write(&file, "keep me").unwrap();
        std::os::unix::fs::symlink(&file, dir.join("link")).unwrap();
        let (f, l) = (file.display().to_string(), dir.join("link").display().to_string());
        let d = dir.display().to_string();
        let host = Host { ram_bytes: 4 << 30 };
        let app = |body: &str| format!("[[app]]\nname = \"a\"\n{body}\n");
        // (config, line, field, what the message says)
        let cases: Vec<(String, usize, &str, &str)> = vec![
            ("memory_limit_mib = 17592186044480\n".into(), 1, "memory_limit_mib", "does not fit in 64 bits"),
            ("memory_limit_mib = 9223372036854775807\n".into(), 1, "memory_limit_mib", "does not fit in 64 bits"),
            ("memory_limit_mib = 1048576\n".into(), 1, "memory_limit_mib", "above this machine's RAM (4096 MiB)"),
            ("memory_limit_mib = 4097\n".into(), 1, "memory_limit_mib", "above this machine's RAM"),
            ("memory_limit_mib = 0\n".into(), 1, "memory_limit_mib", "must be above 0"),
            ("memory_limit_mib = -1\n".into(), 1, "memory_limit_mib", "invalid value"),
            ("memory_limit_mib = 512\nemergency_mib = 512\n".into(), 2, "emergency_mib", "below memory_limit_mib"),
            ("emergency_mib = 0\n".into(), 1, "emergency_mib", "above 0"),
            ("mdt_high_mib = 0\n".into(), 1, "mdt_high_mib", "above 0"),
            ("mdt_high_mib = 4097\n".into(), 1, "mdt_high_mib", "the machine's RAM (4096 MiB)"),
            ("memory_limit_mib = 512\nmdt_high_mib = 1024\n".into(), 2, "mdt_high_mib", "memory_limit_mib (512 MiB)"),
            ("minfree_mib = [[0, 5000]]\n".into(), 1, "minfree_mib[0]", "not below this machine's RAM"),
            ("minfree_mib = [[0, 1e300]]\n".into(), 1, "minfree_mib[0]", "1e300"),
            ("minfree_mib = [[0, nan]]\n".into(), 1, "minfree_mib[0]", "MiB >= 0"),
            ("minfree_mib = [[2000, 10]]\n".into(), 1, "minfree_mib[0]", "-1000..=1000"),
            ("minfree_mib = [[0, 72, 5]]\n".into(), 1, "minfree_mib", "two values; this one has more"),
            ("\nminfree_mib = [[0, 72], [100, 90, \"junk\"]]\n".into(), 2, "minfree_mib", "two values; this one has more"),
            ("minfree_mib = [[0]]\n".into(), 1, "minfree_mib", "invalid length 1"),
            (app("cmdline = \"\""), 3, "app.cmdline", "matches every process"),
            (app("cmdline = \"   \""), 3, "app.cmdline", "matches every process"),
            (app("exe = \"python3\""), 3, "app.exe", "not an absolute path"),
            (app("exe = \"\""), 3, "app.exe", "not an absolute path"),
            (app("exe = \"bin/app\""), 3, "app.exe", "never match"),
            (app("uid = 0"), 3, "app.uid", "every root process"),
            (app(""), 2, "app.name", "needs at least one of exe, cmdline, uid"),
            ("[[app]]\nname = \"..\"\nuid = 1000\n".into(), 2, "app.name", "plain name"),
            ("[[app]]\nname = \".\"\nuid = 1000\n".into(), 2, "app.name", "plain name"),
            ("[[app]]\nname = \"\"\nuid = 1000\n".into(), 2, "app.name", "1 to 64 characters"),
            ("[[app]]\nname = \"cgroup.procs\"\nuid = 1000\n".into(), 2, "app.name", "cgroup interface file"),
            ("[[app]]\nname = \"memory.limit_in_bytes\"\nuid = 1000\n".into(), 2, "app.name", "cgroup interface file"),
            ("[[app]]\nname = \"tasks\"\nuid = 1000\n".into(), 2, "app.name", "cgroup interface file"),
            ("[[app]]\nname = \"freezer.state\"\nuid = 1000\n".into(), 2, "app.name", "cgroup interface file"),
            ("[[app]]\nname = \"a/b\"\nuid = 1000\n".into(), 2, "app.name", "plain name"),
            ("[[app]]\nname = \"a b\"\nuid = 1000\n".into(), 2, "app.name", "plain name"),
            ("[[app]]\nname = \"-x\"\nuid = 1000\n".into(), 2, "app.name", "plain name"),
            ("[[app]]\nname = \"caf\u{e9}\"\nuid = 1000\n".into(), 2, "app.name", "plain name"),
            (format!("[[app]]\nname = \"{}\"\nuid = 1000\n", "x".repeat(65)), 2, "app.name", "1 to 64 characters"),
            ("[[app]]\nname = \"a\"\nuid = 1\n[[app]]\nname = \"a\"\nuid = 2\n".into(), 5, "app.name", "appears twice"),
            ("cgroup_root = \"..\"\n".into(), 1, "cgroup_root", "plain name"),
            ("cgroup_root = \"/sys/fs/cgroup\"\n".into(), 1, "cgroup_root", "relative path"),
            ("cgroup_root = \"\"\n".into(), 1, "cgroup_root", "1 to 64 characters"),
            ("cgroup_root = \"floe/../x\"\n".into(), 1, "cgroup_root", "plain name"),
            ("cgroup_root = \"cgroup.procs\"\n".into(), 1, "cgroup_root", "cgroup interface file"),
            ("cgroup_root = \"a//b\"\n".into(), 1, "cgroup_root", "1 to 64 characters"),
            ("adopt_layout = \"..\"\n".into(), 1, "adopt_layout", "relative to the cgroup v2 mount"),
            ("adopt_layout = \"/x\"\n".into(), 1, "adopt_layout", "relative path"),
            ("socket = \"\"\n".into(), 1, "socket", "must be a path"),
            ("socket = \"floe.sock\"\n".into(), 1, "socket", "absolute path"),
            (format!("socket = \"/{}\"\n", "s".repeat(120)), 1, "socket", "107 bytes"),
            (format!("socket = \"{f}\"\n"), 1, "socket", "is not a socket"),
            (format!("socket = \"{d}\"\n"), 1, "socket", "is not a socket"),
            (format!("socket = \"{l}\"\n"), 1, "socket", "symbolic link"),
            (format!("state_db = \"{d}\"\n"), 1, "state_db", "not a regular file"),
            (format!("state_db = \"{l}\"\n"), 1, "state_db", "symbolic link"),
            ("state_db = \"\"\n".into(), 1, "state_db", "must be a path"),
            (format!("timeline = \"{l}\"\n"), 1, "timeline", "symbolic link"),
            ("timeline = \"/dev/null\"\n".into(), 1, "timeline", "not a regular file"),
            (format!("run_json = \"{l}\"\n"), 1, "run_json", "symbolic link"),
            (format!("\nrun_json = \"{d}\"\n"), 2, "run_json", "not a regular file"),
            ("run_json = \"\"\n".into(), 1, "run_json", "must be a path"),
            ("\ntimeline = \"\"\n".into(), 2, "timeline", "must be a path"),
            ("policy = \"ice\"\nsample_ms = 0\n".into(), 2, "sample_ms", "10..=60000"),
            ("idle_sample_ms = 1\n".into(), 1, "idle_sample_ms", "got 1"),
            ("discover_ms = 18446744073709551615\n".into(), 1, "discover_ms", "too large"),
            ("state_save_s = 0\n".into(), 1, "state_save_s", "1..=86400"),
            ("timeline_ms = 1\n".into(), 1, "timeline_ms", "100..=3600000"),
            ("policy = \"nope\"\n".into(), 1, "policy", "unknown policy"),
            ("ctl_gid = -1\n".into(), 1, "ctl_gid", "invalid value"),
            ("\nctl_gid = 4294967295\n".into(), 2, "ctl_gid", "(gid_t)-1"),
            ("[[app]]\nname = \"a\"\nexe = \"/usr/bin\"\n".into(), 3, "app.exe", "is a directory"),
            ("adopt_layout = \"apps\"\n[[app]]\nname = \"a\"\ncmdline = \"x\"\nuid = 3\n".into(), 4, "app.cmdline", "by `uid` only"),
        ];
        let wrong: Vec<String> = cases
            .iter()
            .filter_map(|(text, line, field, says)| match Config::parse_on("f.toml", text, &host) {
                Ok(_) => Some(format!("{text:?}: accepted")),
                Err(e) if (e.line, e.field.as_deref()) != (Some(*line), Some(*field)) || !e.message.contains(says) => {
                    Some(format!("{text:?}: {e}"))
                }
                Err(_) => None,
            })
            .collect();
        assert!(wrong.is_empty(), "{wrong:#?}");
        assert!(cases.len() >= 53, "{} cases", cases.len());
        // Nothing was touched: the file a bad socket named is still there.
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
        // Suspicious but possible: accepted with a warning at the line.
        let c = Config::parse_on("f.toml", &app("cmdline = \"python *.py\""), &host).unwrap();
        assert_eq!((c.warnings[0].line, c.warnings[0].field.as_deref()), (Some(3), Some("app.cmdline")));
        assert!(c.warnings[0].message.contains("no wildcards"), "{}", c.warnings[0]);
        let c = Config::parse_on("f.toml", &app(&format!("exe = \"{d}/nothing\"")), &host).unwrap();
        assert!(c.warnings[0].message.contains("does not exist"), "{}", c.warnings[0]);
        let c = Config::parse_on("f.toml", &app(&format!("exe = \"{l}\"")), &host).unwrap();
        assert!(c.warnings[0].message.contains("resolves to") && c.warnings[0].message.contains("precious.txt"), "{}", c.warnings[0]);
        let c = Config::parse_on("f.toml", "protected = [\"systemd-journald\"]\n", &host).unwrap();
        assert_eq!(c.warnings[0].field.as_deref(), Some("protected[0]"));
        assert!(c.warnings[1].message.contains("no [[app]]"), "{}", c.warnings[1]);
        let c = Config::parse_on("f.toml", &app("cmdline = \"x\"\nminfree_mib = []"), &host);
        assert!(c.is_err(), "minfree_mib inside [[app]] is no key of an app");
        let c = Config::parse_on("f.toml", &format!("minfree_mib = []\n{}", app("cmdline = \"x\"")), &host).unwrap();
        assert!(c.warnings[0].message.contains("no levels"), "{}", c.warnings[0]);
        let c = Config::parse_on("f.toml", &format!("minfree_mib = [[0, 100],\n [900, 10]]\n{}", app("cmdline = \"x\"")), &host).unwrap();
        assert_eq!((c.warnings[0].line, c.warnings[0].field.as_deref()), (Some(2), Some("minfree_mib[1]")));
        assert!(c.warnings[0].message.contains("never decides a kill"), "{}", c.warnings[0]);
        // What is fine passes without a warning: a plain name with dots, a budget within
        // RAM, an existing socket path's absence.
        let ok = format!(
            "memory_limit_mib = 4096\nsocket = \"{d}/floe.sock\"\nstate_db = \"{d}/s.db\"\n[[app]]\nname = \"com.example.app\"\nexe = \"/bin/sh\"\n"
        );
        let c = Config::parse_on("f.toml", &ok, &host).unwrap();
        assert!(c.warnings.iter().all(|w| w.field.as_deref() == Some("app.exe")), "{:?}", c.warnings);
        assert_eq!(c.emergency_bytes(), 32 << 20);
        let small = Config::parse_on("f.toml", "memory_limit_mib = 64\nminfree_mib = [[900, 16]]\n", &host).unwrap();
        assert_eq!(small.emergency_bytes(), 8 << 20);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn config_parses_with_defaults_and_errors_name_the_line_and_key() {
        let c = Config::parse("f.toml", "[[app]]\nname = \"cam\"\nexe = \"/usr/bin/cam\"\n").unwrap();
        assert_eq!((c.policy.as_str(), c.cgroup_root.as_str(), c.sample_ms, c.discover_ms), ("ice", "floe", 100, 1000));
        assert_eq!(c.apps[0].name, "cam");
        let bad = |text: &str| Config::parse("f.toml", text).unwrap_err().to_string();
        let e = bad("policy = \"ice\"\nsample_ms = \"fast\"\n");
        assert!(e.starts_with("f.toml:2: field `sample_ms`"), "{e}");
        let e = bad("polcy = \"ice\"\n");
        assert!(e.contains("polcy") && e.starts_with("f.toml:1"), "{e}");
        // What the checks after parsing refuse is located too: file, line and key.
        assert!(bad("# floe\n\npolicy = \"nope\"\n").starts_with("f.toml:3: field `policy`: unknown policy"));
        assert!(bad("cgroup_root = \"../x\"\n").starts_with("f.toml:1: field `cgroup_root`"));
        assert!(bad("dry_run = true\nsample_ms = 5\n").starts_with("f.toml:2: field `sample_ms`: must be 10..=60000, got 5"));
        let e = bad("minfree_mib = [\n  [0, 72],\n  [900, -1],\n]\n");
        assert!(e.starts_with("f.toml:3: field `minfree_mib[1]`") && e.ends_with("got [900, -1]"), "{e}");
        let e = bad("[[app]]\nname = \"a\"\n");
        assert!(e.starts_with("f.toml:2: field `app.name`") && e.contains("needs at least one"), "{e}");
        let e = bad("[[app]]\nname = \"a\"\nuid = 1\n[[app]]\nname = \"a\"\nuid = 2\n");
        assert!(e.starts_with("f.toml:5: field `app.name`") && e.contains("twice"), "{e}");
        let e = bad("adopt_layout = \".\"\n[[app]]\nname = \"a\"\ncmdline = \"x\"\nuid = 3\n");
        assert!(e.starts_with("f.toml:4: field `app.cmdline`"), "{e}");
        let e = Config::load("/nonexistent/floe.toml").unwrap_err().to_string();
        assert!(e.starts_with("/nonexistent/floe.toml: cannot read"), "{e}");
    }

    #[test]
    fn timeline_keys_are_validated_and_reclaim_is_counted_once() {
        let c = Config::parse("f.toml", "timeline = \"/tmp/t.csv\"\n").unwrap();
        assert_eq!((c.timeline.as_deref(), c.timeline_ms), (Some(Path::new("/tmp/t.csv")), 1000));
        assert_eq!(Config::parse("f.toml", "").unwrap().timeline, None);
        let e = Config::parse("f.toml", "timeline_ms = 5\n").unwrap_err().to_string();
        assert!(e.starts_with("f.toml:1: field `timeline_ms`") && e.ends_with("got 5"), "{e}");
        // Linux 5.8+: the per-type totals count everything (here 20 pages of a memory
        // cgroup's own reclaim besides the machine's 110), direct only the machine's.
        // Anonymous: pgsteal_anon where it is, else pswpout, else unknown.
        let new = parse_flat(
            "pgsteal_kswapd 100\npgsteal_direct 7\npgsteal_khugepaged 3\npgsteal_anon 80\npgsteal_file 50\npgscan_direct 90\npswpout 60\n",
        );
        assert_eq!(pages_stolen(&new), Stolen { all: 130, direct: 7, anon: Some(80) });
        // 4.8-5.7: one counter per reclaimer; before 4.8 one per zone.
        let mid = parse_flat("pgsteal_kswapd 100\npgsteal_direct 7\npgscan_direct 90\npswpout 60\n");
        assert_eq!(pages_stolen(&mid), Stolen { all: 107, direct: 7, anon: Some(60) });
        let old = parse_flat("pgsteal_kswapd_dma 1\npgsteal_kswapd_normal 20\npgsteal_direct_normal 4\npgsteal_direct_movable 1\n");
        assert_eq!(pages_stolen(&old), Stolen { all: 26, direct: 5, anon: None });
        // A command with spaces and parentheses does not shift the fields.
        let stat = "45 (kswapd0) S 2 0 0 0 -1 2129984 0 0 0 0 17 4 0 0 20 0 1 0 13 0 0";
        assert_eq!(cpu_ticks(stat), Some(21));
        assert_eq!(cpu_ticks("7 (a) b (c)) R 1 0 0 0 -1 0 0 0 0 0 3 2 0 0"), Some(5));
        assert_eq!(cpu_ticks("garbage"), None);
        assert!(!kswapd_pids().is_empty(), "this kernel runs kswapd");
        // And on this machine's kernel, whose /proc/vmstat has them.
        let here = pages_stolen(&parse_flat(&std::fs::read_to_string("/proc/vmstat").unwrap()));
        assert!(here.all >= here.direct && here.anon.is_some_and(|a| a <= here.all), "{here:?}");
    }

    #[test]
    fn lmk_and_state_keys_are_validated() {
        let c =
            Config::parse("f.toml", "memory_limit_mib = 512\nminfree_mib = [[200, 8], [900, 64.5]]\nstate_db = \"/tmp/x.db\"\n").unwrap();
        assert_eq!((c.memory_limit_mib, c.minfree_mib.clone(), c.state_save_s), (Some(512), vec![(200, 8.0), (900, 64.5)], 5));
        assert_eq!(Config::parse("f.toml", "").unwrap().minfree_mib[5], (950, 180.0));
        let e = Config::parse("f.toml", "minfree_mib = [[900, 8], [200, 64]]\n").unwrap_err().to_string();
        assert!(e.contains("minfree_mib[1]") && e.contains("ascending"), "{e}");
        assert!(Config::parse("f.toml", "minfree_mib = [[900, -1]]\n").unwrap_err().to_string().contains("minfree_mib[0]"));
        assert!(Config::parse("f.toml", "memory_limit_mib = 0\n").unwrap_err().to_string().contains("memory_limit_mib"));
        let e = Config::parse("f.toml", "memory_limit_mib = 256\nminfree_mib = [[0, 72], [900, 300]]\n").unwrap_err().to_string();
        assert!(e.starts_with("f.toml:2: field `minfree_mib[1]`: level 300 MiB is not below memory_limit_mib (256)"), "{e}");
        assert!(Config::parse("f.toml", "state_save_s = 0\n").unwrap_err().to_string().contains("state_save_s"));
        assert_eq!(Config::parse("f.toml", "").unwrap().lmkd, LmkdMode::Minfree);
        assert_eq!(Config::parse("f.toml", "lmkd = \"psi\"\n").unwrap().lmkd, LmkdMode::Psi);
        let e = Config::parse("f.toml", "policy = \"ice\"\nlmkd = \"vmpressure\"\n").unwrap_err().to_string();
        assert!(e.starts_with("f.toml:2") && e.contains("vmpressure") && e.contains("psi"), "{e}");
        let c = Config::parse("f.toml", "[[app]]\nname = \"a\"\nuid = 1\npriority = \"low\"\nstate_marker = \"/tmp/m\"\n").unwrap();
        assert_eq!((c.apps[0].priority, c.apps[0].state_marker.as_deref()), (PriorityClass::Low, Some(Path::new("/tmp/m"))));
        let e = Config::parse("f.toml", "[[app]]\nname = \"a\"\nuid = 1\npriority = \"urgent\"\n").unwrap_err().to_string();
        assert!(e.starts_with("f.toml:4") && e.contains("urgent"), "{e}");
    }

    #[test]
    fn an_adopted_layout_names_apps_by_uid_only() {
        let c = Config::parse("f.toml", "adopt_layout = \".\"\n[[app]]\nname = \"camera\"\nuid = 10061\n").unwrap();
        assert_eq!(c.adopt_layout.as_deref(), Some("."));
        let e = Config::parse("f.toml", "adopt_layout = \"apps\"\n[[app]]\nname = \"cam\"\nexe = \"/bin/cam\"\n").unwrap_err().to_string();
        assert!(e.starts_with("f.toml:4: field `app.exe`: app `cam`") && e.contains("by `uid` only"), "{e}");
        assert!(Config::parse("f.toml", "adopt_layout = \"/sys/fs/cgroup\"\n").unwrap_err().to_string().contains("adopt_layout"));
        assert!(Config::parse("f.toml", "adopt_layout = \"a/../b\"\n").unwrap_err().to_string().contains("adopt_layout"));
    }
}
