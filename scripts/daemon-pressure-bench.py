#!/usr/bin/env python3
"""floe daemon against earlyoom (and nohang, where installed) under a memory budget
(root; cgroup v1 memory).

A foreground app (the largest, FG_MIB), three cached apps (CACHED_MIB each) and an
aggressor that allocates RATE MiB/s until killed share a budget of BUDGET MiB (a v1
memory group's limit: floe's own `memory_limit_mib` for floe; for earlyoom and nohang
the same group made here, and their MemAvailable floor set so that they act at the
same point of the budget as floe's lowest minfree level). Bursts run at each of RATES.

Per run: kill latency (from the aggressor crossing the point where the killer should
act, which it stamps itself, to the first app's death), who died first, kernel OOM
kills in the group (memory.oom_control's oom_kill, else /proc/vmstat's), whether the
foreground app died, and the rate the aggressor reached. Then each killer idle for
IDLE_S seconds beside the apps: CPU time (utime + stime in clock ticks, and the run
time of all its threads in ns from schedstat, which ticks of 10 ms round away, with
their context switches), resident and proportional memory (the daemon and its
supervisor for floe). earlyoom idles with --dryrun: its floor is in the machine's
memory, which other work moves, and idle it must kill nothing.

nohang (0.2) refuses a floor above half of RAM, which the budget's point is on a
machine with much more RAM than the budget: it runs from a copy of its script with
only that check relaxed.

usage: sudo scripts/daemon-pressure-bench.py [--runs N] [--rates 200,400,700,1024]
       [--budget MIB] [--floe target/release/floe] [--policy android-lmk] [--idle-s 20]
       [--tools floe,earlyoom,nohang] [--idle-only]
--floe takes `floe` (run as `floe daemon`) or `floed` (the daemon alone); `floe ctl`
is the `floe` beside it.
Everything it makes (groups, processes, files) is removed at exit.
"""
import argparse, os, re, select, shutil, signal, statistics, subprocess, sys, time

V1 = "/sys/fs/cgroup/memory"
TAG = f"floe-bench-{os.getpid()}"
# oom_score_adj of every app the bench starts (see Bench.app).
APP_ADJ = 500

APP = r"""
import mmap, os, sys, threading, time
mib, rate, stamp_at, out, go = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
# Nothing is allocated before the app is in the budget's group (a charge stays where
# it was made).
while not os.path.exists(go):
    time.sleep(0.005)
keep = [bytearray(b'\x01') * (mib << 20)] if mib else []
if rate > 0:
    # Anonymous memory in 4 MiB steps, faulted in by the kernel at mmap (MAP_POPULATE,
    # which runs without the GIL), on two threads that share the rate: the fastest
    # way from Python to 1 GiB/s on a small machine.
    step, lock, got = 4, threading.Lock(), [0]
    t0 = time.monotonic()
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_POPULATE", 0x8000)

    def burst():
        global out
        while True:
            m = mmap.mmap(-1, step << 20, flags=flags)
            with lock:
                keep.append(m)
                got[0] += step
                n = got[0]
                if n >= stamp_at and out != '-':
                    now = time.monotonic()
                    with open(out, 'w') as f:
                        f.write(repr(now) + ' ' + repr(n / (now - t0)))
                    out = '-'
            ahead = t0 + n / rate - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)

    for _ in range(2):
        threading.Thread(target=burst, daemon=True).start()
time.sleep(3600)
"""


def sh(*a, **k):
    return subprocess.run(a, check=True, **k)


def ticks(pid):
    try:
        f = open(f"/proc/{pid}/stat").read().rsplit(") ", 1)[1].split()
        return int(f[11]) + int(f[12])
    except OSError:
        return 0


def run_ns(pid):
    """CPU time of all of a process's threads in ns (schedstat: what clock ticks of
    10 ms round away), and their context switches (each a wake-up); threads that
    exited are not counted."""
    ns, switches = 0, 0
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            try:
                ns += int(open(f"/proc/{pid}/task/{t}/schedstat").read().split()[0])
                st = open(f"/proc/{pid}/task/{t}/status").read()
                switches += sum(int(l.split()[1]) for l in st.splitlines() if "ctxt_switches:" in l)
            except OSError:
                pass
    except OSError:
        pass
    return ns, switches


