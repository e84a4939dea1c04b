//! `floe replay` on trace files: the JSON it prints and its errors on malformed traces.

use std::process::Command;

fn floe(args: &[&str]) -> std::process::Output {
    let _shared = crate::shared();
    Command::new(env!("CARGO_BIN_EXE_floe")).args(args).output().expect("run floe")
}

/// Writes `bytes` to `name` in `dir`, a directory the test owns and removes.
fn temp_file(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    path.display().to_string()
}

/// oracleGeneral records: u32 time, u64 id, u32 size, i64 next access (-1: never).
fn oracle_general(ids: &[u64]) -> Vec<u8> {
    let mut out = Vec::new();
    for (t, &id) in ids.iter().enumerate() {
        out.extend_from_slice(&(t as u32).to_le_bytes());
        out.extend_from_slice(&id.to_le_bytes());
        out.extend_from_slice(&4096u32.to_le_bytes());
        out.extend_from_slice(&(-1i64).to_le_bytes());
    }
    out
}

/// Plain LRU with two pages on 1 2 1 3 1 2: misses on the first 1, 2 and 3 and on the
/// 2 that 3 pushed out (a refault); the JSON says so with the trace's shape.
#[test]
fn replay_json_counts_an_lru_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let path = temp_file(&dir, "hand.bin", &oracle_general(&[1, 2, 1, 3, 1, 2]));
    let out = floe(&["replay", &path, "--cache-pages", "2", "--policy", "lru", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["format"], "oracleGeneral");
    assert_eq!(v["policy"], "lru");
    assert_eq!((v["requests"].as_u64(), v["objects"].as_u64()), (Some(6), Some(3)));
    assert_eq!((v["misses"].as_u64(), v["refaults"].as_u64(), v["evictions"].as_u64()), (Some(4), Some(1), Some(2)));
    assert!((v["miss_ratio"].as_f64().unwrap() - 4.0 / 6.0).abs() < 1e-12);
    assert!(v["requests_per_s"].as_f64().unwrap() > 0.0);
    // The same requests as CSV, under the two-list model, in text.
    let csv = temp_file(&dir, "hand.csv", b"time,page\n0,1\n1,2\n2,1\n3,3\n4,1\n5,2\n");
    let out = floe(&["replay", &csv, "--cache-pages", "2"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        text.contains("(csv, 6 requests, 3 objects)") && text.contains("policy       linux, cache 2 pages, reclaim batch 32"),
        "{text}"
    );
    assert!(text.contains("miss ratio") && text.contains("requests/s"), "{text}");
}

/// A malformed trace is an error (exit status 2) naming the file and the byte offset
/// or the line; an unknown policy is a usage error.
#[test]
fn replay_errors_name_file_and_place() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = oracle_general(&[1, 2]);
    bytes.extend_from_slice(&[7; 5]);
    let path = temp_file(&dir, "cut.bin", &bytes);
    let out = floe(&["replay", &path, "--cache-pages", "2"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cut.bin: byte offset 48: truncated record: 5 bytes left"), "{err}");

    let csv = temp_file(&dir, "bad.csv", b"0,1\n1,-2\n");
    let out = floe(&["replay", &csv, "--cache-pages", "2"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("bad.csv:2: expected `time,page id`"), "{err}");

    let empty = temp_file(&dir, "empty.csv", b"time,page\n");
    let out = floe(&["replay", &empty, "--cache-pages", "2"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("empty.csv: no requests (an empty trace)"), "{err}");
    assert!(out.stdout.is_empty(), "no miss ratio for no requests");

    // A file that is not there: its path, then the system's reason, once.
    let gone = dir.path().join("gone.bin");
    let out = floe(&["replay", gone.to_str().unwrap(), "--cache-pages", "2"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("gone.bin: {}", std::fs::File::open(&gone).unwrap_err())), "{err}");
    assert_eq!(err.matches("(os error 2)").count(), 1, "the reason once: {err}");

    let out = floe(&["replay", &csv, "--cache-pages", "2", "--policy", "fifo"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("fifo"));
}
