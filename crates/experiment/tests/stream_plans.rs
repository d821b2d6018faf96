//! Stream points in plans (`workload = "stream"`): the keys and their checks, a small sweep on
//! the simulator end to end (the same numbers as `tcpnc sim --workload stream`'s code, frames
//! intact, the stream figures written), and bulk plans' results files of the version before.

use std::path::{Path, PathBuf};

use tcpnc_experiment::backend::run_spec;
use tcpnc_experiment::journal::{STREAM_COLUMNS, columns, read_rows};
use tcpnc_experiment::plan::run_seed;
use tcpnc_experiment::plan_stream_plot::{FRAMES_DIR, frames_file};
use tcpnc_experiment::{ExperimentError, Plan, Preset, RunOptions, SimBackend, Workload, run_plan};
use tcpnc_sim::stream_run::run_stream;
use tcpnc_stream::SIM_DURATION_S;

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tcpnc-stream-plan-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn opts(dir: &Path) -> RunOptions {
    RunOptions {
        out_dir: dir.to_path_buf(),
        fresh: false,
        progress: false,
        stop: None,
    }
}

fn plan_error(text: &str) -> String {
    match Plan::parse(text, Path::new("bad.toml")) {
        Err(ExperimentError::Plan { detail, .. }) => detail,
        other => panic!("expected a plan error for {text:?}, got {other:?}"),
    }
}

#[test]
fn stream_keys_parse_and_bad_values_are_refused() {
    let text = "backend = \"sim\"\nrun_seeds = \"consecutive\"\nseed = 5\n[fixed]\n\
                workload = \"stream\"\npreset = \"formula1\"\nstream_mbit = 1.5\nfps = 30.0\n\
                deadline_ms = 400.0\ntrace_seed = 9\n[plot]\ny = \"latency_p99_ms\"\n\
                y_axis = \"log\"\n";
    let plan = Plan::parse(text, Path::new("s.toml")).unwrap();
    let p = &plan.points[0].params;
    assert_eq!(p.workload, Workload::Stream);
    assert_eq!(p.preset, Some(Preset::Formula1));
    let spec = p.stream_spec();
    assert_eq!(
        (spec.stream_mbit, spec.fps, spec.deadline_ms),
        (Some(1.5), Some(30.0), 400.0)
    );
    // The trace: trace_seed's, whatever the run's seed; the default length is tcpnc sim's.
    assert_eq!(
        p.trace(1, SIM_DURATION_S).unwrap(),
        p.trace(2, SIM_DURATION_S).unwrap()
    );
    assert_eq!(
        plan.seed_of(0),
        5,
        "consecutive seeds: repetition 0 is the plan seed"
    );
    assert_eq!(plan.seed_of(3), 8);
    let mixed = Plan::parse("backend = \"sim\"\nseed = 5\n", Path::new("m.toml")).unwrap();
    assert_eq!(mixed.seed_of(1), run_seed(5, 1));
    // Defaults: a stream point records the preset and deadline it ran with, no bytes.
    let plain = Plan::parse(
        "backend = \"sim\"\n[fixed]\nworkload = \"stream\"\n",
        Path::new("d.toml"),
    )
    .unwrap();
    let v = plain.points[0].params.values();
    assert_eq!(
        (v["preset"].as_str(), v["deadline_ms"].as_f64()),
        (Some("target"), Some(1000.0))
    );
    assert!(v["bytes"].is_null() && v["trace_seed"].is_null());

    let e = plan_error("backend = \"sim\"\n[fixed]\npreset = \"lambs\"\n");
    assert!(
        e.contains("preset") && e.contains("workload = \"stream\""),
        "{e}"
    );
    let e = plan_error("backend = \"sim\"\n[fixed]\nworkload = \"video\"\n");
    assert!(e.contains("`workload`"), "{e}");
    let e = plan_error("backend = \"sim\"\n[fixed]\nworkload = \"stream\"\npreset = \"lambz\"\n");
    assert!(e.contains("`preset`"), "{e}");
    let e = plan_error("backend = \"sim\"\n[fixed]\nworkload = \"stream\"\nfps = 0.0\n");
    assert!(e.contains("fps"), "{e}");
    let e = plan_error("backend = \"sim\"\n[fixed]\nworkload = \"stream\"\ndeadline_ms = -1.0\n");
    assert!(e.contains("deadline_ms"), "{e}");
    let e = plan_error("backend = \"sim\"\n[fixed]\nworkload = \"stream\"\nflows = 2\n");
    assert!(e.contains("flows"), "{e}");
    let e = plan_error("backend = \"sim\"\nrun_seeds = \"random\"\n");
    assert!(e.contains("run_seeds"), "{e}");
    let e = plan_error(
        "backend = \"sim\"\n[fixed]\nworkload = \"stream\"\n[plot]\nseries_repetition = 1\n",
    );
    assert!(e.contains("series_repetition"), "{e}");
    // A stream variant beside a bulk one: the stream keys go in the stream variant.
    let both = "backend = \"sim\"\n[[variant]]\nworkload = \"bulk\"\n\
                [[variant]]\nworkload = \"stream\"\npreset = \"lambs\"\n";
    let plan = Plan::parse(both, Path::new("b.toml")).unwrap();
    assert_eq!(plan.points.len(), 2);
    assert!(
        !plan.points[0].label.contains("preset"),
        "{}",
        plan.points[0].label
    );
}

