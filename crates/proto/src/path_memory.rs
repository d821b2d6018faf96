//! What an engine knows of the path to its peer, handed to every new flow as its starting point
//! (`path_memory`, issue 10: "loss, burst and reordering estimates are properties of the path").
//!
//! Each sender half writes its estimates here as they are learned (the random loss floor once
//! its first estimation window is complete, the peer's unordering length with every NC-ACK); a
//! sender half created later starts from them instead of from nothing: its redundancy from the
//! known floor (with `redundancy = "auto"`), its loss record with the floor as a prior window,
//! its coding window widened by the known unordering length. Each flow then refines its own.

use crate::repair_budget::RepairBudget;

/// The path estimates shared by the flows of one engine.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PathEstimate {
    /// Random loss floor of combinations (`LossEstimator::random_loss_rate`) of the latest
    /// flow that knew one.
    pub loss_floor: Option<f64>,
    /// Latest unordering length the peer reported (Ha & Tsuru §3.2), Pids.
    pub unordering: u16,
    /// The repair tokens the flows share (`repair_budget.rs`).
    pub repair_budget: RepairBudget,
}
