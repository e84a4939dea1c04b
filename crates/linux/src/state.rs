//! What policies learn, kept across restarts and crashes: one SQLite database in WAL
//! mode, one row per policy holding the text its [`floe_core::Policy::export_state`]
//! produced. Every save is one transaction, so a crash leaves the previous save or the
//! new one, never half of either.

use crate::{Error, Result};
use floe_core::{AppId, AppInfo, MemInfo, Nanos, SystemView};
use rusqlite::{params, Connection, OptionalExtension};
use std::path::{Path, PathBuf};

/// The key under which the daemon keeps a policy's prepaging tables (ASAP's anonymous
/// candidate and target tables) beside the policy's own state.
pub fn prepage_key(policy: &str) -> String {
    format!("{policy}{PREPAGE_SUFFIX}")
}

const PREPAGE_SUFFIX: &str = "/prepage-tables";

/// The policy a state database key belongs to, and whether the key holds its
/// prepaging tables ([`prepage_key`]) rather than its own state.
pub fn key_policy(key: &str) -> (&str, bool) {
    match key.strip_suffix(PREPAGE_SUFFIX) {
        Some(p) => (p, true),
        None => (key, false),
    }
}

/// A system with no apps, for reading a saved state without a running daemon.
struct NoApps;

impl SystemView for NoApps {
    fn now(&self) -> Nanos {
        Nanos::ZERO
    }
    fn mem(&self) -> MemInfo {
        MemInfo::default()
    }
    fn foreground(&self) -> Option<AppId> {
        None
    }
    fn apps(&self) -> Vec<AppId> {
        Vec::new()
    }
    fn app(&self, _: AppId) -> Option<AppInfo> {
        None
    }
    fn cpu_busy_iowait(&self) -> f64 {
        0.0
    }
}

/// Checks that `text` is a state the daemon would restore under `key` (a policy's
/// name, or [`prepage_key`] of one): the policy exists and keeps state of that kind,
/// and the text reads as it. What the daemon would otherwise log and drop at its
/// next start is refused here instead.
pub fn check(key: &str, text: &str) -> std::result::Result<(), String> {
    let (policy, tables) = key_policy(key);
    let mut p = floe_policies::make_spec(policy).map_err(|_| format!("unknown policy `{policy}` (see `floe list policies`)"))?;
    if tables {
        let Some(setup) = p.setup().prepage.filter(|s| s.anon || s.file) else {
            return Err(format!("policy `{policy}` keeps no prepaging tables"));
        };
        if setup.anon {
            crate::prepage::AnonPrepager::new().import(text)?;
        }
        if setup.file {
            crate::prepage_file::FilePrepager::new().import(text)?;
        }
        return Ok(());
    }
    if p.export_state(&NoApps).is_none() {
        return Err(format!("policy `{policy}` keeps no state"));
    }
    p.import_state(text, &NoApps)
}

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS policy_state (
    policy TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    saved_at_unix INTEGER NOT NULL
);";

/// The state database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

fn db_err(path: &Path) -> impl FnOnce(rusqlite::Error) -> Error + '_ {
    move |e| Error::Unsupported(format!("{}: state database: {e}", path.display()))
}

