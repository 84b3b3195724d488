//! Errors of the campaign: a message naming the file or instance concerned.

/// An error of the campaign orchestration.
#[derive(Debug, thiserror::Error)]
pub enum CampaignError {
    /// A described failure.
    #[error("{0}")]
    Msg(String),
    /// An I/O error.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// An evidence file that could not be read (the message names it).
    #[error(transparent)]
    Model(#[from] pqperf_model::ModelError),
    /// An error of the measure stage.
    #[error(transparent)]
    Measure(#[from] pqperf_measure::MeasureError),
    /// A phase provided by another stage could not run to its end.
    #[error(transparent)]
    Phase(Box<crate::PhaseError>),
}

impl From<crate::PhaseError> for CampaignError {
    fn from(e: crate::PhaseError) -> Self {
        CampaignError::Phase(Box::new(e))
    }
}

impl CampaignError {
    /// A described failure.
    pub fn msg(m: impl Into<String>) -> Self {
        CampaignError::Msg(m.into())
    }
}
