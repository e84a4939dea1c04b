//! floe-linux: the real-kernel backend (cgroups, PSI, freezer, pidfds, process_madvise)
//! and the daemon loop. It implements `floe_core::SystemView` over /proc and cgroupfs
//! and applies `floe_core::Action`s through the kernel; see DESIGN.md "Real kernel
//! mapping". Not built yet: the simulator comes first (issue "floe daemon").
