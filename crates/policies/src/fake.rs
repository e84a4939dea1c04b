//! A hand-made `SystemView` for policy unit tests: a clock, free memory, utilisation,
//! the foreground app and a table of apps that tests edit directly.

use floe_core::{AppId, AppInfo, AppState, MemInfo, Nanos, Pages, SystemView};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default)]
pub(crate) struct FakeView {
    pub now: Nanos,
    pub free: Pages,
    pub wmark_high: Pages,
    pub util: f64,
    pub fg: Option<AppId>,
    pub apps: BTreeMap<AppId, AppInfo>,
    pub charging: bool,
}

/// An app with ordinary defaults: medium priority, swappable, nothing swapped.
pub(crate) fn app(i: u16, state: AppState, adj: i32) -> AppInfo {
    AppInfo::ordinary(AppId(i), state, adj)
}

impl FakeView {
    pub fn insert(&mut self, info: AppInfo) -> &mut AppInfo {
        let id = info.id;
        self.apps.insert(id, info);
        self.apps.get_mut(&id).expect("just inserted")
    }

    pub fn get(&mut self, i: u16) -> &mut AppInfo {
        self.apps.get_mut(&AppId(i)).expect("app in view")
    }

    /// Applies a kill as the backend would.
    pub fn kill(&mut self, i: u16) {
        let a = self.get(i);
        a.state = AppState::Dead;
        a.swapped = Pages(0);
    }
}

impl SystemView for FakeView {
    fn now(&self) -> Nanos {
        self.now
    }
    fn mem(&self) -> MemInfo {
        MemInfo { free: self.free, available: self.free, wmark_high: self.wmark_high, ..MemInfo::default() }
    }
    fn foreground(&self) -> Option<AppId> {
        self.fg
    }
    fn apps(&self) -> Vec<AppId> {
        self.apps.keys().copied().collect()
    }
    fn app(&self, id: AppId) -> Option<AppInfo> {
        self.apps.get(&id).cloned()
    }
    fn cpu_busy_iowait(&self) -> f64 {
        self.util
    }
    fn charging(&self) -> bool {
        self.charging
    }
}
