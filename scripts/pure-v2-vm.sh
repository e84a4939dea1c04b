#!/usr/bin/env bash
# Runs floe's daemon on a pure cgroup v2 kernel (no v1 hierarchy: the memory controller
# on v2, as systemd distributions have it), which this project's machine, whose memory
# controller is v1's, cannot be. Boots a Debian kernel under qemu (software emulation:
# no KVM needed) with a busybox initramfs holding floe, a static build of
# scripts/probe/bg.c and the zram modules, and in it:
#   1. `floe daemon --check` for ice and android-lmk: each mechanism's verdict, the
#      refault counters and swap limit from the v2 memory controller;
#   2. Ice end to end, as the kernel test `ice_freezes_the_refaulting_background_app...`
#      does it on v1: zram swap, a background app touching 40 MiB of heap in a group
#      capped at 24 MiB (v2 memory.max), a foreground app that idles; Ice must freeze the
#      background app on its refaults, `floe ctl fg` thaw it, and the supervisor thaw it
#      when the daemon is killed with SIGKILL;
#   3. android-lmk over a 200 MiB budget (v2 memory.max on floe's root group): its apps
#      kept out of zram by memory.swap.max 0, and the cached app killed, not the
#      foreground one, when the two leave less than the minfree level free;
#   4. a burst under the same budget with the daemon sampling only every 5 s: a cached
#      app filling 150 MiB at memory speed beside a 100 MiB foreground one. memory.high
#      (the emergency margin below the limit) throttles it, its memory.events wake the
#      daemon, and the daemon kills it well before its next sample: the foreground
#      lives and the kernel's OOM killer never runs (memory.events oom_kill 0).
# Each step prints PASS or FAIL; the script exits 1 if any failed or the VM did not get
# through. Everything lives in a temporary directory, removed at exit.
#   usage: scripts/pure-v2-vm.sh [KERNEL_DEB]
# KERNEL_DEB is a Debian linux-image-*-amd64 package (.deb); without it the current one
# is fetched with `apt-get download`. Needs qemu-system-x86_64, busybox (static), cpio,
# gcc with a static libc, and floe built: `cargo build --release -p floe` (target/debug
# is used if there is no release build). Does not need root. KERNEL_ARGS, if set, is
# added to the kernel's command line (e.g. cgroup_disable=memory: the daemon must then
# refuse Ice, and the Ice steps fail).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FLOE="$ROOT/target/release/floe"
[ -x "$FLOE" ] || FLOE="$ROOT/target/debug/floe"
[ -x "$FLOE" ] || { echo "build floe first: cargo build --release -p floe" >&2; exit 2; }
for tool in qemu-system-x86_64 cpio gcc; do
    command -v "$tool" >/dev/null || { echo "needs $tool (apt-get install qemu-system-x86 cpio gcc)" >&2; exit 2; }
done
BUSYBOX=$(command -v busybox || true)
if [ -z "$BUSYBOX" ] || ! file -L "$BUSYBOX" | grep -q "statically linked"; then
    echo "needs a static busybox (apt-get install busybox-static)" >&2
    exit 2
