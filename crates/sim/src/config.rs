//! Devices, the app catalog and workloads: their TOML schema (data/README.md), loading
//! from the embedded data/ or from user files, and validation with file:line errors.

use floe_core::PriorityClass;
use serde::Deserialize;
use std::fmt;
use std::path::Path;

include!(concat!(env!("OUT_DIR"), "/embedded.rs"));

/// A problem with an input file, located as precisely as the input allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// The key (or app name) the problem is about, when known.
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        if let Some(k) = &self.field {
            write!(f, ": field `{k}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ConfigError {}

impl ConfigError {
    fn new(file: &str, src: &str, field: &str, needle: Option<&str>, message: impl Into<String>) -> ConfigError {
        let line = needle.and_then(|n| find_line(src, field, n));
        ConfigError { file: file.to_string(), line, field: Some(field.to_string()), message: message.into() }
    }
}

/// The 1-based line where `key` is set, preferring one that also mentions `value`.
fn find_line(src: &str, key: &str, value: &str) -> Option<usize> {
    let leaf = key.rsplit('.').next().unwrap_or(key);
    let is_key = |l: &str| {
        let t = l.trim_start();
        t.starts_with(leaf) && t[leaf.len()..].trim_start().starts_with('=')
    };
    src.lines()
        .position(|l| is_key(l) && l.contains(value))
        .or_else(|| src.lines().position(|l| l.contains(value)))
        .or_else(|| src.lines().position(is_key))
        .map(|i| i + 1)
}

fn parse<T: for<'de> Deserialize<'de>>(file: &str, src: &str) -> Result<T, ConfigError> {
    toml::from_str(src).map_err(|e| {
        let (line, field) = match e.span() {
            Some(span) => {
                let line_no = src[..span.start.min(src.len())].matches('\n').count() + 1;
                let text = src.lines().nth(line_no - 1).unwrap_or("");
                let field = text.split_once('=').map(|(k, _)| k.trim().to_string()).filter(|k| !k.is_empty() && !k.starts_with('['));
                (Some(line_no), field)
            }
            None => (None, None),
        };
        ConfigError { file: file.to_string(), line, field, message: e.message().trim().to_string() }
    })
}

fn embedded(path: &str) -> Option<&'static str> {
    EMBEDDED.iter().find(|(p, _)| *p == path).map(|(_, s)| *s)
}

/// Names of embedded files under `dir` (e.g. "devices"), without extension, sorted.
pub fn embedded_names(dir: &str) -> Vec<&'static str> {
    let prefix = format!("{dir}/");
    EMBEDDED.iter().filter_map(|(p, _)| p.strip_prefix(&prefix)).filter_map(|p| p.strip_suffix(".toml")).collect()
}

/// Every embedded data file, for checks over the data itself.
pub fn embedded_files() -> &'static [(&'static str, &'static str)] {
    EMBEDDED
}

/// Loads `name_or_path`: an embedded name under `dir`, or a path to a TOML file.
fn load_source(dir: &str, what: &str, name_or_path: &str) -> Result<(String, String), ConfigError> {
    if let Some(src) = embedded(&format!("{dir}/{name_or_path}.toml")) {
        return Ok((format!("data/{dir}/{name_or_path}.toml"), src.to_string()));
    }
    let p = Path::new(name_or_path);
    if p.exists() || name_or_path.contains('/') || name_or_path.ends_with(".toml") {
        let src = std::fs::read_to_string(p).map_err(|e| ConfigError {
            file: name_or_path.to_string(),
            line: None,
            field: None,
            message: format!("cannot read {what} file: {e}"),
        })?;
        return Ok((name_or_path.to_string(), src));
    }
    Err(ConfigError {
        file: name_or_path.to_string(),
        line: None,
        field: None,
        message: format!("no {what} named `{name_or_path}` (known: {}) and no such file", embedded_names(dir).join(", ")),
    })
}

/// Memory of a device.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MemorySpec {
    pub ram_mib: f64,
    pub app_mem_mib: f64,
    pub watermark_min_mib: f64,
    pub watermark_low_mib: f64,
    pub watermark_high_mib: f64,
    /// `[oom_adj, minfree_mib]` pairs, ascending adj.
    pub minfree: Vec<(i32, f64)>,
    /// Resident memory every app process maps from Zygote and shares with the system:
    /// counted in the RSS an app shows (as Linux counts shared pages), never freed by
    /// killing it. The model keeps it in the system's memory. Default 0.
    #[serde(default)]
    pub shared_rss_mib: f64,
}

/// zram (and zswap pool) configuration of a device.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ZramSpec {
    pub size_mib: f64,
    pub algorithm: String,
    pub ratio: f64,
    pub compress_us_per_page: f64,
    pub decompress_us_per_page: f64,
}

