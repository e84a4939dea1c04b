//! floe-linux's one integration-test binary: its mechanisms on the real kernel
//! (`kernel`), process_madvise with zram swap (`zram`) and the daemon in this process
//! (`daemon`).

mod daemon;
mod kernel;
mod zram;

/// Held by the tests that swap an app out and back in, touch tens of MiB or thrash an
/// app on purpose (memory stalls and reclaim), so they never overlap and one's stalls
/// and faults never show in another's counts; the test harness runs tests in parallel.
static QUIET: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Takes [`QUIET`], whatever a failed test left it in.
fn quiet() -> std::sync::MutexGuard<'static, ()> {
    QUIET.lock().unwrap_or_else(|e| e.into_inner())
}

/// Held by the tests that make `floe-check-*` scratch groups or sweep them
/// (`floe_linux::check::run` does both), so a sweep never takes a group another test is
/// still filling.
static SCRATCH: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Takes [`SCRATCH`], whatever a failed test left it in.
fn scratch() -> std::sync::MutexGuard<'static, ()> {
    SCRATCH.lock().unwrap_or_else(|e| e.into_inner())
}
