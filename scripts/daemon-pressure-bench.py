#!/usr/bin/env python3
"""floe daemon against earlyoom under a memory budget (root; cgroup v1 memory).

A foreground app (the largest, FG_MIB), three cached apps (CACHED_MIB each) and an
aggressor that allocates RATE MiB/s until killed share a budget of BUDGET MiB (a v1
memory group's limit: floe's own `memory_limit_mib` for floe; for earlyoom the same
group made here, and earlyoom's MemAvailable floor set so that it acts at the same
point of the budget as floe's emergency margin plus its lowest minfree level).

Per run: kill latency (from the aggressor crossing the point where the killer should
act, which it stamps itself, to the first app's death), who died first, kernel OOM
kills in the group (memory.oom_control's oom_kill, else /proc/vmstat's), and whether
the foreground app died. Then each killer idle for IDLE_S seconds beside the apps:
CPU time and resident memory (the daemon and its supervisor for floe).

usage: sudo scripts/daemon-pressure-bench.py [--runs N] [--rate MIB_S] [--budget MIB]
       [--floe target/release/floe] [--policy ice] [--idle-s 20]
Everything it makes (groups, processes, files) is removed at exit.
"""
import argparse, os, select, signal, statistics, subprocess, sys, time

V1 = "/sys/fs/cgroup/memory"
TAG = f"floe-bench-{os.getpid()}"

