//! ASAP §6.2-6.3 in the simulator: under memory pressure with lmkd off, prepaging cuts
//! the mean switch time against demand paging on every sequence, anon-only and
//! file-only each help, and the estimators' precision and recall are reported.

use floe_lab::{asap::pressure_balloon_mib, run_all, RunSpec};

#[test]
fn prepaging_cuts_switch_time_on_every_sequence() {
    let balloon = pressure_balloon_mib("pixel4").unwrap();
    let policies = ["demand-paging", "asap-anon", "asap-file", "asap"];
    let mut specs = Vec::new();
    for wl in ["asap-seq1", "asap-seq2", "asap-seq3"] {
        for p in policies {
            specs.push(RunSpec {
                device: "pixel4".into(),
                workload: wl.into(),
                policy: p.into(),
                seed: 1,
                bg_apps: None,
                use_s: None,
                balloon_mib: Some(balloon),
                rounds: Some(6),
            });
        }
    }
    let runs = run_all(&specs).unwrap();
    for chunk in runs.chunks(policies.len()) {
        let base = &chunk[0].metrics;
        assert!(base.prepage_precision.is_none() && base.cpu_ms_prepage == 0.0, "demand paging prepages nothing");
        for r in &chunk[1..] {
            let m = &r.metrics;
            assert!(
                m.switch_ms_mean < base.switch_ms_mean,
                "{} on {}: {} ms vs demand paging {} ms",
                r.policy,
                r.workload,
                m.switch_ms_mean,
                base.switch_ms_mean
            );
            let (p, rc) = (m.prepage_precision.unwrap(), m.prepage_recall.unwrap());
            assert!(p > 0.0 && p <= 1.0 && rc > 0.0 && rc <= 1.0, "{}: precision {p} recall {rc}", r.policy);
        }
        let both = chunk[3].metrics.switch_ms_mean;
        assert!(both < chunk[1].metrics.switch_ms_mean && both < chunk[2].metrics.switch_ms_mean, "both estimators beat either alone");
        assert!(chunk[1].metrics.cpu_ms_prepage > 0.0 && chunk[2].metrics.cpu_ms_prepage >= 0.0);
    }
}