fi
WORK=$(mktemp -d /tmp/floe-v2-vm.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

DEB=${1:-}
if [ -z "$DEB" ]; then
    PKG=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/ {print $2; exit}')
    (cd "$WORK" && apt-get download -qq -o APT::Sandbox::User=root "$PKG")
    DEB=$(ls "$WORK"/linux-image-*.deb)
fi
dpkg-deb -x "$DEB" "$WORK/k"
VMLINUZ=$(ls "$WORK"/k/boot/vmlinuz-*)
MODS=$(ls -d "$WORK"/k/lib/modules/*)

R="$WORK/root"
mkdir -p "$R"/{bin,lib/x86_64-linux-gnu,lib64,proc,sys,dev,tmp,run}
cp "$BUSYBOX" "$R/bin/busybox"
cp "$FLOE" "$R/bin/floe"
for lib in $(ldd "$FLOE" | awk '/=> \// {print $3} /^[ \t]*\// {print $1}'); do
    mkdir -p "$R$(dirname "$lib")"
    cp "$lib" "$R$lib"
done
gcc -O2 -static -o "$R/bin/bg" "$ROOT/scripts/probe/bg.c" -lm
# The apps are found by their command lines: each runs bg under its own name.
ln -s bg "$R/bin/vm-fg"
ln -s bg "$R/bin/vm-bg"
ln -s bg "$R/bin/vm-top"
ln -s bg "$R/bin/vm-a"
for m in mm/zsmalloc.ko drivers/block/zram/zram.ko; do
    f=$(ls "$MODS"/kernel/$m* | head -1)
    case "$f" in
        *.xz) xz -dc "$f" >"$R/$(basename "$m")" ;;
        *.zst) zstd -qdc "$f" >"$R/$(basename "$m")" ;;
        *) cp "$f" "$R/$(basename "$m")" ;;
    esac
done

cat >"$R/floe.toml" <<'EOF'
policy = "ice"
cgroup_root = "floe"
socket = "/run/floe.sock"
state_db = "/tmp/floe.db"
sample_ms = 50
discover_ms = 50

[[app]]
name = "fg"
cmdline = "vm-fg"

[[app]]
name = "bg"
cmdline = "vm-bg"
EOF

cat >"$R/lmk.toml" <<'EOF'
policy = "android-lmk"
cgroup_root = "lmk"
socket = "/run/lmk.sock"
state_db = "/tmp/lmk.db"
sample_ms = 50
discover_ms = 50
memory_limit_mib = 200
minfree_mib = [[900, 60]]

[[app]]
name = "top"
cmdline = "vm-top"

[[app]]
name = "a"
cmdline = "vm-a"
EOF

sed -e 's/^cgroup_root = .*/cgroup_root = "burst"/' -e 's/^socket = .*/socket = "\/run\/burst.sock"/' \
    -e 's/^state_db = .*/state_db = "\/tmp\/burst.db"/' -e 's/^sample_ms = .*/sample_ms = 5000\nidle_sample_ms = 5000/' -e 's/^discover_ms = .*/discover_ms = 5000/' "$R/lmk.toml" >"$R/burst.toml"

cat >"$R/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp; mount -t tmpfs run /run
mkdir -p /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup
say() { echo "floe-vm: $*"; }
pass() { say "PASS $*"; }
fail() { say "FAIL $*"; }
# Waits up to $1 tenths of a second for the command after it to succeed.
wait_for() { n=$1; shift; while [ "$n" -gt 0 ]; do "$@" && return 0; sleep 0.1; n=$((n - 1)); done; return 1; }
frozen() { grep -q "^frozen 1" /sys/fs/cgroup/floe/$1/cgroup.events; }
thawed() { [ -e /sys/fs/cgroup/floe/$1/cgroup.events ] && ! frozen "$1"; }
say "kernel $(uname -r); v2 root offers: $(cat /sys/fs/cgroup/cgroup.controllers); on: [$(cat /sys/fs/cgroup/cgroup.subtree_control)]"

for p in ice android-lmk; do
    floe daemon --check --policy $p >/tmp/check 2>&1
    sed 's/^/floe-vm: check '$p': /' /tmp/check
    grep -q "^ok  *refault counters  *v2 memory memory.stat" /tmp/check && grep -q "^ok  *per-app swappiness  *v2 memory.swap.max" /tmp/check \
        && pass "check $p: refault counters and swap limit from the v2 memory controller" || fail "check $p"
done

insmod /zsmalloc.ko; insmod /zram.ko num_devices=1
echo 256M >/sys/block/zram0/disksize && mkswap /dev/zram0 >/dev/null && swapon /dev/zram0 && say "zram swap: $(grep zram0 /proc/swaps)"

floe daemon --config /floe.toml >/tmp/daemon.log 2>&1 &
daemon=$!
sh -c 'while [ ! -e /tmp/go ]; do sleep 0.05; done; exec vm-bg 40 40 40 0.05 1' &
bg=$!
vm-fg 4 4 0 600 2 &
fg=$!
wait_for 100 sh -c '[ -n "$(cat /sys/fs/cgroup/floe/bg/cgroup.procs 2>/dev/null)" ] && [ -n "$(cat /sys/fs/cgroup/floe/fg/cgroup.procs 2>/dev/null)" ]' \
    && pass "apps adopted into /sys/fs/cgroup/floe/{fg,bg}" || fail "apps adopted"
say "floe's group passes on: [$(cat /sys/fs/cgroup/floe/cgroup.subtree_control)]"
echo 24M >/sys/fs/cgroup/floe/bg/memory.max
touch /tmp/go
floe ctl fg fg >/dev/null
wait_for 300 frozen bg && pass "Ice froze the refaulting background app" || fail "bg not frozen in 30 s"
floe ctl metrics >/tmp/metrics
say "$(grep -E '^floe_(refaults_bg_anon|refaults_bg_file|freezes)_total' /tmp/metrics | tr '\n' ' ')"
say "bg memory.stat: $(grep -E '^workingset_refault_(anon|file) ' /sys/fs/cgroup/floe/bg/memory.stat | tr '\n' ' ')"
grep -q '^floe_refaults_bg_anon_total [1-9]' /tmp/metrics && pass "refaults counted from v2 memory.stat" || fail "no background anon refaults counted"
thawed fg && pass "the foreground app is not frozen" || fail "fg frozen"
floe ctl fg bg >/dev/null
thawed bg && pass "floe ctl fg bg thawed it" || fail "bg still frozen after ctl fg bg"
floe ctl fg fg >/dev/null
wait_for 300 frozen bg && pass "frozen again in the background" || fail "bg not frozen again"
kill -9 $daemon
wait_for 10 thawed bg && pass "the supervisor thawed bg within 1 s of the daemon's SIGKILL" || fail "bg still frozen 1 s after SIGKILL"
sed 's/^/floe-vm: daemon: /' /tmp/daemon.log | head -40
kill -9 $bg $fg 2>/dev/null

# The stock killer over a 200 MiB budget (v2 memory.max on floe's root group): a cached
# app of 60 MiB and a foreground one of 100 MiB leave 40 MiB free, under the 60 MiB
# minfree level of cached apps: the cached one dies. Without swap in its setup,
# android-lmk keeps the apps out of the machine's zram (memory.swap.max 0).
floe daemon --config /lmk.toml >/tmp/lmk.log 2>&1 &
daemon=$!
sh -c 'while [ ! -e /tmp/go2 ]; do sleep 0.05; done; exec vm-top 100 1 0 600 3' &
top=$!
sh -c 'while [ ! -e /tmp/go2 ]; do sleep 0.05; done; exec vm-a 60 1 0 600 4' &
a=$!
wait_for 100 sh -c '[ -n "$(cat /sys/fs/cgroup/lmk/top/cgroup.procs 2>/dev/null)" ] && [ -n "$(cat /sys/fs/cgroup/lmk/a/cgroup.procs 2>/dev/null)" ]' \
    && pass "lmk: apps adopted" || fail "lmk: apps adopted"
say "lmk: budget memory.max $(cat /sys/fs/cgroup/lmk/memory.max); swap.max top $(cat /sys/fs/cgroup/lmk/top/memory.swap.max), a $(cat /sys/fs/cgroup/lmk/a/memory.swap.max)"
[ "$(cat /sys/fs/cgroup/lmk/memory.max)" = "$((200 << 20))" ] && pass "lmk: the budget is the root group's memory.max" || fail "lmk: budget"
[ "$(cat /sys/fs/cgroup/lmk/a/memory.swap.max)" = "0" ] && pass "lmk: apps kept out of swap by memory.swap.max 0" || fail "lmk: swap.max"
floe ctl --socket /run/lmk.sock fg top >/dev/null
touch /tmp/go2
wait_for 150 sh -c "! kill -0 $a 2>/dev/null" && pass "lmk: the cached app killed under the budget" || fail "lmk: a not killed in 15 s"
sleep 1
kill -0 $top 2>/dev/null && pass "lmk: the foreground app lives" || fail "lmk: top died"
say "lmk: memory.current $(cat /sys/fs/cgroup/lmk/memory.current)"
kill $daemon; wait $daemon
sed 's/^/floe-vm: lmk daemon: /' /tmp/lmk.log | head -20
kill -9 $top 2>/dev/null

floe daemon --config /burst.toml >/tmp/burst.log 2>&1 &
daemon=$!
sh -c 'while [ ! -e /tmp/go3top ]; do sleep 0.05; done; exec vm-top 100 1 0 600 5' &
top=$!
sh -c 'while [ ! -e /tmp/go3 ]; do sleep 0.05; done; exec vm-a 150 1 0 600 6' &
a=$!
wait_for 100 sh -c '[ -n "$(cat /sys/fs/cgroup/burst/top/cgroup.procs 2>/dev/null)" ] && [ -n "$(cat /sys/fs/cgroup/burst/a/cgroup.procs 2>/dev/null)" ]' \
    && pass "burst: apps adopted" || fail "burst: apps adopted"
say "burst: memory.high $(cat /sys/fs/cgroup/burst/memory.high), memory.max $(cat /sys/fs/cgroup/burst/memory.max)"
grep -q '^[0-9][0-9]*$' /sys/fs/cgroup/burst/memory.high && pass "burst: memory.high set below the budget" || fail "burst: memory.high not set"
floe ctl --socket /run/burst.sock fg top >/dev/null
touch /tmp/go3top
wait_for 100 sh -c '[ "$(cat /sys/fs/cgroup/burst/memory.current)" -gt $((96 << 20)) ]' || fail "burst: top did not fill its heap"
t0=$(cut -d' ' -f1 /proc/uptime)
touch /tmp/go3
wait_for 40 sh -c "! kill -0 $a 2>/dev/null" && pass "burst: the cached app killed within 4 s (the daemon samples every 5 s)" || fail "burst: a alive 4 s into its burst"
say "burst: $(awk -v t0="$t0" '{printf "killed %.1f s after the burst began", $1 - t0}' /proc/uptime)"
sleep 1
kill -0 $top 2>/dev/null && pass "burst: the foreground app lives" || fail "burst: top died"
say "burst: memory.events $(tr '\n' ' ' </sys/fs/cgroup/burst/memory.events)"
grep -q '^high [1-9]' /sys/fs/cgroup/burst/memory.events && pass "burst: it crossed memory.high" || fail "burst: memory.high never crossed"
grep -q '^oom_kill 0$' /sys/fs/cgroup/burst/memory.events && pass "burst: no kernel OOM kill" || fail "burst: the kernel's OOM killer ran"
floe ctl --socket /run/burst.sock metrics >/tmp/metrics
say "burst: $(grep -E '^floe_budget_memory_events_total' /tmp/metrics)"
grep -q '^floe_budget_memory_events_total [1-9]' /tmp/metrics && pass "burst: woken by memory.events" || fail "burst: no memory.events wake-up"
kill $daemon; wait $daemon
sed 's/^/floe-vm: burst daemon: /' /tmp/burst.log | head -20
kill -9 $top 2>/dev/null
say "done"
poweroff -f
EOF
chmod +x "$R/init"
(cd "$R" && find . | cpio -o -H newc 2>/dev/null | gzip -1 >"$WORK/initrd.gz")

# Software emulation: the kernel boots in a few seconds, the test takes well under a minute.
timeout 600 qemu-system-x86_64 -accel tcg -cpu max -m 1024 -smp 2 -nographic -no-reboot \
    -kernel "$VMLINUZ" -initrd "$WORK/initrd.gz" \
    -append "console=ttyS0 loglevel=3 cgroup_no_v1=all panic=-1 ${KERNEL_ARGS:-}" </dev/null | tr -d '\r' | tee "$WORK/console" | grep '^floe-vm: '
grep -q '^floe-vm: done' "$WORK/console" || { echo "the VM did not get through (console above)" >&2; exit 1; }
if grep -q '^floe-vm: FAIL' "$WORK/console"; then exit 1; fi
echo "all passed"