APP = r"""
import os, sys, time
mib, rate, stamp_at, out = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
keep = [bytearray(b'\x01') * (mib << 20)] if mib else []
if rate > 0:
    got, step = 0, 4
    t0 = time.monotonic()
    while True:
        keep.append(bytearray(b'\x02') * (step << 20))
        got += step
        if got >= stamp_at and out != '-':
            with open(out, 'w') as f:
                f.write(repr(time.monotonic()))
            out = '-'
        ahead = t0 + got / rate - time.monotonic()
        if ahead > 0:
            time.sleep(ahead)
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


def rss_kib(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


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

    def app(self, name, mib, rate=0.0, stamp_at=0, out="-"):
        p = subprocess.Popen([sys.executable, "-c", APP, str(mib), str(rate), str(stamp_at), out, f"{TAG}-{name}"])
        self.procs.append(p)
        return p

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

    def start_killer(self, tool, killer_mib, discover_ms=100):
        if tool == "floe":
            cfg = self.config(killer_mib, discover_ms)
            d = subprocess.Popen([self.a.floe, "daemon", "--config", cfg], stdout=subprocess.DEVNULL)
            self.procs.append(d)
            for _ in range(100):
                if os.path.exists(f"/tmp/{TAG}.sock"):
                    break
                time.sleep(0.05)
            return d
        os.makedirs(f"{V1}/{TAG}", exist_ok=True)
        open(f"{V1}/{TAG}/memory.limit_in_bytes", "w").write(str(self.a.budget << 20))
        avail = next(int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemAvailable:"))
        # earlyoom reads the machine's MemAvailable: its floor is set where the
        # budget's free memory reaches the same level floe kills at.
        floor_kib = avail - (self.a.budget - killer_mib) * 1024
        swap = next(int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("SwapTotal:"))
        # Without swap earlyoom refuses a swap floor (free swap counts as below it).
        args = ["-S", f"{swap},{swap}"] if swap else []
        d = subprocess.Popen(["earlyoom", "-M", f"{floor_kib},{floor_kib}", *args, "-r", "0"], stdout=subprocess.DEVNULL)
        self.procs.append(d)
        time.sleep(0.5)
        return d

    def place(self, pids):
        """For earlyoom: the apps go into the budget's group (floe adopts its own)."""
        for pid in pids:
            open(f"{V1}/{TAG}/cgroup.procs", "w").write(str(pid))

    def run_once(self, tool):
        a = self.a
        killer_mib = 144  # floe's default lowest cached level (AOSP's adj 900)
        stamp = f"/tmp/{TAG}.stamp"
        self.files.append(stamp)
        if os.path.exists(stamp):
            os.unlink(stamp)
        d = self.start_killer(tool, killer_mib)
        fg = self.app("fg", a.fg_mib)
        cached = [self.app(f"c{i}", a.cached_mib) for i in (1, 2, 3)]
        time.sleep(1.5)
        if tool == "floe":
            subprocess.run([a.floe, "ctl", "--socket", f"/tmp/{TAG}.sock", "fg", "fg"], stdout=subprocess.DEVNULL)
        else:
            self.place([p.pid for p in [fg] + cached])
        time.sleep(1.0)
        group = f"{V1}/{TAG}"
        oom0 = oom_kills(group)
        used = sum([a.fg_mib, 3 * a.cached_mib]) + 4 * 12
        stamp_at = max(4, a.budget - killer_mib - used)
        burst = self.app("burst", 0, a.rate, stamp_at, stamp)
        if tool != "floe":
            self.place([burst.pid])
        apps = {"fg": fg, "c1": cached[0], "c2": cached[1], "c3": cached[2], "burst": burst}
        fds = {os.pidfd_open(p.pid): n for n, p in apps.items()}
        poll = select.poll()
        for fd in fds:
            poll.register(fd, select.POLLIN)
        first, t_dead = None, None
        deadline = time.monotonic() + max(10.0, 3 * a.budget / a.rate)
        while first is None and time.monotonic() < deadline:
            for fd, _ in poll.poll(50):
                first, t_dead = fds[fd], time.monotonic()
                break
        time.sleep(0.5)
        dead = [n for n, p in apps.items() if p.poll() is not None]
        t_cross = float(open(stamp).read()) if os.path.exists(stamp) else None
        oom = oom_kills(group) - oom0
        for fd in fds:
            os.close(fd)
        self.cleanup()
        time.sleep(0.5)
        latency = (t_dead - t_cross) * 1000 if (t_dead and t_cross) else None
        return {"first": first, "dead": dead, "latency_ms": latency, "kernel_oom": oom, "fg_killed": "fg" in dead}

    def idle(self, tool):
        # Idle: floe looks for new processes at its default pace (1 s).
        d = self.start_killer(tool, 144, 1000)
        apps = [self.app(n, self.a.cached_mib // 4) for n in ["fg", "c1", "c2", "c3"]]
        if tool != "floe":
            self.place([p.pid for p in apps])
        time.sleep(2)
        pids = [d.pid]
        if tool == "floe":
            out = subprocess.run(["pgrep", "-f", "--", f"supervise {d.pid}"], capture_output=True, text=True).stdout.split()
            pids += [int(p) for p in out]
        t0 = sum(ticks(p) for p in pids)
        peak = 0
        end = time.monotonic() + self.a.idle_s
        while time.monotonic() < end:
            peak = max(peak, sum(rss_kib(p) for p in pids))
            time.sleep(0.5)
        cpu = (sum(ticks(p) for p in pids) - t0) / os.sysconf("SC_CLK_TCK")
        self.cleanup()
        time.sleep(0.5)
        return {"cpu_pct": 100 * cpu / self.a.idle_s, "rss_kib": peak, "processes": len(pids)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rate", type=float, default=400.0, help="aggressor MiB/s")
    ap.add_argument("--budget", type=int, default=1536)
    ap.add_argument("--fg-mib", type=int, default=400)
    ap.add_argument("--cached-mib", type=int, default=150)
    ap.add_argument("--floe", default="target/release/floe")
    ap.add_argument("--policy", default="ice")
    ap.add_argument("--idle-s", type=int, default=20)
    ap.add_argument("--tools", default="floe,earlyoom")
    a = ap.parse_args()
    b = Bench(a)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        print(f"budget {a.budget} MiB, fg {a.fg_mib} MiB, 3 cached x {a.cached_mib} MiB, aggressor {a.rate:g} MiB/s, {a.runs} runs")
        for tool in a.tools.split(","):
            rs = [b.run_once(tool) for _ in range(a.runs)]
            lat = [r["latency_ms"] for r in rs if r["latency_ms"] is not None]
            med = f"{statistics.median(lat):.0f}" if lat else "-"
            mx = f"{max(lat):.0f}" if lat else "-"
            print(
                f"{tool:9} kill latency median {med} ms, max {mx} ms; kernel OOM kills {sum(r['kernel_oom'] for r in rs)}; "
                f"foreground killed {sum(r['fg_killed'] for r in rs)} of {len(rs)}; first victims {[r['first'] for r in rs]}"
            )
            i = b.idle(tool)
            print(f"{tool:9} idle: CPU {i['cpu_pct']:.3f} %, RSS {i['rss_kib'] / 1024:.1f} MiB ({i['processes']} process(es))")
    finally:
        b.cleanup()


if __name__ == "__main__":
    main()
