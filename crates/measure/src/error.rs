//! Errors of the measure stage.

/// An error of the measure stage: a message naming the file or instance concerned.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    /// A described failure.
    #[error("{0}")]
    Msg(String),
    /// An I/O error.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl MeasureError {
    /// A described failure.
    pub fn msg(m: impl Into<String>) -> Self {
        MeasureError::Msg(m.into())
    }
}
