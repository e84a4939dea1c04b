//! `floe._floe`: the Python package's bindings to floe-lab and floe-sim. Runs release
//! the interpreter's lock while they go; values cross as JSON text, which the package's
//! Python side (floe/__init__.py) turns into dicts and data frames.

use floe_lab::sweep::{RunKey, Sweep};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::path::Path;

fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The runs of the sweep file at `path`, in the sweep's order: each key as JSON, and
/// the directory the sweep's relative file names are taken from.
#[pyfunction]
fn expand_file(py: Python<'_>, path: String) -> PyResult<(Vec<String>, String)> {
    let sweep = py.detach(|| Sweep::load(Path::new(&path))).map_err(value_error)?;
    Ok((sweep.runs.iter().map(RunKey::id).collect(), sweep.base.display().to_string()))
}

/// The runs of a sweep given as JSON (a sweep file's lists), relative file names taken
/// from `base`.
#[pyfunction]
fn expand_json(py: Python<'_>, spec: String, base: String) -> PyResult<(Vec<String>, String)> {
    let sweep = py.detach(|| Sweep::from_json(&spec, Path::new(&base))).map_err(value_error)?;
    Ok((sweep.runs.iter().map(RunKey::id).collect(), base))
}

fn key(text: &str) -> PyResult<RunKey> {
    serde_json::from_str(text).map_err(|e| value_error(format!("not a run key: {e}")))
}

/// Runs one key (JSON) into its line of a sweep's output (JSON, no newline).
#[pyfunction]
fn run_line(py: Python<'_>, key_json: String, base: String) -> PyResult<String> {
    let k = key(&key_json)?;
    py.detach(|| floe_lab::sweep::run_line(&k, Path::new(&base))).map_err(value_error)
}

/// Runs the keys (JSON) on this machine's cores, into their lines in the keys' order.
#[pyfunction]
fn run_lines(py: Python<'_>, keys: Vec<String>, base: String) -> PyResult<Vec<String>> {
    use rayon::prelude::*;
    let keys: Vec<RunKey> = keys.iter().map(|k| key(k)).collect::<PyResult<_>>()?;
    py.detach(|| keys.par_iter().map(|k| floe_lab::sweep::run_line(k, Path::new(&base))).collect::<Result<Vec<_>, _>>())
        .map_err(value_error)
}

/// Runs one key (JSON) into its run record as `floe sim --json` prints it.
#[pyfunction]
fn run_record(py: Python<'_>, key_json: String, base: String) -> PyResult<String> {
    let k = key(&key_json)?;
    let rec = py.detach(|| floe_lab::sweep::run_key(&k, Path::new(&base))).map_err(value_error)?;
    serde_json::to_string(&rec).map_err(value_error)
}

/// Checks a one-run sweep (JSON) and gives its key (JSON): the checks of a sweep file.
#[pyfunction]
fn check_run(py: Python<'_>, spec: String, base: String) -> PyResult<String> {
    let sweep = py.detach(|| Sweep::from_json(&spec, Path::new(&base))).map_err(value_error)?;
    match sweep.runs.as_slice() {
        [one] => Ok(one.id()),
        runs => Err(value_error(format!("{} runs where one was meant", runs.len()))),
    }
}

/// Runs experiment `name` (as `floe experiment NAME --json` does) into its record (JSON).
#[pyfunction]
fn experiment(py: Python<'_>, name: String, quick: bool, seeds: u32) -> PyResult<String> {
    let report = py.detach(|| floe_lab::run_experiment(&name, quick, seeds, &floe_lab::no_progress)).map_err(value_error)?;
    serde_json::to_string(&report.record()).map_err(value_error)
}

/// Runs' lines as the CSV `floe sweep merge --csv` writes.
#[pyfunction]
fn lines_csv(lines: Vec<String>) -> PyResult<String> {
    floe_lab::sweep::csv(&lines).map_err(value_error)
}

/// The experiments floe knows: (name, what it re-runs).
#[pyfunction]
fn experiments() -> Vec<(String, String)> {
    floe_lab::EXPERIMENTS.iter().map(|(n, a)| (n.to_string(), a.to_string())).collect()
}

/// The policies floe knows: (name, what it is).
#[pyfunction]
fn policies() -> Vec<(String, String)> {
    floe_policies::REGISTRY.iter().map(|e| (e.name.to_string(), e.about.to_string())).collect()
}

#[pymodule]
fn _floe(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(expand_file, m)?)?;
    m.add_function(wrap_pyfunction!(expand_json, m)?)?;
    m.add_function(wrap_pyfunction!(run_line, m)?)?;
    m.add_function(wrap_pyfunction!(run_lines, m)?)?;
    m.add_function(wrap_pyfunction!(run_record, m)?)?;
    m.add_function(wrap_pyfunction!(check_run, m)?)?;
    m.add_function(wrap_pyfunction!(experiment, m)?)?;
    m.add_function(wrap_pyfunction!(lines_csv, m)?)?;
    m.add_function(wrap_pyfunction!(experiments, m)?)?;
    m.add_function(wrap_pyfunction!(policies, m)?)?;
    Ok(())
}
