//! The results CSV, which is also the journal a resumed experiment reads: one row per run,
//! appended and flushed as soon as the run ends, so an interruption loses at most the run
//! in progress. A final line cut short by an interruption is dropped on reopening.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::backend::RunRecord;
use crate::error::{ExperimentError, Result};
use crate::params::{Params, keys};

/// Result columns of every run, after the point, repetition, seed and parameter columns;
/// [`STREAM_COLUMNS`] follow them (empty for a bulk run): [`result_columns`].
pub const RUN_COLUMNS: [&str; 14] = [
    "outcome",
    "counted",
    "goodput_mbit",
    "completion_s",
    "bytes_delivered",
    "integrity_ok",
    "retransmissions",
    "wall_s",
    "jain_index",
    "dup_acks",
    "fast_retransmits",
    "flight_mean_bytes",
    "decoding_mean_pps",
    "decoding_sd_pps",
];

/// Every result column in order: [`RUN_COLUMNS`], then [`STREAM_COLUMNS`].
pub fn result_columns() -> impl Iterator<Item = &'static str> + Clone {
    RUN_COLUMNS.into_iter().chain(STREAM_COLUMNS)
}

/// A stream run's columns (`tcpnc_stream::StreamSummary`): frame latency (ms: mean, median,
/// 95th and 99th percentile, largest), mean jitter (ms), stalls (frames later than the
/// deadline or never delivered), frames in the trace and frames delivered intact.
pub const STREAM_COLUMNS: [&str; 9] = [
    "latency_mean_ms",
    "latency_p50_ms",
    "latency_p95_ms",
    "latency_p99_ms",
    "latency_max_ms",
    "jitter_mean_ms",
    "stalls",
    "frames",
    "frames_intact",
];

/// The result columns that hold no number (the outcome, flags).
const NON_NUMERIC_RESULT_COLUMNS: [&str; 3] = ["outcome", "counted", "integrity_ok"];

/// The result columns that hold numbers (what a plan's `[plot] y` may name): every result
/// column but [`NON_NUMERIC_RESULT_COLUMNS`].
pub fn numeric_result_columns() -> Vec<&'static str> {
    result_columns()
        .filter(|c| !NON_NUMERIC_RESULT_COLUMNS.contains(c))
        .collect()
}

/// The CSV header's columns.
pub fn columns() -> Vec<&'static str> {
    let mut c = vec!["point", "rep", "seed"];
    c.extend(keys());
    c.extend(result_columns());
    c
}

/// One CSV row.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Cells in [`columns`] order.
    pub cells: Vec<String>,
}

impl Row {
    /// A new row for a finished run.
    pub fn new(label: &str, rep: u32, seed: u64, p: &Params, r: &RunRecord) -> Row {
        let mut cells = vec![clean(label), rep.to_string(), seed.to_string()];
        cells.extend(p.cells().iter().map(|c| clean(c)));
        cells.extend([
            clean(&r.outcome),
            r.counted.to_string(),
            r.goodput_mbit.to_string(),
            r.completion_s.to_string(),
            r.bytes_delivered.to_string(),
            r.integrity_ok.to_string(),
            r.retransmissions.to_string(),
            format!("{:.3}", r.wall_s),
            r.jain_index.map(|j| format!("{j:.4}")).unwrap_or_default(),
            r.dup_acks.map(|d| d.to_string()).unwrap_or_default(),
            r.fast_retransmits
                .map(|d| d.to_string())
                .unwrap_or_default(),
            opt(r.flight_mean_bytes, 0),
            opt(r.decoding_mean_pps, 2),
            opt(r.decoding_sd_pps, 2),
        ]);
        cells.extend(stream_cells(r));
        Row { cells }
    }

    /// The cell of column `name`.
    pub fn get(&self, name: &str) -> &str {
        columns()
            .iter()
            .position(|c| *c == name)
            .and_then(|i| self.cells.get(i))
            .map(String::as_str)
            .unwrap_or("")
    }

    /// The cell of column `name` as a number (NaN if absent or not a number).
    pub fn num(&self, name: &str) -> f64 {
        self.get(name).parse().unwrap_or(f64::NAN)
    }

    /// Whether the run counts in the summary.
    pub fn counted(&self) -> bool {
        self.get("counted") == "true"
    }

    /// The identity of the run: repetition, seed and every parameter.
    pub fn key(&self) -> Vec<String> {
        self.cells[1..3 + keys().len()].to_vec()
    }

    /// The parameter cells.
    pub fn param_cells(&self) -> &[String] {
        &self.cells[3..3 + keys().len()]
    }
}

/// The run identity [`Row::key`] of a point's repetition, computed before it runs.
pub fn run_key(p: &Params, rep: u32, seed: u64) -> Vec<String> {
    let mut k = vec![rep.to_string(), seed.to_string()];
    k.extend(p.cells().iter().map(|c| clean(c)));
    k
}

