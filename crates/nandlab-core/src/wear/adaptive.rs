//! Adaptive Δ (lazy wear-leveling paper §4, Fig. 7; docs/PAPERS.md, docs/ALGORITHMS.md §6).
//!
//! The overhead ratio g (wear-leveling erases as a percentage of all erases) is modelled as
//! g(Δ) = K/(2Δ). From one session's Δ_cur and measured g(Δ_cur), K = 2·Δ_cur·g(Δ_cur); the
//! next Δ is where the model's slope dg/dΔ = −K/(2Δ²) equals λ (the user's boundary between
//! linear and super-linear overhead growth, −0.1 % per unit of Δ in the paper):
//! Δ_next = sqrt(Δ_cur · g(Δ_cur) / |λ|), with g in percent.

/// Δ for the next session. `overhead_percent` is g(Δ_cur) in percent (2.1 for 2.1 %); `lambda`
/// is the slope limit (the paper uses −0.1). A session without wear-leveling erases (g = 0)
/// gives 0: wear leveling then acts on the first block above the average, and the next
/// session measures a positive g again.
#[must_use]
pub fn next_delta(delta_cur: f64, overhead_percent: f64, lambda: f64) -> f64 {
    assert!(lambda != 0.0, "λ must be non-zero");
    assert!(delta_cur >= 0.0 && overhead_percent >= 0.0);
    (delta_cur * overhead_percent / lambda.abs()).sqrt()
}

/// Session bookkeeping for `next_delta`: a session ends after `session_wear_erases`
/// wear-leveling erases (the paper: "Δ adjusted every time after lazy wear leveling erased
/// 1,000 blocks"; results are insensitive to the length). g is measured over all erases of the
/// session. A Δ so large that no leveling happens never ends a session: nothing needs tuning.
#[derive(Clone, Debug)]
pub struct DeltaTuner {
    delta: f64,
    lambda: f64,
    session_wear_erases: u64,
    erases: u64,
    wear_erases: u64,
    /// Δ at the start of each session, for the trajectory plot (paper Fig. 13).
    history: Vec<f64>,
}

impl DeltaTuner {
    #[must_use]
    pub fn new(delta: f64, lambda: f64, session_wear_erases: u64) -> Self {
        assert!(session_wear_erases > 0);
        Self { delta, lambda, session_wear_erases, erases: 0, wear_erases: 0, history: vec![delta] }
    }

    /// The Δ in force.
    #[must_use]
    pub fn delta(&self) -> f64 {
        self.delta
    }

    /// Δ at the start of every session so far.
    #[must_use]
    pub fn history(&self) -> &[f64] {
        &self.history
    }

    /// Counts one erase (`by_wear_leveling`: caused by a re-mapping); at a session's end Δ is
    /// retuned. Returns true when it was.
    pub fn note_erase(&mut self, by_wear_leveling: bool) -> bool {
        self.erases += 1;
        self.wear_erases += u64::from(by_wear_leveling);
        if self.wear_erases < self.session_wear_erases {
            return false;
        }
        let g = 100.0 * self.wear_erases as f64 / self.erases as f64;
        self.delta = next_delta(self.delta, g, self.lambda);
        self.history.push(self.delta);
        self.erases = 0;
        self.wear_erases = 0;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's worked example: Δ_cur = 16, g = 2.1 %, λ = −0.1 → Δ_next = 18.3.
    #[test]
    fn papers_example() {
        let d = next_delta(16.0, 2.1, -0.1);
        assert!((d - 18.33).abs() < 0.005, "{d}");
        assert_eq!(format!("{d:.1}"), "18.3");
    }

    /// The model's fixed point: with g(Δ) = K/(2Δ) measured exactly, Δ_next is where the slope
    /// is λ, whatever Δ_cur was.
    #[test]
    fn converges_on_the_model() {
        let k = 70.0; // g(Δ) = 35/Δ percent
        let mut t = DeltaTuner::new(4.0, -0.1, 100);
        for session in 0..6 {
            // 100 wear-leveling erases among 100 / g% erases in all.
            let g = k / (2.0 * t.delta());
            let total = (100.0 * 100.0 / g).round() as u64;
            for i in 0..total {
                let retuned = t.note_erase(i >= total - 100);
                assert_eq!(retuned, i == total - 1, "session {session} ends at its 100th");
            }
        }
        // sqrt(K / (2|λ|)) = sqrt(350) = 18.7
        assert!((t.delta() - 18.7).abs() < 0.2, "{:?}", t.history());
        assert_eq!(t.history().len(), 7);
    }
}
