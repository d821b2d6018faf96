//! A small simulator sweep through the whole pipeline: CSV, summary, PNG, SVG, resume, and
//! the shape of the paper's result (TCP/NC ahead of plain TCP at 10 % loss).

use std::path::{Path, PathBuf};

use tcpnc_experiment::journal::read_rows;
use tcpnc_experiment::{ExperimentError, Plan, RunOptions, SimBackend, run_plan};

const PLAN: &str = r#"
name = "tiny"
title = "tiny sweep"
backend = "sim"
repetitions = 2
seed = 7

[fixed]
cc = "reno"
rate_mbit = 6.0
delay_ms = 10.0
queue_packets = 5
loss_position = "before_queue"
buffer_kib = 64
bytes = 300000
timeout_s = 120.0
window = 3
redundancy = 1.3

[sweep]
loss = [0.0, 0.10]
mode = ["plain", "nc"]

[plot]
x = "loss"
x_scale = 100.0
"#;

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tcpnc-exp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn opts(dir: &Path, fresh: bool) -> RunOptions {
    RunOptions {
        out_dir: dir.to_path_buf(),
        fresh,
        progress: false,
        stop: None,
    }
}

#[test]
fn sweep_writes_csv_summary_and_plots_resumes_and_keeps_the_shape() {
    let dir = temp_dir("pipeline");
    let plan = Plan::parse(PLAN, Path::new("tiny.toml")).unwrap();
    assert_eq!(plan.points.len(), 4);
    assert_eq!(plan.total_runs(), 8);

    let first = run_plan(&plan, &mut SimBackend, &opts(&dir, false)).unwrap();
    assert_eq!((first.ran, first.skipped, first.interrupted), (8, 0, false));
    for f in ["runs.csv", "summary.json", "tiny.png", "tiny.svg"] {
        let len = std::fs::metadata(dir.join(f)).map(|m| m.len()).unwrap_or(0);
        assert!(len > 100, "{f} missing or empty");
    }
    let png = std::fs::read(dir.join("tiny.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    let svg = std::fs::read_to_string(dir.join("tiny.svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("tiny sweep"));
    let rows = read_rows(&dir.join("runs.csv")).unwrap();
    assert_eq!(rows.len(), 8);
    assert!(
        rows.iter()
            .all(|r| r.counted() && r.get("integrity_ok") == "true")
    );

    // Resume: nothing left to do, no new rows.
    let second = run_plan(&plan, &mut SimBackend, &opts(&dir, false)).unwrap();
    assert_eq!((second.ran, second.skipped), (0, 8));
    assert_eq!(read_rows(&dir.join("runs.csv")).unwrap().len(), 8);

    // An interrupted write (a last line without its newline) is dropped and redone.
    let csv = dir.join("runs.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let cut = text.trim_end().rfind('\n').unwrap() + 1;
    std::fs::write(&csv, format!("{}{}", &text[..cut], "partial,row")).unwrap();
    let third = run_plan(&plan, &mut SimBackend, &opts(&dir, false)).unwrap();
    assert_eq!((third.ran, third.skipped), (1, 7));
    assert_eq!(read_rows(&csv).unwrap().len(), 8);

    // Summary JSON: per point mean/min/max/stddev/n; curves per mode.
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    let points = summary["points"].as_array().unwrap();
    assert_eq!(points.len(), 4);
    for p in points {
        let g = &p["goodput_mbit"];
        assert_eq!(g["n"], 2);
        for k in ["mean", "min", "max", "stddev"] {
            assert!(g[k].is_number(), "{k} in {p}");
        }
    }
    // Shape: at 10 % loss TCP/NC is well ahead of plain TCP.
    let goodput = |mode: &str| {
        points
            .iter()
            .find(|p| p["params"]["mode"] == mode && p["params"]["loss"] == 0.1)
            .map(|p| p["goodput_mbit"]["mean"].as_f64().unwrap())
            .unwrap()
    };
    let (nc, plain) = (goodput("nc"), goodput("plain"));
    eprintln!("10 % loss: nc {nc:.3} vs plain {plain:.3} Mbit/s");
    assert!(
        nc > 2.0 * plain,
        "nc {nc} vs plain {plain} Mbit/s at 10% loss"
    );

    // --fresh starts over.
    let fresh = run_plan(&plan, &mut SimBackend, &opts(&dir, true)).unwrap();
    assert_eq!((fresh.ran, fresh.skipped), (8, 0));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn plan_errors_name_the_key() {
    let bad = |text: &str| match Plan::parse(text, Path::new("bad.toml")) {
        Err(ExperimentError::Plan { detail, .. }) => detail,
        other => panic!("expected a plan error, got {other:?}"),
    };
    let e = bad("backend = \"sim\"\n[fixed]\nlos = 0.1\n[sweep]\nloss = [0.1]\n");
    assert!(e.contains("`los`"), "{e}");
    let e = bad("backend = \"sim\"\n[fixed]\nwindow = \"three\"\n[sweep]\nloss = [0.1]\n");
    assert!(e.contains("`window`"), "{e}");
    let e = bad("backend = \"sim\"\n[sweep]\nloss = 0.1\n");
    assert!(e.contains("`loss`") && e.contains("array"), "{e}");
    let e = bad("backend = \"sim\"\n[sweep]\nloss = [0.1, 1.5]\n");
    assert!(e.contains("loss"), "{e}");
    let e = bad("backend = \"simulator\"\n");
    assert!(e.contains("backend"), "{e}");
    let e = bad("backend = \"sim\"\nrepeats = 3\n");
    assert!(e.contains("repeats"), "{e}");
}

#[test]
fn sim_backend_rejects_bbr_and_lab_plans() {
    let plan = Plan::parse(
        "backend = \"sim\"\n[fixed]\ncc = \"bbr\"\n[sweep]\nloss = [0.0]\n",
        Path::new("bbr.toml"),
    )
    .unwrap();
    let dir = temp_dir("bbr");
    let err = run_plan(&plan, &mut SimBackend, &opts(&dir, false)).unwrap_err();
    assert!(err.to_string().contains("bbr"), "{err}");
    let lab = Plan::parse(
        "backend = \"lab\"\n[sweep]\nloss = [0.0]\n",
        Path::new("l.toml"),
    )
    .unwrap();
    assert!(run_plan(&lab, &mut SimBackend, &opts(&dir, false)).is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn shipped_plans_parse() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let plan = Plan::load(&path).unwrap_or_else(|e| panic!("{e}"));
            assert!(plan.total_runs() > 0);
            n += 1;
        }
    }
    assert!(n >= 6, "expected the shipped plans in {}", dir.display());
}

/// `[[variant]]` crosses every group with a set of keys that change together.
#[test]
fn variants_cross_the_groups() {
    let text = "backend = \"sim\"\n[fixed]\nloss = 0.05\n\
                [[group]]\nfixed = { delay_ms = 60.0, delay_sd_ms = 0.0 }\n\
                [[group]]\nfixed = { delay_ms = 260.0, delay_sd_ms = 66.7 }\n\
                sweep = { delay_switch_ms = [50.0, 1000.0] }\n\
                [[variant]]\nmode = \"plain\"\n\
                [[variant]]\nmode = \"nc\"\nrepair = \"off\"\nunordering = \"off\"\n";
    let plan = Plan::parse(text, Path::new("v.toml")).unwrap();
    assert_eq!(plan.points.len(), 2 * 3);
    let nc: Vec<_> = plan
        .points
        .iter()
        .filter(|p| p.params.mode == tcpnc_experiment::params::PathMode::Nc)
        .collect();
    assert_eq!(nc.len(), 3);
    assert!(nc.iter().all(|p| p.params.coding.repair.is_some()));
    assert!(nc.iter().any(|p| p.params.path.delay_sd_ms == Some(66.7)));
    let e = match Plan::parse(
        "backend = \"sim\"\n[[variant]]\nrepiar = \"off\"\n",
        Path::new("b.toml"),
    ) {
        Err(ExperimentError::Plan { detail, .. }) => detail,
        other => panic!("expected a plan error, got {other:?}"),
    };
    assert!(e.contains("[[variant]] #1") && e.contains("repiar"), "{e}");
}

const SERIES_PLAN: &str = r#"
name = "sizes"
title = "sizes"
backend = "sim"
repetitions = 2
seed = 3

[fixed]
cc = "reno"
rate_mbit = 6.0
delay_ms = 10.0
queue_packets = 20
loss = 0.05
buffer_kib = 64
timeout_s = 120.0
window = 3
redundancy = 1.2

[sweep]
bytes = [100000, 400000]
mode = ["plain", "nc"]

[plot]
x = "bytes"
x_scale = 0.001
x_axis = "log"
y = "completion_s"
series_y = "decoded_pps"
series_repetition = 1
"#;

#[test]
fn series_plots_per_x_and_a_log_axis() {
    let dir = temp_dir("series");
    let plan = Plan::parse(SERIES_PLAN, Path::new("sizes.toml")).unwrap();
    let out = run_plan(&plan, &mut SimBackend, &opts(&dir, false)).unwrap();
    assert_eq!(out.ran, 8);
    // One kept series per point (repetition 1 only), each a CSV with the decoding column.
    let kept: Vec<_> = std::fs::read_dir(dir.join("series")).unwrap().collect();
    assert_eq!(kept.len(), 4);
    for p in &plan.points {
        let csv = tcpnc_experiment::series_plot::series_file(&dir, &p.label);
        let text = std::fs::read_to_string(&csv).unwrap();
        assert!(
            text.starts_with("t_s,decoded_packets,decoded_pps"),
            "{}",
            csv.display()
        );
        assert!(text.lines().count() > 2);
    }
    // A figure per x value (100 and 400 kB), two lines each, and the log-axis summary plot.
    for stem in ["sizes-series-100", "sizes-series-400", "sizes"] {
        for ext in ["png", "svg"] {
            let f = dir.join(format!("{stem}.{ext}"));
            assert!(out.files.contains(&f), "{} not written", f.display());
        }
    }
    let svg = std::fs::read_to_string(dir.join("sizes-series-400.svg")).unwrap();
    assert!(svg.contains("plain") && svg.contains("nc"));
    std::fs::remove_dir_all(&dir).unwrap();

    // The plot keys are checked when the plan is read.
    let bad_column = SERIES_PLAN.replace("\"decoded_pps\"", "\"cwnd\"");
    let e = Plan::parse(&bad_column, Path::new("b.toml")).unwrap_err();
    assert!(e.to_string().contains("series_y"), "{e}");
    let bad_rep = SERIES_PLAN.replace("series_repetition = 1", "series_repetition = 2");
    let e = Plan::parse(&bad_rep, Path::new("b.toml")).unwrap_err();
    assert!(e.to_string().contains("series_repetition"), "{e}");
    let bad_axis = SERIES_PLAN.replace("x_axis = \"log\"", "x_axis = \"cubic\"");
    assert!(Plan::parse(&bad_axis, Path::new("b.toml")).is_err());
}
