//! floe-core: the vocabulary shared by the simulator, the Linux daemon and the policies.
//!
//! Nothing here does I/O or reads a clock. Units live in types ([`Nanos`], [`Pages`])
//! or in field names (`_kib`, `_ms`), events and actions are closed enums, and a policy
//! sees the world only through [`SystemView`].

pub mod event;
pub mod input;
pub mod lmkd;
pub mod metrics;
pub mod policy;
pub mod timeline;
pub mod units;

pub use event::{Action, CpuClass, Event, LaunchKind, PageKind, SwapTier};
pub use lmkd::LmkdMode;
pub use metrics::{AppStats, ExperimentRecord, Finding, KillCauses, LaunchLog, Metrics, Param, RunRecord, Verdict};
pub use policy::{
    cached_oom_adj, shared_slot_adjs, AppInfo, AppState, CachedAdj, CpuMode, EventMask, LmkMode, MemInfo, Policy, PrepageSetup,
    PriorityClass, ReclaimOrder, SealSetup, Setup, SwapSetup, SystemView, PREVIOUS_APP_ADJ,
};
pub use timeline::Sample;
pub use units::{AppId, Nanos, Pages, PAGE_SIZE};
