//! Events a backend reports to a policy, and actions a policy asks a backend to take.
//!
//! Both enums are closed: a backend handles every variant, and a variant it cannot
//! honour is reported when the policy is set up (see [`crate::Setup`]), never dropped.

use crate::units::{AppId, Nanos, Pages};
use serde::{Deserialize, Serialize};

/// Anonymous (heap) or file-backed page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PageKind {
    Anon,
    File,
}

/// How an app was launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum LaunchKind {
    /// The process did not exist: fork from zygote, read code, initialise.
    Cold,
    /// The process was cached: bring it back to the foreground.
    Warm,
}

/// Where swapped anonymous pages go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SwapTier {
    /// Compressed RAM (zram, zswap's pool, SEAL's SL1).
    Zram,
    /// Swap space on flash (swap partition, zswap writeback, SEAL's SL2).
    Flash,
}

/// CPU scheduling class for an app's threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CpuClass {
    /// Boosted (UCSG's foreground group, Android's top-app with a high share).
    Boosted,
    /// Ordinary CFS weight (nice 0).
    Normal,
    /// SCHED_IDLE: runs only when nothing else wants the core.
    Idle,
}

/// Something that happened, reported to the policy.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// Periodic tick at the interval the policy asked for in its [`crate::Setup`].
    Tick,
    /// A page of `app` that had been reclaimed was faulted back in.
    Refault { app: AppId, kind: PageKind, fg: bool },
    /// Free memory crossed below a watermark; `free` is what is left.
    Pressure { free: Pages, low: Pages, min: Pages },
    /// kswapd ran a reclaim pass below the low watermark and freed nothing: what is
    /// left on the LRU is in use, locked, or cannot be swapped. `free` is what is left.
    /// Sent with the pressure events.
    ReclaimFailed { free: Pages },
    /// The foreground changed from `from` to `to` (None: the home screen).
    AppSwitch { from: Option<AppId>, to: Option<AppId> },
    /// The user asked for `app`; it is about to be launched. A policy may still act
    /// (e.g. thaw) before the launch begins.
    LaunchStarted { app: AppId, kind: LaunchKind },
    /// The launch of `app` finished after `latency`.
    LaunchDone { app: AppId, kind: LaunchKind, latency: Nanos },
    /// A process for `app` was started.
    AppStarted { app: AppId },
    /// The process of `app` exited or was killed.
    AppDied { app: AppId },
    /// The backend's low-memory killer threshold was crossed; `min_adj` is the lowest
    /// oom_adj the stock killer would consider at this level. Only sent to policies
    /// with [`crate::LmkMode::Policy`].
    LowMemory { min_adj: i32, free: Pages },
}

/// Something a policy asks the backend to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Stop scheduling every thread of the app.
    Freeze(AppId),
    /// Resume a frozen app.
    Thaw(AppId),
    /// Kill every app in the set at once.
    Kill(Vec<AppId>),
    /// Reclaim up to `pages` of the app's anonymous memory into `tier`.
    Reclaim { app: AppId, pages: Pages, tier: SwapTier },
    /// Fetch up to `pages` of the app's swapped-out or dropped pages ahead of use.
    Prepage { app: AppId, pages: Pages },
    /// Allow or forbid swapping the app's anonymous pages.
    SetSwappable { app: AppId, swappable: bool },
    /// Change the scheduling class of the app's threads.
    SetCpuPriority { app: AppId, class: CpuClass },
    /// Tell the low-memory killer never to choose this app.
    MarkUnkillable { app: AppId, unkillable: bool },
}
