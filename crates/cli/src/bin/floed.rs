//! `floed`: the daemon alone, `floe daemon` without the simulator, the experiments and
//! their libraries. The same options and the same code (`daemon_cmd.rs`); a smaller
//! binary, whose loop touches (and so locks) fewer pages. Its supervisor is `floed`
//! too.

use std::io::Write;

#[path = "../daemon_cmd.rs"]
mod daemon_cmd;

/// floed: the floe daemon alone (`floe daemon`, without the simulator and the experiments)
#[derive(clap::Parser)]
#[command(name = "floed", version, long_about = None, after_help = daemon_cmd::AFTER_HELP)]
struct Cli {
    #[command(flatten)]
    args: daemon_cmd::DaemonArgs,
}

fn main() {
    let cli = match <Cli as clap::Parser>::try_parse() {
        Ok(cli) => cli,
        Err(e) => std::process::exit(if e.print().is_err() { 2 } else { e.exit_code() }),
    };
    let r = daemon_cmd::run(cli.args, &[]).and_then(|()| {
        use anyhow::Context;
        std::io::stdout().flush().context("cannot write to standard output")
    });
    if let Err(e) = r {
        eprintln!("floed: error: {e:#}");
        std::process::exit(2);
    }
}
