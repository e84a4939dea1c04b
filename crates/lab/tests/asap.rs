//! ASAP §6.2-6.3 in the simulator: under memory pressure with lmkd off, prepaging cuts
//! the mean switch time against demand paging on every sequence, anon-only and
//! file-only each help on their own, and the estimators' precision and recall are
//! reported.

use floe_lab::{asap::pressure_balloon_mib, no_progress, run_all};

#[test]
fn prepaging_cuts_switch_time_on_every_sequence() {
    // The experiment's own quick runs (6 iterations of each sequence) under pressure on
    // the Pixel 4.
    let specs: Vec<_> = floe_lab::asap::specs(true).unwrap().into_iter().filter(|s| s.device == "pixel4").collect();
    let policies = ["demand-paging", "asap-anon", "asap-file", "asap"];
    assert!(specs.iter().all(|s| s.balloon_mib == Some(pressure_balloon_mib("pixel4").unwrap())));
    assert_eq!(specs.iter().map(|s| s.policy.as_str()).take(4).collect::<Vec<_>>(), policies);
    let runs = run_all(&specs, &no_progress).unwrap();
    for chunk in runs.chunks(policies.len()) {
        let base = &chunk[0].metrics;
        assert!(base.prepage_precision.is_none() && base.cpu_ms_prepage == 0.0, "demand paging prepages nothing");
        for r in &chunk[1..] {
            let m = &r.metrics;
            let (p, rc) = (m.prepage_precision.unwrap(), m.prepage_recall.unwrap());
            assert!(p > 0.0 && p <= 1.0 && rc > 0.0 && rc <= 1.0, "{}: precision {p} recall {rc}", r.policy);
            assert!(
                m.switch_ms_mean < base.switch_ms_mean,
                "{} on {}: {} ms vs demand paging {} ms",
                r.policy,
                r.workload,
                m.switch_ms_mean,
                base.switch_ms_mean
            );
        }
        let both = chunk[3].metrics.switch_ms_mean;
        assert!(both < chunk[1].metrics.switch_ms_mean && both < chunk[2].metrics.switch_ms_mean, "both estimators beat either alone");
        assert!(chunk[1].metrics.cpu_ms_prepage > 0.0 && chunk[2].metrics.cpu_ms_prepage >= 0.0);
    }
}
