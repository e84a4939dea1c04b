//! A policy of your own in the simulator, without registering it: "page out on leave"
//! compresses an app's anonymous memory into zram the moment it leaves the foreground
//! (a proactive reclaim in the spirit of SmartSwap and Marvin, which Ice's §7 cites),
//! run beside the stock `lru-cfs` on ASAP's first app-switch sequence. docs/ADDING-A-POLICY.md
//! walks through it.
//!
//!     cargo run --release -p floe-sim --example own_policy [WORKLOAD] [DEVICE]

use floe_core::{Action, Event, EventMask, Policy, Setup, SwapSetup, SwapTier, SystemView};
use floe_sim::{run_policy, Catalog, Device, RunOptions, Workload};

/// Sends every app that leaves the foreground to zram, all of its resident pages
/// (the backend takes the anonymous ones it can swap).
struct PageoutOnLeave;

impl Policy for PageoutOnLeave {
    fn name(&self) -> &'static str {
        "pageout-on-leave"
    }

    /// The kernel it runs on: zram swap and Android's LMK, as `lru-cfs`; the only
    /// events it needs are the foreground's changes (the `launches` group).
    fn setup(&self) -> Setup {
        Setup { swap: SwapSetup::Zram, events: EventMask { launches: true, ..EventMask::NONE }, ..Setup::stock() }
    }

    /// Policies see the system only through `view` and act only through `out`: no I/O,
    /// no clock, no randomness of their own, so a run stays deterministic.
    fn on_event(&mut self, ev: &Event, view: &dyn SystemView, out: &mut Vec<Action>) {
        if let Event::AppSwitch { from: Some(app), .. } = ev {
            if let Some(info) = view.app(*app) {
                out.push(Action::Reclaim { app: *app, pages: info.rss, tier: SwapTier::Zram });
            }
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let catalog = Catalog::embedded()?;
    let workload = Workload::load(args.first().map_or("asap-seq1", String::as_str), &catalog)?;
    let device = match args.get(1) {
        Some(d) => Device::load(d)?,
        None => workload.default_device()?,
    };
    let opts = RunOptions { seed: 1, ..RunOptions::default() };
    println!("{} on {}, seed 1", workload.name, device.name);
    println!(
        "{:<18} {:>10} {:>10} {:>6} {:>6} {:>6} {:>12} {:>10}",
        "policy", "launch ms", "switch ms", "warm", "cold", "kills", "reclaimed", "zram MiB"
    );
    let stock = floe_policies::make("lru-cfs").ok_or("lru-cfs is not registered")?;
    for policy in [stock, Box::new(PageoutOnLeave) as Box<dyn Policy>] {
        let name = policy.name();
        let m = run_policy(&device, &workload, &catalog, policy, &opts)?.metrics;
        let zram_mib = m.zram_stored_bytes as f64 / (1 << 20) as f64;
        println!(
            "{name:<18} {:>10.0} {:>10.0} {:>6} {:>6} {:>6} {:>12} {:>10.1}",
            m.launch_ms_mean, m.switch_ms_mean, m.launches_warm, m.launches_cold, m.kills, m.reclaimed_pages, zram_mib
        );
    }
    Ok(())
}