impl Store {
    /// Opens (creating if needed) the database at `path` and its table. The file is
    /// the owner's alone (0600, also made so if it was not; SQLite gives its WAL and
    /// shared-memory files the same mode) and never opened through a symbolic link; a
    /// directory made for it is 0700.
    pub fn open(path: &Path) -> Result<Store> {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(crate::io_err(dir))?;
        }
        let f = crate::open_regular(path, std::fs::OpenOptions::new().read(true).write(true).create(true), 0o600)?;
        f.set_permissions(std::fs::Permissions::from_mode(0o600)).map_err(crate::io_err(path))?;
        drop(f);
        let flags = rusqlite::OpenFlags::default() | rusqlite::OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let conn = Connection::open_with_flags(path, flags).map_err(db_err(path))?;
        Store::init(conn, path)
    }

    /// A database in memory, nothing on disk (a dry run with no saved state).
    pub fn in_memory() -> Result<Store> {
        let conn = Connection::open_in_memory().map_err(db_err(Path::new(":memory:")))?;
        let path = Path::new(":memory:");
        conn.execute_batch(SCHEMA).map_err(db_err(path))?;
        Ok(Store { conn, path: path.to_path_buf() })
    }

    fn init(conn: Connection, path: &Path) -> Result<Store> {
        let mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0)).map_err(db_err(path))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(Error::Unsupported(format!("{}: state database: journal mode is {mode}, not wal", path.display())));
        }
        conn.execute_batch(&format!("PRAGMA synchronous=NORMAL;{SCHEMA}")).map_err(db_err(path))?;
        Ok(Store { conn, path: path.to_path_buf() })
    }

    /// Replaces the saved state of `policy` in one transaction.
    pub fn save(&mut self, policy: &str, state: &str) -> Result<()> {
        self.save_all([(policy, state)])
    }

    /// Replaces the saved state of each (key, text) of `items`, all in one transaction.
    pub fn save_all<'a>(&mut self, items: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<()> {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(db_err(&path))?;
        for (policy, state) in items {
            tx.execute(
                "INSERT INTO policy_state (policy, state, saved_at_unix) VALUES (?1, ?2, ?3)
                 ON CONFLICT(policy) DO UPDATE SET state = excluded.state, saved_at_unix = excluded.saved_at_unix",
                params![policy, state, now],
            )
            .map_err(db_err(&path))?;
        }
        tx.commit().map_err(db_err(&path))
    }

    /// The last saved state of `policy`, if any.
    pub fn load(&self, policy: &str) -> Result<Option<String>> {
        self.conn
            .query_row("SELECT state FROM policy_state WHERE policy = ?1", params![policy], |r| r.get(0))
            .optional()
            .map_err(db_err(&self.path))
    }

    /// Every saved state: (policy, state, saved at, in seconds since the epoch).
    pub fn list(&self) -> Result<Vec<(String, String, i64)>> {
        let mut st =
            self.conn.prepare("SELECT policy, state, saved_at_unix FROM policy_state ORDER BY policy").map_err(db_err(&self.path))?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).map_err(db_err(&self.path))?;
        rows.collect::<std::result::Result<Vec<_>, _>>().map_err(db_err(&self.path))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only what the daemon would restore passes: a known policy that keeps state,
    /// in its own format.
    #[test]
    fn check_accepts_only_states_the_daemon_would_restore() {
        assert!(check("smartlmk", r#"{"launch_seq": 3, "apps": {}}"#).is_ok());
        assert!(check("smartlmk", r#""str""#).unwrap_err().contains("SmartLMK"));
        assert!(check("smartlmk", r#"{"x": 1}"#).is_err());
        assert!(check("lru-cfs", "{}").unwrap_err().contains("keeps no state"));
        assert!(check("nosuch", "{}").unwrap_err().contains("unknown policy"));
        assert!(check(&prepage_key("asap-anon"), r#"{"anon": {}}"#).is_ok());
        assert!(check(&prepage_key("asap-file"), r#"{"file": {}}"#).is_ok());
        assert!(check(&prepage_key("asap"), r#"{"anon": {}, "file": {}}"#).is_ok());
        assert!(check(&prepage_key("asap"), r#"{"anon": {}}"#).unwrap_err().contains("file tables"));
        assert!(check(&prepage_key("asap"), r#"{"x": 1}"#).is_err());
        assert!(check(&prepage_key("ice"), r#"{"anon": {}}"#).unwrap_err().contains("no prepaging tables"));
    }

    #[test]
    fn state_survives_reopening_and_saves_replace() {
        let dir = std::env::temp_dir().join(format!("floe-state-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("sub/state.db");
        {
            let mut s = Store::open(&path).unwrap();
            assert_eq!(s.load("smartlmk").unwrap(), None);
            s.save("smartlmk", "{\"a\":1}").unwrap();
            s.save("smartlmk", "{\"a\":2}").unwrap();
            s.save("selective", "x").unwrap();
        }
        let s = Store::open(&path).unwrap();
        assert_eq!(s.load("smartlmk").unwrap().as_deref(), Some("{\"a\":2}"));
        assert_eq!(s.load("selective").unwrap().as_deref(), Some("x"));
        let all: Vec<(String, String)> = s.list().unwrap().into_iter().map(|(p, st, _)| (p, st)).collect();
        assert_eq!(all, vec![("selective".into(), "x".into()), ("smartlmk".into(), "{\"a\":2}".into())]);
        let mode: String = s.conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
        assert_eq!(mode, "wal");
        drop(s);
        // A file that is not a database is an error naming the file, not a panic.
        std::fs::write(dir.join("bad.db"), vec![b'x'; 4096]).unwrap();
        let e = Store::open(&dir.join("bad.db")).err().unwrap().to_string();
        assert!(e.contains("bad.db"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
