//! Processes as the rules see them: /proc scanning for new processes, rule matching,
//! and the guard every action passes.
use super::*;
use crate::read;
use std::path::Path;

/// What one process looks like to the rules.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProcInfo {
    pub pid: i32,
    pub exe: String,
    pub cmdline: String,
    pub uid: u32,
    pub comm: String,
}

impl AppRule {
    pub fn matches(&self, p: &ProcInfo) -> bool {
        self.exe.as_ref().is_none_or(|e| *e == p.exe)
            && self.cmdline.as_ref().is_none_or(|c| p.cmdline.contains(c.as_str()))
            && self.uid.is_none_or(|u| u == p.uid)
    }
}

fn proc_info(pid: i32) -> Option<ProcInfo> {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?.display().to_string();
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let cmdline = String::from_utf8_lossy(&cmdline).split('\0').filter(|s| !s.is_empty()).collect::<Vec<_>>().join(" ");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |k: &str| status.lines().find(|l| l.starts_with(k)).and_then(|l| l.split_whitespace().nth(1)).unwrap_or("").to_string();
    Some(ProcInfo { pid, exe, cmdline, uid: field("Uid:").parse().unwrap_or(u32::MAX), comm: field("Name:") })
}

/// Every user process (kernel threads have no exe and are never listed).
pub fn processes() -> Vec<ProcInfo> {
    ProcScanner::default().scan()
}

/// Finds user processes without rereading what cannot have changed: a process is read
/// when first seen and once more at the next scan (it may have exec'd in between, as a
/// launcher does), then kept; and /proc is not listed at all while the kernel's last
/// created pid (/proc/loadavg) has not moved for two scans, since then no process is new.
#[derive(Default)]
pub struct ProcScanner {
    /// Known processes and how many scans have seen them.
    known: std::collections::BTreeMap<i32, (Option<ProcInfo>, u8)>,
    last_pid: Option<String>,
    quiet_scans: u8,
}

impl ProcScanner {
    pub fn scan(&mut self) -> Vec<ProcInfo> {
        let last_pid = read("/proc/loadavg").ok().and_then(|l| l.split_whitespace().nth(4).map(str::to_string));
        if last_pid.is_some() && last_pid == self.last_pid {
            self.quiet_scans = self.quiet_scans.saturating_add(1);
        } else {
            self.quiet_scans = 0;
        }
        self.last_pid = last_pid;
        if self.quiet_scans < 2 {
            let Ok(dir) = std::fs::read_dir("/proc") else { return vec![] };
            let pids: std::collections::BTreeSet<i32> = dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok()).collect();
            self.known.retain(|pid, _| pids.contains(pid));
            for pid in pids {
                let e = self.known.entry(pid).or_insert((None, 0));
                if e.1 < 2 {
                    // Caught inside execve (the new image's arguments not yet set up:
                    // empty cmdline) or unreadable: not a read that counts.
                    let info = proc_info(pid);
                    if info.as_ref().is_some_and(|p| !p.cmdline.is_empty()) {
                        e.1 += 1;
                    }
                    e.0 = info;
                }
            }
        } else {
            // Nothing new; processes that exited drop out when their files are gone.
            self.known.retain(|pid, _| Path::new(&format!("/proc/{pid}")).exists());
        }
        self.known.values().filter_map(|(p, _)| p.clone()).collect()
    }
}

/// The one gate every action passes: what may never be touched.
pub fn guard(pid: i32, comm: &str, protected: &[String], own_pid: i32, supervisor: i32) -> std::result::Result<(), String> {
    if pid <= 1 {
        return Err(format!("pid {pid} is init or invalid"));
    }
    if pid == own_pid || pid == supervisor {
        return Err(format!("pid {pid} is floe itself"));
    }
    if protected.iter().any(|p| p == comm) {
        return Err(format!("pid {pid} ({comm}) is protected by the config"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use super::*;

    #[test]
    fn the_scanner_finds_new_processes_and_forgets_dead_ones() {
        let mut sc = ProcScanner::default();
        let before = sc.scan();
        assert!(before.iter().any(|p| p.pid == std::process::id() as i32), "sees this test process");
        // sleep sums its arguments: the tag is a second, tiny duration, so the child
        // lives 30 s (a non-numeric tag made it exit at once, and a scan then saw a zombie).
        let tag = format!("0.000{}", std::process::id());
        let mut child = std::process::Command::new("sleep").args(["30", &tag]).spawn().unwrap();
        let found = |v: &[ProcInfo]| v.iter().any(|p| p.pid == child.id() as i32 && p.cmdline.ends_with(&tag));
        // Read when first seen (perhaps before or inside its exec) and again at the next
        // scan; a read inside execve sees an empty cmdline and is taken again later, so
        // back-to-back scans find it once its exec is done.
        let seen = (0..200).any(|_| {
            let hit = found(&sc.scan());
            if !hit {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            hit
        });
        assert!(seen, "a process started after the first scan is found: {:?}", sc.known.get(&(child.id() as i32)));
        child.kill().unwrap();
        child.wait().unwrap();
        // Quiet scans skip listing /proc but still drop processes that are gone.
        for _ in 0..3 {
            let v = sc.scan();
            assert!(!v.iter().any(|p| p.pid == child.id() as i32));
        }
        assert!(Config::parse("f.toml", "sample_ms = 200\nidle_sample_ms = 100\n").unwrap_err().to_string().contains("idle_sample_ms"));
    }

    #[test]
    fn rules_match_on_every_given_criterion() {
        let p =
            ProcInfo { pid: 10, exe: "/usr/bin/python3".into(), cmdline: "python3 app.py --x".into(), uid: 1000, comm: "python3".into() };
        let r = |exe: Option<&str>, cmd: Option<&str>, uid: Option<u32>| AppRule {
            name: "a".into(),
            exe: exe.map(Into::into),
            cmdline: cmd.map(Into::into),
            uid,
            perceptible: false,
            saves_context: false,
            state_marker: None,
            priority: PriorityClass::Medium,
        };
        assert!(r(Some("/usr/bin/python3"), Some("app.py"), Some(1000)).matches(&p));
        assert!(!r(Some("/usr/bin/python3"), Some("other.py"), None).matches(&p));
        assert!(!r(None, None, Some(0)).matches(&p));
    }

    #[test]
    fn the_guard_protects_init_floe_and_configured_processes() {
        let prot = vec!["sshd".to_string()];
        assert!(guard(1, "init", &prot, 50, 51).is_err());
        assert!(guard(50, "floe", &prot, 50, 51).is_err());
        assert!(guard(51, "floe", &prot, 50, 51).is_err());
        assert!(guard(77, "sshd", &prot, 50, 51).is_err());
        assert!(guard(77, "game", &prot, 50, 51).is_ok());
    }
}
