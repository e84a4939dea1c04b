//! Quick runs' verdicts are indicative, full runs' are the verdicts: a quick run never
//! calls a finding a match that the full run, over several seeds, calls a no (or
//! vacuous). Checked on SmartLMK's evaluation, whose quick and full runs differ only in
//! the seed replicates (each draws its own launch order) and which runs in seconds.

use floe_core::Verdict;
use floe_lab::{no_progress, run_experiment};

#[test]
fn quick_never_matches_where_full_says_no() {
    let quick = run_experiment("smartlmk", true, 1, &no_progress).unwrap();
    let full = run_experiment("smartlmk", false, 5, &no_progress).unwrap();
    assert_eq!(quick.findings.len(), full.findings.len());
    assert!(quick.findings.iter().all(|f| f.interval.is_none() && f.seeds.is_none()), "one seed: no interval");
    for (q, f) in quick.findings.iter().zip(&full.findings) {
        assert_eq!(q.claim, f.claim);
        assert!(f.seeds == Some(5) && (f.floe.is_none() || f.interval.is_some()), "{f:?}");
        if q.verdict == Verdict::Matches {
            assert!(f.verdict.holds(), "quick matches, full says {:?}: {}", f.verdict, f.claim);
        }
        // A finding with the paper's figure carries both effects on one scale.
        if let (Some(p), Some(x)) = (q.paper, q.floe) {
            assert!(p.is_finite() && x.is_finite(), "{q:?}");
        }
    }
    assert!(
        quick.findings.iter().any(|f| f.verdict == Verdict::Matches),
        "a quick SmartLMK finding matches the paper's (the apps cached, 5.94 against 6.70)"
    );
}
