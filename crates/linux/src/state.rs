//! What policies learn, kept across restarts and crashes: one SQLite database in WAL
//! mode, one row per policy holding the text its [`floe_core::Policy::export_state`]
//! produced. Every save is one transaction, so a crash leaves the previous save or the
//! new one, never half of either.

use crate::{Error, Result};
use rusqlite::{params, Connection, OptionalExtension};
use std::path::{Path, PathBuf};

/// The state database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

fn db_err(path: &Path) -> impl FnOnce(rusqlite::Error) -> Error + '_ {
    move |e| Error::Unsupported(format!("{}: state database: {e}", path.display()))
}

impl Store {
    /// Opens (creating if needed) the database at `path` and its table.
    pub fn open(path: &Path) -> Result<Store> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(crate::io_err(dir))?;
        }
        let conn = Connection::open(path).map_err(db_err(path))?;
        let mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0)).map_err(db_err(path))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(Error::Unsupported(format!("{}: state database: journal mode is {mode}, not wal", path.display())));
        }
        conn.execute_batch(
            "PRAGMA synchronous=NORMAL;
             CREATE TABLE IF NOT EXISTS policy_state (
                 policy TEXT PRIMARY KEY,
                 state TEXT NOT NULL,
                 saved_at_unix INTEGER NOT NULL
             );",
        )
        .map_err(db_err(path))?;
        Ok(Store { conn, path: path.to_path_buf() })
    }

    /// Replaces the saved state of `policy` in one transaction.
    pub fn save(&mut self, policy: &str, state: &str) -> Result<()> {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(db_err(&path))?;
        tx.execute(
            "INSERT INTO policy_state (policy, state, saved_at_unix) VALUES (?1, ?2, ?3)
             ON CONFLICT(policy) DO UPDATE SET state = excluded.state, saved_at_unix = excluded.saved_at_unix",
            params![policy, state, now],
        )
        .map_err(db_err(&path))?;
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