/// The flash device.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FlashSpec {
    pub kind: String,
    pub read_4k_us: f64,
    pub write_4k_us: f64,
    pub seq_read_mib_s: f64,
    pub seq_write_mib_s: f64,
    /// Size of the swap partition or file on flash, used by flash swap, zswap's
    /// writeback and SEAL's SL2 (2048 MiB when the device does not say).
    #[serde(default)]
    pub swap_mib: Option<f64>,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CpuSpec {
    pub cores: u32,
    /// `cpu.shares` of Android's background cgroup (bg_non_interactive, Android <= 8),
    /// the weight of all cached apps together; absent: each thread its own weight.
    #[serde(default)]
    pub bg_shares: Option<u32>,
    /// Cores of Android's `background` cpuset (Android >= 7 with cpusets); absent: all.
    #[serde(default)]
    pub bg_cores: Option<u32>,
}

/// A device profile (data/devices/NAME.toml).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Device {
    pub name: String,
    pub description: String,
    pub source: String,
    pub memory: MemorySpec,
    pub zram: ZramSpec,
    pub flash: FlashSpec,
    pub cpu: CpuSpec,
}

impl Device {
    /// Loads an embedded device by name, or a device file by path.
    pub fn load(name_or_path: &str) -> Result<Device, ConfigError> {
        let (file, src) = load_source("devices", "device", name_or_path)?;
        let d: Device = parse(&file, &src)?;
        d.validate(&file, &src)?;
        Ok(d)
    }

    fn validate(&self, file: &str, src: &str) -> Result<(), ConfigError> {
        let m = &self.memory;
        let err = |k: &str, msg: String| Err(ConfigError::new(file, src, k, Some(""), msg));
        let positive = [
            ("memory.ram_mib", m.ram_mib),
            ("memory.app_mem_mib", m.app_mem_mib),
            ("zram.ratio", self.zram.ratio),
            ("flash.read_4k_us", self.flash.read_4k_us),
            ("flash.write_4k_us", self.flash.write_4k_us),
            ("flash.seq_read_mib_s", self.flash.seq_read_mib_s),
            ("flash.seq_write_mib_s", self.flash.seq_write_mib_s),
        ];
        if let Some(v) = self.flash.swap_mib.filter(|v| !(v.is_finite() && *v > 0.0)) {
            return err("flash.swap_mib", format!("must be a positive number, got {v}"));
        }
        for (k, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return err(k, format!("must be a positive number, got {v}"));
            }
        }
        let non_negative = [
            ("zram.size_mib", self.zram.size_mib),
            ("zram.compress_us_per_page", self.zram.compress_us_per_page),
            ("zram.decompress_us_per_page", self.zram.decompress_us_per_page),
            ("memory.watermark_min_mib", m.watermark_min_mib),
            ("memory.shared_rss_mib", m.shared_rss_mib),
        ];
        for (k, v) in non_negative {
            if !(v.is_finite() && v >= 0.0) {
                return err(k, format!("must be zero or more, got {v}"));
            }
        }
        if m.app_mem_mib > m.ram_mib {
            return err("memory.app_mem_mib", format!("{} MiB left to apps is more than the {} MiB of RAM", m.app_mem_mib, m.ram_mib));
        }
        if !(m.watermark_min_mib <= m.watermark_low_mib && m.watermark_low_mib <= m.watermark_high_mib) {
            return err("memory.watermark_low_mib", "watermarks must satisfy min <= low <= high".into());
        }
        if m.watermark_high_mib * 2.0 > m.app_mem_mib {
            return err("memory.watermark_high_mib", "the high watermark is more than half of app memory".into());
        }
        if m.minfree.windows(2).any(|w| w[0].0 >= w[1].0) || m.minfree.iter().any(|&(_, mib)| !(mib.is_finite() && mib >= 0.0)) {
            return err("memory.minfree", "minfree must list [oom_adj, MiB] pairs with strictly ascending adj and MiB >= 0".into());
        }
        if self.cpu.cores == 0 || self.cpu.cores > 64 {
            return err("cpu.cores", format!("must be 1..=64, got {}", self.cpu.cores));
        }
        if let Some(w) = self.cpu.bg_shares.filter(|w| !(2..=262_144).contains(w)) {
            return err("cpu.bg_shares", format!("must be 2..=262144 (cgroup v1 cpu.shares), got {w}"));
        }
        if let Some(c) = self.cpu.bg_cores.filter(|&c| c == 0 || c > self.cpu.cores) {
            return err("cpu.bg_cores", format!("must be 1..=cores ({}), got {c}", self.cpu.cores));
        }
        Ok(())
    }
}