const STREAM_PLAN: &str = r#"
name = "tiny-stream"
title = "tiny stream"
backend = "sim"
repetitions = 2
seed = 3
run_seeds = "consecutive"

[fixed]
workload = "stream"
preset = "target"
stream_mbit = 1.0
duration_s = 3.0
rate_mbit = 10.0
loss = 0.02
queue_packets = 1000
loss_position = "after_queue"
profile = "simulator"
buffer_kib = 1024
cc = "reno"

[sweep]
delay_ms = [10.0, 30.0]

[[variant]]
mode = "plain"

[[variant]]
mode = "nc"
window_policy = "fixed"

[[variant]]
mode = "nc"
window_policy = "vbnc"

[plot]
x = "delay_ms"
y = "latency_p99_ms"
y_axis = "log"
also_y = ["jitter_mean_ms"]
"#;

/// The 12 runs of a 3 s stream: every frame intact, the numbers `tcpnc sim --workload stream`'s
/// code gives for the same settings, and one set of stream figures per delay.
#[test]
fn stream_points_run_on_the_sim_with_their_figures() {
    let dir = temp_dir("sim");
    let plan = Plan::parse(STREAM_PLAN, Path::new("tiny-stream.toml")).unwrap();
    assert_eq!(plan.points.len(), 6);
    let out = run_plan(&plan, &mut SimBackend, &opts(&dir)).unwrap();
    assert_eq!((out.ran, out.skipped), (12, 0));
    let rows = read_rows(&dir.join("runs.csv")).unwrap();
    assert_eq!(rows.len(), 12);
    for r in &rows {
        assert!(r.counted(), "{:?}", r.cells);
        assert_eq!(r.get("workload"), "stream");
        assert_eq!(r.get("bytes"), "", "a stream's bytes are its trace's");
        let frames = r.num("frames");
        assert!(frames > 80.0, "3 s at 30 frames/s");
        assert_eq!(r.num("frames_intact"), frames);
        let (p50, p95, p99) = (
            r.num("latency_p50_ms"),
            r.num("latency_p95_ms"),
            r.num("latency_p99_ms"),
        );
        assert!(10.0 <= p50 && p50 <= p95 && p95 <= p99, "{p50} {p95} {p99}");
        assert!(r.num("stalls") >= 0.0 && r.num("jitter_mean_ms") >= 0.0);
    }
    // The same numbers as tcpnc sim --workload stream with these settings (repetition 0: seed 3).
    let nc = plan
        .points
        .iter()
        .find(|p| {
            p.params.mode == tcpnc_experiment::PathMode::Nc && p.params.path.delay_ms == Some(30.0)
        })
        .unwrap();
    let spec = run_spec(&nc.params, 3);
    let trace = nc.params.trace(3, SIM_DURATION_S).unwrap();
    let deadline = nc.params.stream_spec().deadline().unwrap();
    let cli = run_stream(&spec, &trace, deadline).unwrap();
    let cli = cli.iter().find(|s| s.scheme == "nc-fixed").unwrap();
    let row = rows
        .iter()
        .find(|r| r.get("point") == nc.label && r.get("rep") == "0")
        .unwrap();
    assert_eq!(
        row.get("latency_p95_ms"),
        format!("{:.3}", cli.summary.latency_p95_ms)
    );
    assert_eq!(
        row.get("jitter_mean_ms"),
        format!("{:.3}", cli.summary.jitter_mean_ms)
    );

    assert_stream_figures(&plan, &dir, &out.files);
    // The summary: every stream column per point over both repetitions.
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    for p in summary["points"].as_array().unwrap() {
        for c in STREAM_COLUMNS {
            assert_eq!(p["stream"][c]["n"], 2, "{c} in {p}");
        }
    }
    // Resuming runs nothing and draws the same figures from the kept frames.
    let again = run_plan(&plan, &mut SimBackend, &opts(&dir)).unwrap();
    assert_eq!((again.ran, again.skipped), (0, 12));
    assert_eq!(again.files, out.files);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Frames kept for repetition 0 only, one file per point; a set of figures per delay with a
/// curve per scheme; the summary plots.
fn assert_stream_figures(plan: &Plan, dir: &Path, files: &[PathBuf]) {
    // Frames kept for repetition 0 only, one file per point; figures per delay, a curve per scheme.
    assert_eq!(std::fs::read_dir(dir.join(FRAMES_DIR)).unwrap().count(), 6);
    assert!(
        plan.points
            .iter()
            .all(|p| frames_file(dir, &p.label).exists())
    );
    for kind in ["stream-latency", "stream-latency-cdf", "stream-jitter"] {
        for delay in ["10.0", "30.0"] {
            for ext in ["png", "svg"] {
                let f = dir.join(format!("tiny-stream-{kind}-delay_ms_{delay}.{ext}"));
                assert!(files.contains(&f), "{} not written", f.display());
                assert!(std::fs::metadata(&f).unwrap().len() > 1000);
            }
        }
    }
    let svg = std::fs::read_to_string(dir.join("tiny-stream-stream-latency-cdf-delay_ms_30.0.svg"))
        .unwrap();
    for scheme in ["plain-reno", "nc-fixed", "nc-vbnc"] {
        assert!(svg.contains(scheme), "{scheme} missing from the CDF");
    }
    for f in ["tiny-stream.png", "tiny-stream-jitter_mean_ms.svg"] {
        assert!(dir.join(f).exists(), "{f}");
    }
}

const BULK_PLAN: &str = r#"
name = "bulk"
backend = "sim"
seed = 7
[fixed]
rate_mbit = 6.0
delay_ms = 10.0
buffer_kib = 64
bytes = 200000
window = 3
redundancy = 1.2
loss = 0.05
[sweep]
mode = ["plain", "nc"]
"#;

/// A bulk plan's results are unchanged by the stream keys and columns: empty stream cells, and
/// a runs.csv of the version before them (no `workload`, stream keys or stream columns) still
/// reads, resumes without running anything and summarises the same.
#[test]
fn bulk_results_of_the_version_before_still_read() {
    let dir = temp_dir("bulk");
    let plan = Plan::parse(BULK_PLAN, Path::new("bulk.toml")).unwrap();
    let first = run_plan(&plan, &mut SimBackend, &opts(&dir)).unwrap();
    assert_eq!(first.ran, 2);
    let csv = dir.join("runs.csv");
    let rows = read_rows(&csv).unwrap();
    for r in &rows {
        assert_eq!(r.get("workload"), "bulk");
        assert!(STREAM_COLUMNS.iter().all(|c| r.get(c).is_empty()));
        assert!(r.counted());
    }
    // The same file as the version before wrote it: without the new columns.
    let new: Vec<&str> = [
        "workload",
        "preset",
        "stream_mbit",
        "fps",
        "deadline_ms",
        "trace_seed",
    ]
    .into_iter()
    .chain(STREAM_COLUMNS)
    .collect();
    let keep: Vec<usize> = (0..columns().len())
        .filter(|i| !new.contains(&columns()[*i]))
        .collect();
    let old: String = std::fs::read_to_string(&csv)
        .unwrap()
        .lines()
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            keep.iter().map(|i| cells[*i]).collect::<Vec<_>>().join(",") + "\n"
        })
        .collect();
    assert!(!old.contains("workload"));
    std::fs::write(&csv, &old).unwrap();
    assert_eq!(
        read_rows(&csv).unwrap(),
        rows,
        "read in this version's columns"
    );
    let resumed = run_plan(&plan, &mut SimBackend, &opts(&dir)).unwrap();
    assert_eq!((resumed.ran, resumed.skipped), (0, 2));
    let header = std::fs::read_to_string(&csv).unwrap();
    assert!(
        header.starts_with(&columns().join(",")),
        "rewritten in this version's columns"
    );
    assert_eq!(read_rows(&csv).unwrap(), rows);
    let mean = |s: &tcpnc_experiment::Summary| -> Vec<f64> {
        s.points.iter().map(|p| p.goodput.mean).collect()
    };
    assert_eq!(mean(&resumed.summary), mean(&first.summary));
    // A header that is no version's is still refused.
    std::fs::write(&csv, "point,rep,seed,colour\n").unwrap();
    assert!(read_rows(&csv).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}
