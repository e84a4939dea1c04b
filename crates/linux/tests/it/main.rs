//! floe-linux's one integration-test binary: its mechanisms on the real kernel
//! (`kernel`), process_madvise with zram swap (`zram`) and the daemon in this process
//! (`daemon`).

mod daemon;
mod kernel;
mod zram;

/// Why every test here needs root.
const NEEDS_ROOT: &str = "floe-linux's integration tests act on this machine's kernel: they make and remove \
cgroups under /sys/fs/cgroup, freeze, kill and page out processes, and set up zram swap and PSI triggers, \
which only root may do. Run them as root, e.g. `sudo -E cargo test -p floe-linux --test it`.";

/// Called first by every test's set-up: run by another user, a test fails with
/// [`NEEDS_ROOT`] (printed in full once, the other tests naming it) instead of on a
/// permission of some cgroup file.
fn needs_root() {
    static SAID: std::sync::Once = std::sync::Once::new();
    if euid() == 0 {
        return;
    }
    SAID.call_once(|| eprintln!("error: {NEEDS_ROOT}"));
    panic!("needs root (see the error above)");
}

/// The effective user id.
fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Held by the tests that swap an app out and back in, touch tens of MiB or thrash an
/// app on purpose (memory stalls and reclaim), so they never overlap and one's stalls
/// and faults never show in another's counts; and by every daemon test, so that the
/// groups one makes never show in the dry run's look at all the cgroup trees. The test
/// harness runs tests in parallel.
static QUIET: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Takes [`QUIET`], whatever a failed test left it in.
fn quiet() -> std::sync::MutexGuard<'static, ()> {
    needs_root();
    QUIET.lock().unwrap_or_else(|e| e.into_inner())
}

/// Held by the tests that make `floe-check-*` scratch groups or sweep them
/// (`floe_linux::check::run` does both), so a sweep never takes a group another test is
/// still filling.
static SCRATCH: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Takes [`SCRATCH`], whatever a failed test left it in.
fn scratch() -> std::sync::MutexGuard<'static, ()> {
    needs_root();
    SCRATCH.lock().unwrap_or_else(|e| e.into_inner())
}