/// The [`STREAM_COLUMNS`] of a run (empty for a bulk run).
fn stream_cells(r: &RunRecord) -> Vec<String> {
    let Some(s) = &r.stream else {
        return vec![String::new(); STREAM_COLUMNS.len()];
    };
    let ms = [
        s.latency_mean_ms,
        s.latency_p50_ms,
        s.latency_p95_ms,
        s.latency_p99_ms,
        s.latency_max_ms,
        s.jitter_mean_ms,
    ];
    let counts = [s.stalls, s.frames, s.intact];
    ms.iter()
        .map(|v| format!("{v:.3}"))
        .chain(counts.iter().map(usize::to_string))
        .collect()
}

/// A measured number with `digits` decimals, empty when not measured.
fn opt(x: Option<f64>, digits: usize) -> String {
    x.map(|v| format!("{v:.digits$}")).unwrap_or_default()
}

fn clean(s: &str) -> String {
    s.replace([',', '\n', '\r'], ";")
}

/// An open results CSV.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: File,
}

/// Reads the rows of a results CSV (missing file: none), in this version's columns. A file
/// of an earlier version, whose columns are some of this version's (`point`, `rep` and `seed`
/// among them), is read too: a parameter column it lacks takes the value a point without the
/// key records (as its runs had: e.g. `workload` = `bulk`), a result column it lacks is empty.
/// Fails on any other header.
pub fn read_rows(path: &Path) -> Result<Vec<Row>> {
    read_journal(path).map(|(rows, _)| rows)
}

/// [`read_rows`], and whether the file's columns were an earlier version's.
fn read_journal(path: &Path) -> Result<(Vec<Row>, bool)> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), false)),
        Err(e) => return Err(ExperimentError::file(path)(e)),
    };
    let complete = match text.rfind('\n') {
        Some(i) => &text[..=i],
        None => "",
    };
    let mut lines = complete.lines();
    let Some(header) = lines.next() else {
        return Ok((Vec::new(), false));
    };
    let bad = |detail: String| ExperimentError::Journal {
        path: path.to_path_buf(),
        detail,
    };
    let now = columns();
    let had: Vec<&str> = header.split(',').collect();
    let known = had.iter().all(|c| now.contains(c)) && had.starts_with(&["point", "rep", "seed"]);
    if !known {
        return Err(bad("its header is not this version's columns".into()));
    }
    // Per column of this version: the file's column, or the cell a run without it has.
    let defaults = Params::default().values();
    let source: Vec<std::result::Result<usize, String>> = now
        .iter()
        .map(|c| match had.iter().position(|h| h == c) {
            Some(i) => Ok(i),
            None if keys().contains(c) => Err(crate::params::cell(&defaults[*c])),
            None => Err(String::new()),
        })
        .collect();
    let mut rows = Vec::new();
    for (i, line) in lines.enumerate() {
        let cells: Vec<&str> = line.split(',').collect();
        if cells.len() != had.len() {
            let n = had.len();
            return Err(bad(format!(
                "line {} has {} cells, expected {n}",
                i + 2,
                cells.len()
            )));
        }
        let cells = source
            .iter()
            .map(|s| match s {
                Ok(i) => cells[*i].to_string(),
                Err(default) => default.clone(),
            })
            .collect();
        rows.push(Row { cells });
    }
    Ok((rows, had != now))
}

impl Journal {
    /// Opens (or with `fresh`, recreates) the CSV; returns it with the rows already there.
    /// A last line without its newline (an interrupted write) is cut off.
    pub fn open(path: &Path, fresh: bool) -> Result<(Journal, Vec<Row>)> {
        let io = ExperimentError::file(path);
        if fresh && path.exists() {
            std::fs::remove_file(path).map_err(ExperimentError::file(path))?;
        }
        let (rows, earlier) = read_journal(path)?;
        if earlier {
            // An earlier version's file: rewritten in this version's columns, then appended to.
            let mut text = columns().join(",") + "\n";
            for r in &rows {
                text += &(r.cells.join(",") + "\n");
            }
            let tmp = path.with_extension("csv.upgrade");
            std::fs::write(&tmp, text).map_err(ExperimentError::file(&tmp))?;
            std::fs::rename(&tmp, path).map_err(ExperimentError::file(path))?;
        }
        if path.exists() {
            let text = std::fs::read(path).map_err(ExperimentError::file(path))?;
            let keep = text.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
            if keep != text.len() {
                let f = OpenOptions::new()
                    .write(true)
                    .open(path)
                    .map_err(ExperimentError::file(path))?;
                f.set_len(keep as u64)
                    .map_err(ExperimentError::file(path))?;
            }
        }
        let new = std::fs::metadata(path)
            .map(|m| m.len() == 0)
            .unwrap_or(true);
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        if new {
            writeln!(file, "{}", columns().join(",")).map_err(ExperimentError::file(path))?;
        }
        Ok((
            Journal {
                path: path.to_path_buf(),
                file,
            },
            rows,
        ))
    }

    /// Appends one row and flushes it to the file.
    pub fn append(&mut self, row: &Row) -> Result<()> {
        let line = format!("{}\n", row.cells.join(","));
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.flush())
            .map_err(ExperimentError::file(&self.path))
    }
}
