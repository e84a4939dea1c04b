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
    #[serde(default = "default_minfree")]
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
    /// The apps floe manages.
    #[serde(default, rename = "app")]
    pub apps: Vec<AppRule>,
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
/// src: AOSP frameworks/base ProcessList.java (Android 10), mOomAdj and mOomMinFreeHigh
/// (KB / 1024), at scale 1.
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
    /// Parses and validates; errors name the file, line and key.
    pub fn parse(path: &str, text: &str) -> std::result::Result<Config, ConfigError> {
        let input = Input::new(path, text);
        let c: Config = parse(&input)?;
        let err = |key: &str, message: String| Err(input.error(key, message));
        if floe_policies::lookup(&c.policy).is_none() {
            return err("policy", format!("unknown policy `{}` (see `floe list policies`)", c.policy));
        }
        if c.cgroup_root.is_empty() || c.cgroup_root.contains("..") || c.cgroup_root.starts_with('/') {
            return err("cgroup_root", format!("must be a relative path without `..`, got `{}`", c.cgroup_root));
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
        if c.memory_limit_mib == Some(0) {
            return err("memory_limit_mib", "must be above 0".into());
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
        }
        if let Some(l) = &c.adopt_layout {
            if l.is_empty() || l.contains("..") || l.starts_with('/') {
                return err(
                    "adopt_layout",
                    format!("must be a path relative to the cgroup v2 mount without `..` (\".\" for the mount), got `{l}`"),
                );
            }
        }
        for (i, a) in c.apps.iter().enumerate() {
            let at = |key: &str, message: String| Err(input.error_at(&format!("app[{i}].{key}"), &format!("app.{key}"), message));
            if c.adopt_layout.is_some() && (a.exe.is_some() || a.cmdline.is_some() || a.uid.is_none()) {
                let key = if a.exe.is_some() {
                    "exe"
                } else if a.cmdline.is_some() {
                    "cmdline"
                } else {
                    "uid"
                };
                return at(
                    key,
                    format!("app `{}`: with adopt_layout, apps are the layout's uid_N groups; name them by `uid` only", a.name),
                );
            }
            if a.name.is_empty() || a.name.contains('/') || a.name.contains(char::is_whitespace) {
                return at("name", format!("`{}`: must be a non-empty name without `/` or spaces", a.name));
            }
            if a.exe.is_none() && a.cmdline.is_none() && a.uid.is_none() {
                return at("name", format!("app `{}` needs at least one of exe, cmdline, uid", a.name));
            }
            if c.apps[..i].iter().any(|b| b.name == a.name) {
                return at("name", format!("`{}` appears twice", a.name));
            }
        }
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
        let new =
            parse_flat("pgsteal_kswapd 100\npgsteal_direct 7\npgsteal_khugepaged 3\npgsteal_anon 80\npgsteal_file 50\npgscan_direct 90\n");
        assert_eq!(pages_stolen(&new), (130, 7));
        // 4.8-5.7: one counter per reclaimer; before 4.8 one per zone.
        let mid = parse_flat("pgsteal_kswapd 100\npgsteal_direct 7\npgscan_direct 90\n");
        assert_eq!(pages_stolen(&mid), (107, 7));
        let old = parse_flat("pgsteal_kswapd_dma 1\npgsteal_kswapd_normal 20\npgsteal_direct_normal 4\npgsteal_direct_movable 1\n");
        assert_eq!(pages_stolen(&old), (26, 5));
        // A command with spaces and parentheses does not shift the fields.
        let stat = "45 (kswapd0) S 2 0 0 0 -1 2129984 0 0 0 0 17 4 0 0 20 0 1 0 13 0 0";
        assert_eq!(cpu_ticks(stat), Some(21));
        assert_eq!(cpu_ticks("7 (a) b (c)) R 1 0 0 0 -1 0 0 0 0 0 3 2 0 0"), Some(5));
        assert_eq!(cpu_ticks("garbage"), None);
        assert!(!kswapd_pids().is_empty(), "this kernel runs kswapd");
        // And on this machine's kernel, whose /proc/vmstat has them.
        let here = pages_stolen(&parse_flat(&std::fs::read_to_string("/proc/vmstat").unwrap()));
        assert!(here.0 >= here.1);
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