/// One app of the catalog (data/apps.toml).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AppSpec {
    pub name: String,
    pub package: String,
    pub category: String,
    pub anon_mib: f64,
    pub file_mib: f64,
    pub launch_anon_mib: f64,
    pub launch_file_mib: f64,
    pub ws_anon_mib: f64,
    pub ws_file_mib: f64,
    pub cold_launch_ms: f64,
    pub warm_launch_ms: f64,
    pub frame_cpu_ms: f64,
    pub bg_period_s: f64,
    pub bg_cpu_ms: f64,
    pub bg_touch_mib: f64,
    pub saves_context: bool,
    pub priority_class: PriorityClass,
    pub perceptible: bool,
    pub source: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogFile {
    app: Vec<AppSpec>,
}

/// The app catalog.
#[derive(Clone, Debug, PartialEq)]
pub struct Catalog {
    pub apps: Vec<AppSpec>,
}

impl Catalog {
    /// The embedded catalog (data/apps.toml).
    pub fn embedded() -> Result<Catalog, ConfigError> {
        let src = embedded("apps.toml").ok_or_else(|| ConfigError {
            file: "data/apps.toml".into(),
            line: None,
            field: None,
            message: "not embedded in this build".into(),
        })?;
        Catalog::parse("data/apps.toml", src)
    }

    /// Loads a catalog file.
    pub fn load(path: &str) -> Result<Catalog, ConfigError> {
        let src = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: path.into(),
            line: None,
            field: None,
            message: format!("cannot read app catalog: {e}"),
        })?;
        Catalog::parse(path, &src)
    }

    pub fn parse(file: &str, src: &str) -> Result<Catalog, ConfigError> {
        let c: CatalogFile = parse(file, src)?;
        for (i, a) in c.app.iter().enumerate() {
            let err = |k: &str, msg: String| {
                Err(ConfigError::new(file, src, k, Some(&format!("\"{}\"", a.name)), format!("app `{}`: {msg}", a.name)))
            };
            if c.app[..i].iter().any(|o| o.name == a.name) {
                return err("name", "defined twice".into());
            }
            let nums = [
                ("anon_mib", a.anon_mib),
                ("file_mib", a.file_mib),
                ("launch_anon_mib", a.launch_anon_mib),
                ("launch_file_mib", a.launch_file_mib),
                ("ws_anon_mib", a.ws_anon_mib),
                ("ws_file_mib", a.ws_file_mib),
                ("cold_launch_ms", a.cold_launch_ms),
                ("warm_launch_ms", a.warm_launch_ms),
                ("frame_cpu_ms", a.frame_cpu_ms),
                ("bg_cpu_ms", a.bg_cpu_ms),
                ("bg_touch_mib", a.bg_touch_mib),
            ];
            for (k, v) in nums {
                if !(v.is_finite() && v >= 0.0) {
                    return err(k, format!("must be zero or more, got {v}"));
                }
            }
            if !(a.bg_period_s.is_finite() && a.bg_period_s > 0.0) {
                return err("bg_period_s", format!("must be positive, got {}", a.bg_period_s));
            }
            if a.launch_anon_mib > a.anon_mib || a.ws_anon_mib > a.anon_mib || a.bg_touch_mib > a.anon_mib {
                return err("launch_anon_mib", "launch_anon_mib, ws_anon_mib and bg_touch_mib must not exceed anon_mib".into());
            }
            if a.launch_file_mib > a.file_mib || a.ws_file_mib > a.file_mib {
                return err("launch_file_mib", "launch_file_mib and ws_file_mib must not exceed file_mib".into());
            }
            if a.anon_mib + a.file_mib <= 0.0 {
                return err("anon_mib", "an app needs some memory".into());
            }
        }
        Ok(Catalog { apps: c.app })
    }

    pub fn get(&self, name: &str) -> Option<&AppSpec> {
        self.apps.iter().find(|a| a.name == name)
    }
}

/// Apps cached before the measured part of a workload.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Background {
    pub pool: Vec<String>,
    pub count: usize,
    pub use_s: f64,
    /// Apps cached in this order instead of a draw from `pool`, unless a run asks for
    /// a draw (a paper's fixed set, such as the one behind Ice's Fig. 1).
    #[serde(default)]
    pub fixed: Vec<String>,
}

/// A workload (data/workloads/NAME.toml).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    pub name: String,
    pub description: String,
    pub source: String,
    pub device: String,
    pub rounds: u32,
    pub use_s: f64,
    pub idle_s: f64,
    pub interactive: bool,
    pub balloon_mib: f64,
    pub sequence: Vec<String>,
    pub background: Option<Background>,
}

