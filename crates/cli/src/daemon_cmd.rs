//! The daemon's command line, shared by `floe daemon` and `floed` (the daemon alone,
//! without the simulator, the experiments and their libraries): the same options, the
//! same code.

use anyhow::{bail, Context, Result};
use std::io::Write;

/// What `floe daemon --help` and `floed --help` end with: how the daemon stops and logs.
pub const AFTER_HELP: &str = "Stops on SIGTERM, SIGINT or SIGHUP: thaws every app, lifts the budget's memory cap and writes the run's record (--run-json); if it is killed, its supervisor thaws and lifts instead. Logs to standard output (the journal under systemd) through a queue of its own: a reader that falls behind loses lines, counted in the log, and never stalls the killer. One daemon at a time per state database and cgroup root: a second is refused.";

/// The options of `floe daemon` and of `floed`.
#[derive(clap::Args)]
pub struct DaemonArgs {
    /// Check the mechanisms and exit: 0 when every one the policy needs works.
    #[arg(long)]
    pub check: bool,
    /// Config file (TOML; see packaging/floe.toml). Required unless --check.
    #[arg(long)]
    pub config: Option<String>,
    /// The policy to check for with --check and no --config (default: ice); with
    /// --config, the config's `policy` is the one.
    #[arg(long, conflicts_with = "config")]
    pub policy: Option<String>,
    /// Log every action instead of taking it (overrides the config).
    #[arg(long)]
    pub dry_run: bool,
    /// Append a timeline to FILE: a CSV row every `timeline_ms` (1 s unless the
    /// config says), the columns of `floe sim --timeline` (overrides the config).
    #[arg(long, value_name = "FILE")]
    pub timeline: Option<String>,
    /// Write the run to FILE when the daemon stops: one JSON object as `floe sim --json`
    /// prints a run, with what the kernel and the daemon counted (refaults, reclaim,
    /// kills, freezes, thaws, zram, CPU, launches); `floe ctl run` prints it at any time
    /// (overrides the config's `run_json`).
    #[arg(long, value_name = "FILE")]
    pub run_json: Option<String>,
    /// Internal: supervise daemon PID and thaw its apps when it exits.
    #[arg(long, hide = true)]
    pub supervise: Option<i32>,
    /// Internal: the cgroup root the supervisor thaws.
    #[arg(long, hide = true, default_value = "floe")]
    pub cgroup_root: String,
    /// Internal: the adopted layout whose uid_N groups the supervisor thaws.
    #[arg(long, hide = true)]
    pub adopt_layout: Option<String>,
    /// Internal: the supervisor also sets the apps' processes the daemon boosted
    /// (nice -10, UCSG's foreground) back to 0.
    #[arg(long, hide = true)]
    pub unboost: bool,
}

/// Runs what `a` asks: the supervisor, the check, or the daemon, whose supervisor is
/// this same executable run with `prefix` (the words before the daemon's options:
/// `daemon` for `floe`, none for `floed`) and `--supervise`.
pub fn run(a: DaemonArgs, prefix: &[&str]) -> Result<()> {
    if let Some(pid) = a.supervise {
        return floe_linux::daemon::supervise(pid, &a.cgroup_root, a.adopt_layout.as_deref(), a.unboost).map_err(Into::into);
    }
    let cfg = a.config.as_deref().map(floe_linux::daemon::Config::load).transpose()?;
    let policy = cfg.as_ref().map_or(a.policy.as_deref().unwrap_or("ice"), |c| c.policy.as_str());
    if floe_policies::lookup(policy).is_none() {
        bail!("unknown policy `{policy}` (see `floe list policies`)");
    }
    if !a.check {
        let Some(mut cfg) = cfg else { bail!("the daemon needs --config FILE (or --check to test this machine)") };
        cfg.dry_run |= a.dry_run;
        if let Some(t) = a.timeline {
            cfg.timeline = Some(t.into());
        }
        if let Some(r) = a.run_json {
            cfg.run_json = Some(r.into());
        }
        let exe = std::env::current_exe()?;
        let mut d = floe_linux::daemon::Daemon::new(cfg, Some((&exe, prefix)))?;
        return d.run().map_err(Into::into);
    }
    let need = floe_linux::check::required(policy);
    let verdicts = floe_linux::check::run();
    let mut missing = Vec::new();
    let mut out = std::io::stdout();
    for v in &verdicts {
        let req = need.contains(&v.mechanism);
        let tag = match (v.ok, req) {
            (true, _) => "ok",
            (false, true) => "MISSING",
            (false, false) => "unavailable",
        };
        writeln!(out, "{tag:<12} {:<20} {}{}", v.mechanism, v.detail, if req { "" } else { "  (optional for this policy)" })
            .context("cannot write to standard output")?;
        if !v.ok && req {
            missing.push(v.mechanism);
        }
    }
    if let Some(why) = floe_linux::daemon::refuses(policy) {
        bail!("{why}: the daemon refuses it whatever the kernel offers");
    }
    if !missing.is_empty() {
        bail!("policy `{policy}` needs what this kernel does not offer: {}", missing.join(", "));
    }
    Ok(())
}
