//! `floe sweep`: a sweep file's runs, or a shard of them, into JSON Lines; `floe sweep
//! merge`: shards joined into one JSONL or CSV file (floe_lab::sweep does the work).

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use floe_lab::sweep::{Shard, Sweep};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct SweepArgs {
    #[command(subcommand)]
    merge: Option<SweepCmd>,
    /// The sweep file (TOML; examples/sweep.toml shows its lists).
    #[arg(required = true)]
    spec: Option<PathBuf>,
    /// Run only the I-th of N slices of the runs (I from 1 to N: every N-th run,
    /// starting at the I-th), as a Slurm array, a Kubernetes indexed job or GNU parallel
    /// hands them out.
    #[arg(long, value_name = "I/N")]
    shard: Option<Shard>,
    /// The JSON Lines file the runs go to, one line per run as it finishes; the runs it
    /// holds already are not run again. Default: SPEC's name with `.jsonl`
    /// (`-I-of-N.jsonl` for a shard) in the current directory.
    #[arg(long, short, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Runs at once (default: one per core).
    #[arg(long, short, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    jobs: Option<u32>,
    /// Print the runs (of the shard) in order, one key a line, and run nothing.
    #[arg(long)]
    list: bool,
    /// No progress bar and no summary.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Subcommand)]
enum SweepCmd {
    /// Join shards' outputs: check that every run of the sweep is there once, and write
    /// them in the sweep's order as JSON Lines, or as CSV (one row per run: key, flags,
    /// metrics) with --csv or an output name ending in .csv.
    #[command(after_help = "Example:
  floe sweep merge --spec sweep.toml sweep-*-of-4.jsonl -o sweep.csv")]
    Merge {
        /// The sweep file the shards ran.
        #[arg(long, value_name = "SPEC")]
        spec: PathBuf,
        /// The shards' outputs.
        #[arg(required = true, value_name = "SHARD")]
        shards: Vec<PathBuf>,
        /// Where to write (default: standard output).
        #[arg(long, short, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Write CSV instead of JSON Lines.
        #[arg(long)]
        csv: bool,
    },
}

pub fn sweep(a: SweepArgs) -> Result<()> {
    if let Some(SweepCmd::Merge { spec, shards, out, csv }) = a.merge {
        return merge(&spec, &shards, out.as_deref(), csv);
    }
    let spec = a.spec.expect("clap requires SPEC");
    let sweep = Sweep::load(&spec)?;
    let shard = a.shard.unwrap_or(Shard::ALL);
    if a.list {
        let mut o = std::io::stdout().lock();
        for k in sweep.shard(shard) {
            writeln!(o, "{k}").context("cannot write to standard output")?;
        }
        return Ok(());
    }
    let out = a.out.unwrap_or_else(|| {
        let stem = spec.file_stem().map_or("sweep".into(), |s| s.to_string_lossy().into_owned());
        match shard {
            Shard::ALL => PathBuf::from(format!("{stem}.jsonl")),
            s => PathBuf::from(format!("{stem}-{}-of-{}.jsonl", s.index, s.count)),
        }
    });
    // indicatif draws nothing when stderr is not a terminal, so piped and CI output
    // stay clean.
    let bar = if a.quiet { indicatif::ProgressBar::hidden() } else { indicatif::ProgressBar::new(0) };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} runs, {elapsed} (~{eta} left)")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_prefix(match shard {
        Shard::ALL => format!("sweep {}", spec.display()),
        s => format!("sweep {} shard {s}", spec.display()),
    });
    // The first step says how many were done already; each run that ends, one more.
    let progress = |step: floe_lab::Step| match step {
        floe_lab::Step::Begin { runs, done } => {
            bar.set_length(runs as u64);
            bar.set_position(done as u64);
        }
        floe_lab::Step::Done { runs, .. } => bar.inc(runs as u64),
        floe_lab::Step::Cost { .. } => {}
    };
    let r = floe_lab::sweep::run_shard(&sweep, shard, &out, a.jobs.map(|j| j as usize), &progress);
    bar.finish_and_clear();
    let r = r?;
    if !a.quiet {
        let was = if r.skipped > 0 { format!(" ({} of them there already)", r.skipped) } else { String::new() };
        eprintln!("floe: {}: {} runs in {}{was}", shard_name(&spec, shard), r.runs, out.display());
    }
    Ok(())
}

fn shard_name(spec: &Path, shard: Shard) -> String {
    match shard {
        Shard::ALL => spec.display().to_string(),
        s => format!("shard {s} of {}", spec.display()),
    }
}

fn merge(spec: &Path, shards: &[PathBuf], out: Option<&Path>, csv: bool) -> Result<()> {
    let sweep = Sweep::load(spec)?;
    let lines = floe_lab::sweep::merge(&sweep, shards)?;
    let csv = csv || out.is_some_and(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv")));
    let text = if csv {
        floe_lab::sweep::csv(&lines)?
    } else {
        let mut t = lines.join("\n");
        if !t.is_empty() {
            t.push('\n');
        }
        t
    };
    match out {
        Some(p) => std::fs::write(p, text).with_context(|| format!("cannot write {}", p.display()))?,
        None => {
            let mut o = std::io::stdout().lock();
            o.write_all(text.as_bytes()).and_then(|()| o.flush()).context("cannot write to standard output")?;
        }
    }
    Ok(())
}