def kib(path, key):
    """The KiB a /proc file gives on its `key:` line; 0 once the process is gone."""
    try:
        for line in open(path):
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def rss_kib(pid):
    return kib(f"/proc/{pid}/status", "VmRSS")


def pss_kib(pid):
    """Proportional set size: pages shared with other processes (the daemon and its
    supervisor share one binary; everyone shares libc) split between them."""
    return kib(f"/proc/{pid}/smaps_rollup", "Pss")


def oom_kills(group):
    try:
        for line in open(os.path.join(group, "memory.oom_control")):
            if line.startswith("oom_kill "):
                return int(line.split()[1])
    except OSError:
        pass
    for line in open("/proc/vmstat"):
        if line.startswith("oom_kill "):
            return int(line.split()[1])
    return 0


class Bench:
    def __init__(self, a):
        self.a = a
        self.procs = []
        self.files = []

    def cleanup(self):
        for p in self.procs:
            try:
                p.kill()
                p.wait(5)
            except Exception:
                pass
        self.procs = []
        for root in (f"{V1}/{TAG}", f"/sys/fs/cgroup/unified/{TAG}", f"/sys/fs/cgroup/freezer/{TAG}"):
            if os.path.isdir(root):
                for d in os.listdir(root):
                    p = os.path.join(root, d)
                    if os.path.isdir(p):
                        try:
                            os.rmdir(p)
                        except OSError:
                            pass
                try:
                    os.rmdir(root)
                except OSError:
                    pass
        for f in self.files:
            try:
                os.unlink(f)
            except OSError:
                pass

    def app(self, name, mib, go, rate=0.0, stamp_at=0, out="-"):
        p = subprocess.Popen([sys.executable, "-c", APP, str(mib), str(rate), str(stamp_at), out, go, f"{TAG}-{name}"])
        self.procs.append(p)
        # earlyoom and nohang watch the whole machine and kill its highest oom_score:
        # every app here gets the same +APP_ADJ, so they rank above any other process
        # on the machine (one would need more than half of RAM and swap to compete)
        # and keep their order among themselves (by size, as before).
        with open(f"/proc/{p.pid}/oom_score_adj", "w") as f:
            f.write(str(APP_ADJ))
        return p

    def go(self, path):
        open(path, "w").close()
        self.files.append(path)

    @staticmethod
    def in_group(procs, within=5.0):
        """Waits until every process is in the budget's v1 memory group (floe adopts
        them; for the others this script places them)."""
        end = time.monotonic() + within
        while time.monotonic() < end:
            def inside(p):
                try:
                    return any(":memory:" in l and f"/{TAG}" in l for l in open(f"/proc/{p.pid}/cgroup"))
                except OSError:
                    return False
            if all(inside(p) for p in procs):
                return True
            time.sleep(0.01)
        return False

    def config(self, killer_mib, discover_ms):
        a = self.a
        path = f"/tmp/{TAG}.toml"
        self.files += [path, f"/tmp/{TAG}.sock", f"/tmp/{TAG}.db", f"/tmp/{TAG}.db-wal", f"/tmp/{TAG}.db-shm"]
        with open(path, "w") as f:
            f.write(f'policy = "{a.policy}"\ncgroup_root = "{TAG}"\nsocket = "/tmp/{TAG}.sock"\nstate_db = "/tmp/{TAG}.db"\n')
            f.write(f"memory_limit_mib = {a.budget}\ndiscover_ms = {discover_ms}\n")
            f.write(f"minfree_mib = [[900, {killer_mib}]]\n")
            for n in ["fg", "c1", "c2", "c3", "burst"]:
                f.write(f'[[app]]\nname = "{n}"\ncmdline = "{TAG}-{n}"\n')
        return path

    def make_group(self):
        os.makedirs(f"{V1}/{TAG}", exist_ok=True)
        open(f"{V1}/{TAG}/memory.limit_in_bytes", "w").write(str(self.a.budget << 20))

    def start_killer(self, tool, killer_mib, discover_ms=100, room_mib=None, dry=False):
        if tool == "floe":
            cfg = self.config(killer_mib, discover_ms)
            log = open(f"{self.a.logs}/floe-{time.time():.0f}.log", "w") if self.a.logs else subprocess.DEVNULL
            daemon = [self.a.floe] if os.path.basename(self.a.floe) == "floed" else [self.a.floe, "daemon"]
            d = subprocess.Popen(daemon + ["--config", cfg], stdout=log)
            self.procs.append(d)
            for _ in range(100):
                if os.path.exists(f"/tmp/{TAG}.sock"):
                    break
                time.sleep(0.05)
            return d
        self.make_group()
        avail = next(int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemAvailable:"))
        # earlyoom and nohang read the machine's MemAvailable: the floor is set where
        # the budget's free memory (ROOM_MIB now, all of it by default) reaches the
        # level floe kills at. Set just before the burst, what the rest of the machine
        # does moves it as little as it can.
        room = self.a.budget if room_mib is None else room_mib
        floor_kib = avail - (room - killer_mib) * 1024
        swap = next(int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("SwapTotal:"))
        # Without swap earlyoom refuses a swap floor (free swap counts as below it).
        args = ["-S", f"{swap},{swap}"] if swap else []
        if tool == "nohang":
            d = subprocess.Popen([sys.executable, self.nohang_script(), "--monitor", "-c", self.nohang_config(floor_kib)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.procs.append(d)
            time.sleep(1.5)
            return d
        # Idle (`dry`): earlyoom polls as it would, but kills nothing (its floor is in
        # the machine's memory, which other work on the machine moves).
        dry_args = ["--dryrun"] if dry else []
        d = subprocess.Popen(["earlyoom", "-M", f"{floor_kib},{floor_kib}", *args, "-r", "0", *dry_args], stdout=subprocess.DEVNULL)
        self.procs.append(d)
        time.sleep(0.5)
        return d

    def nohang_script(self):
        """nohang's script, its only change a floor allowed up to all of RAM (it refuses
        more than half, and the budget's point is there on a machine with much more RAM
        than the budget)."""
        path = f"/tmp/{TAG}-nohang.py"
        if not os.path.exists(path):
            src = open(shutil.which("nohang") or "/usr/sbin/nohang").read()
            fixed = src.replace("mem_min_kb > mem_total * 0.5", "mem_min_kb > mem_total * 1.0")
            if fixed == src:
                sys.exit("nohang: its floor check was not found; this script knows nohang 0.2")
            open(path, "w").write(fixed)
            self.files.append(path)
        return path

    def nohang_config(self, floor_kib):
        """The installed config with the floor at the budget's point: SIGTERM there,
        SIGKILL 16 MiB lower, whatever swap holds (its swap conditions always true)."""
        path = f"/tmp/{TAG}-nohang.conf"
        text = open("/etc/nohang/nohang.conf").read()
        sets = {
            "soft_threshold_min_mem": f"{floor_kib / 1024:.0f} M",
            "hard_threshold_min_mem": f"{floor_kib / 1024 - 16:.0f} M",
            "soft_threshold_min_swap": "100 %",
            "hard_threshold_min_swap": "100 %",
            "warning_threshold_min_swap": "100 %",
        }
        for k, v in sets.items():
            text, n = re.subn(rf"^{k}\s*=.*$", f"{k} = {v}", text, flags=re.M)
            assert n == 1, k
        open(path, "w").write(text)
        if path not in self.files:
            self.files.append(path)
        return path

    def place(self, pids):
        """For earlyoom: the apps go into the budget's group (floe adopts its own)."""
        for pid in pids:
            open(f"{V1}/{TAG}/cgroup.procs", "w").write(str(pid))

    def run_once(self, tool, rate):
        a = self.a
        killer_mib = 144  # floe's default lowest cached level (AOSP's adj 900)
        stamp = f"/tmp/{TAG}.stamp"
        self.files.append(stamp)
        if os.path.exists(stamp):
            os.unlink(stamp)
        if tool == "floe":
            d = self.start_killer(tool, killer_mib)
        else:
            self.make_group()
        go, burst_go = f"/tmp/{TAG}.go", f"/tmp/{TAG}.burst-go"
        for f in (go, burst_go):
            if os.path.exists(f):
                os.unlink(f)
        fg = self.app("fg", a.fg_mib, go)
        cached = [self.app(f"c{i}", a.cached_mib, go) for i in (1, 2, 3)]
        if tool != "floe":
            time.sleep(0.2)
            self.place([p.pid for p in [fg] + cached])
        if not self.in_group([fg] + cached):
            sys.exit(f"{tool}: the apps did not join the budget's group")
        if tool == "floe":
            floe = os.path.join(os.path.dirname(a.floe), "floe")
            subprocess.run([floe, "ctl", "--socket", f"/tmp/{TAG}.sock", "fg", "fg"], stdout=subprocess.DEVNULL)
        self.go(go)
        group = f"{V1}/{TAG}"
        want = (a.fg_mib + 3 * a.cached_mib) << 20
        end = time.monotonic() + 20
        while int(open(f"{group}/memory.usage_in_bytes").read()) < want and time.monotonic() < end:
            time.sleep(0.05)
        time.sleep(1.0)
        oom0 = oom_kills(group)
        # Where the killer should act: the group's use now (what the apps allocated
        # before they joined it stays charged where it was) plus what the aggressor
        # allocates, at the killer's level below the limit.
        used = int(open(f"{group}/memory.usage_in_bytes").read()) >> 20
        stamp_at = max(4, a.budget - killer_mib - used)
        if tool != "floe":
            self.start_killer(tool, killer_mib, room_mib=a.budget - used)
        burst = self.app("burst", 0, burst_go, rate, stamp_at, stamp)
        if tool != "floe":
            time.sleep(0.1)
            self.place([burst.pid])
        if not self.in_group([burst]):
            sys.exit(f"{tool}: the aggressor did not join the budget's group")
        self.go(burst_go)
        apps = {"fg": fg, "c1": cached[0], "c2": cached[1], "c3": cached[2], "burst": burst}
        fds = {os.pidfd_open(p.pid): n for n, p in apps.items()}
        poll = select.poll()
        for fd in fds:
            poll.register(fd, select.POLLIN)
        first, t_dead = None, None
        deadline = time.monotonic() + max(10.0, 3 * a.budget / rate)
        while first is None and time.monotonic() < deadline:
            for fd, _ in poll.poll(50):
                first, t_dead = fds[fd], time.monotonic()
                break
        time.sleep(0.5)
        dead = [n for n, p in apps.items() if p.poll() is not None]
        t_cross, reached = (float(x) for x in open(stamp).read().split()) if os.path.exists(stamp) else (None, None)
        oom = oom_kills(group) - oom0
        for fd in fds:
            os.close(fd)
        self.cleanup()
        time.sleep(0.5)
        latency = (t_dead - t_cross) * 1000 if (t_dead and t_cross) else None
        return {"first": first, "dead": dead, "latency_ms": latency, "kernel_oom": oom, "fg_killed": "fg" in dead, "reached": reached}

    def idle(self, tool):
        # Idle: floe looks for new processes at its default pace (1 s).
        d = self.start_killer(tool, 144, 1000, dry=True)
        go = f"/tmp/{TAG}.go"
        self.go(go)
        apps = [self.app(n, self.a.cached_mib // 4, go) for n in ["fg", "c1", "c2", "c3"]]
        if tool != "floe":
            self.place([p.pid for p in apps])
        time.sleep(2)
        pids = [d.pid]
        if tool == "floe":
            out = subprocess.run(["pgrep", "-f", "--", f"supervise {d.pid}"], capture_output=True, text=True).stdout.split()
            pids += [int(p) for p in out]
        print(f"{tool:9} idle: pids {pids}", flush=True)
        t0 = sum(ticks(p) for p in pids)
        n0 = [run_ns(p) for p in pids]
        peak, peak_pss = 0, 0
        end = time.monotonic() + self.a.idle_s
        while time.monotonic() < end:
            peak = max(peak, sum(rss_kib(p) for p in pids))
            peak_pss = max(peak_pss, sum(pss_kib(p) for p in pids))
            time.sleep(0.5)
        cpu = (sum(ticks(p) for p in pids) - t0) / os.sysconf("SC_CLK_TCK")
        n1 = [run_ns(p) for p in pids]
        ns = sum(b[0] - a[0] for a, b in zip(n0, n1))
        wakes = sum(b[1] - a[1] for a, b in zip(n0, n1))
        self.cleanup()
        time.sleep(0.5)
        return {"cpu_pct": 100 * cpu / self.a.idle_s, "cpu_s": cpu, "run_ms": ns / 1e6, "wakes": wakes, "rss_kib": peak,
                "pss_kib": peak_pss, "processes": len(pids)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rates", default="200,400,700,1024", help="aggressor MiB/s, comma-separated")
    ap.add_argument("--budget", type=int, default=1536)
    ap.add_argument("--fg-mib", type=int, default=400)
    ap.add_argument("--cached-mib", type=int, default=150)
    ap.add_argument("--floe", default="target/release/floe")
    ap.add_argument("--policy", default="android-lmk")
    ap.add_argument("--idle-s", type=int, default=20)
    ap.add_argument("--tools", default="floe,earlyoom,nohang" if shutil.which("nohang") else "floe,earlyoom")
    ap.add_argument("--idle-only", action="store_true", help="only the idle cost")
    ap.add_argument("--logs", help="keep floe's logs in this directory")
    a = ap.parse_args()
    b = Bench(a)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    tools = a.tools.split(",")
    rates = [float(r) for r in a.rates.split(",")]
    rows = []
    try:
        print(f"budget {a.budget} MiB, fg {a.fg_mib} MiB, 3 cached x {a.cached_mib} MiB, aggressor at {a.rates} MiB/s, {a.runs} runs each")
        for rate in rates if not a.idle_only else []:
            for tool in tools:
                rs = [b.run_once(tool, rate) for _ in range(a.runs)]
                lat = [r["latency_ms"] for r in rs if r["latency_ms"] is not None]
                reached = [r["reached"] for r in rs if r["reached"]]
                row = {
                    "rate": rate,
                    "tool": tool,
                    "median": f"{statistics.median(lat):.0f}" if lat else "-",
                    "max": f"{max(lat):.0f}" if lat else "-",
                    "oom": sum(r["kernel_oom"] for r in rs),
                    "fg": sum(r["fg_killed"] for r in rs),
                    "runs": len(rs),
                    "reached": f"{statistics.median(reached):.0f}" if reached else "-",
                }
                rows.append(row)
                print(
                    f"{rate:6g} MiB/s {tool:9} kill latency median {row['median']} ms, max {row['max']} ms; kernel OOM kills {row['oom']}; "
                    f"foreground killed {row['fg']} of {len(rs)}; aggressor reached {row['reached']} MiB/s; "
                    f"first victims {[r['first'] for r in rs]}",
                    flush=True,
                )
        idle = {}
        for tool in tools:
            idle[tool] = b.idle(tool)
            i = idle[tool]
            print(
                f"{tool:9} idle {a.idle_s} s: CPU {i['cpu_s']:.2f} s ({i['cpu_pct']:.3f} %; run time {i['run_ms']:.1f} ms, "
                f"{i['wakes']} context switches), RSS {i['rss_kib'] / 1024:.1f} MiB, "
                f"PSS {i['pss_kib'] / 1024:.1f} MiB ({i['processes']} process(es))",
                flush=True,
            )
        if rows:
            print("\n| burst | tool | kill latency median / max | kernel OOM kills | foreground killed | aggressor reached |")
            print("|---|---|---|---|---|---|")
            for r in rows:
                print(f"| {r['rate']:g} MiB/s | {r['tool']} | {r['median']} ms / {r['max']} ms | {r['oom']} | {r['fg']} of {r['runs']} | {r['reached']} MiB/s |")
    finally:
        b.cleanup()


if __name__ == "__main__":
    main()