impl Workload {
    /// Loads an embedded workload by name, or a workload file by path, checking every
    /// app against `catalog`.
    pub fn load(name_or_path: &str, catalog: &Catalog) -> Result<Workload, ConfigError> {
        let (file, src) = load_source("workloads", "workload", name_or_path)?;
        let w: Workload = parse(&file, &src)?;
        w.validate(&file, &src, catalog)?;
        Ok(w)
    }

    fn validate(&self, file: &str, src: &str, catalog: &Catalog) -> Result<(), ConfigError> {
        let err = |k: &str, needle: &str, msg: String| Err(ConfigError::new(file, src, k, Some(needle), msg));
        if self.sequence.is_empty() {
            return err("sequence", "", "the sequence names no app".into());
        }
        if self.rounds == 0 || self.rounds > 10_000 {
            return err("rounds", "", format!("must be 1..=10000, got {}", self.rounds));
        }
        for (k, v) in [("use_s", self.use_s), ("idle_s", self.idle_s), ("balloon_mib", self.balloon_mib)] {
            if !(v.is_finite() && v >= 0.0) {
                return err(k, "", format!("must be zero or more, got {v}"));
            }
        }
        let bg = self
            .background
            .iter()
            .flat_map(|b| b.pool.iter().map(|n| ("background.pool", n)).chain(b.fixed.iter().map(|n| ("background.fixed", n))));
        for (k, name) in self.sequence.iter().map(|n| ("sequence", n)).chain(bg) {
            if catalog.get(name).is_none() {
                return err(k, &format!("\"{name}\""), format!("unknown app `{name}` (see `floe list apps`)"));
            }
        }
        if let Some(b) = &self.background {
            if !(b.use_s.is_finite() && b.use_s >= 0.0) {
                return err("background.use_s", "", format!("must be zero or more, got {}", b.use_s));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_toml_names_file_line_and_field() {
        let src = "name = \"x\"\n[memory]\nram_mib = \"lots\"\n";
        let e = parse::<Device>("dev.toml", src).unwrap_err();
        assert_eq!(e.file, "dev.toml");
        assert_eq!(e.line, Some(3));
        assert_eq!(e.field.as_deref(), Some("ram_mib"));
    }

    #[test]
    fn unknown_app_in_workload_is_located() {
        let cat = Catalog { apps: vec![] };
        let src = "name = \"w\"\ndescription = \"\"\nsource = \"\"\ndevice = \"p20\"\nrounds = 1\nuse_s = 1.0\nidle_s = 0.0\ninteractive = true\nballoon_mib = 0.0\nsequence = [\"nope\"]\n";
        let w: Workload = parse("w.toml", src).unwrap();
        let e = w.validate("w.toml", src, &cat).unwrap_err();
        assert_eq!(e.line, Some(10));
        assert!(e.message.contains("unknown app `nope`"), "{e}");
    }

    #[test]
    fn unknown_app_in_a_fixed_background_set_is_located() {
        let cat = Catalog::embedded().unwrap();
        let src = "name = \"w\"\ndescription = \"\"\nsource = \"\"\ndevice = \"p20\"\nrounds = 1\nuse_s = 1.0\nidle_s = 0.0\ninteractive = true\nballoon_mib = 0.0\nsequence = [\"whatsapp\"]\n[background]\npool = [\"skype\"]\nfixed = [\"skype\", \"nope\"]\ncount = 1\nuse_s = 1.0\n";
        let w: Workload = parse("w.toml", src).unwrap();
        let e = w.validate("w.toml", src, &cat).unwrap_err();
        assert_eq!(e.line, Some(13));
        assert_eq!(e.field.as_deref(), Some("background.fixed"));
        assert!(e.message.contains("unknown app `nope`"), "{e}");
    }

    #[test]
    fn background_group_limits_are_checked_and_located() {
        let (file, src) = load_source("devices", "device", "nexus5").unwrap();
        let d: Device = parse(&file, &src).unwrap();
        assert_eq!(d.cpu.bg_shares, Some(52));
        d.validate(&file, &src).unwrap();
        let bad = src.replace("bg_shares = 52", "bg_shares = 1");
        let e = parse::<Device>(&file, &bad).unwrap().validate(&file, &bad).unwrap_err();
        assert!(e.message.contains("2..=262144"), "{e}");
        assert_eq!(e.line, bad.lines().position(|l| l.starts_with("bg_shares")).map(|i| i + 1));
        let bad = src.replace("bg_shares = 52", "bg_cores = 5");
        let e = parse::<Device>(&file, &bad).unwrap().validate(&file, &bad).unwrap_err();
        assert!(e.message.contains("1..=cores (4)"), "{e}");
    }
}
