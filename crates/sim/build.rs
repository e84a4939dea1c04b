//! Embeds every TOML file under the workspace's data/ directory into the binary.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(p);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let data = manifest.join("../../data").canonicalize().expect("data/ directory beside crates/");
    println!("cargo:rerun-if-changed={}", data.display());
    let mut files = Vec::new();
    collect(&data, &mut files);
    files.sort();
    let mut src =
        String::from("/// (path under data/, contents) of every embedded data file.\npub static EMBEDDED: &[(&str, &str)] = &[\n");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let rel = f.strip_prefix(&data).unwrap().to_string_lossy().replace('\\', "/");
        writeln!(src, "    ({rel:?}, include_str!({:?})),", f.display().to_string()).unwrap();
    }
    src.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("embedded.rs");
    std::fs::write(out, src).unwrap();
}
