//! The one exit-status vocabulary of pqperf: every command, campaign phase and stage step
//! ends [`Exit::Done`] (0), [`Exit::Failed`] (1) or [`Exit::Refused`] (2), the codes
//! documented in `pqperf --help` ([`Exit::HELP`]).

/// How a command or a phase ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    /// It did what was asked (0).
    #[default]
    Done,
    /// It ran and something in it failed, recorded in its evidence and log (1).
    Failed,
    /// Usage or refused input (2): it said why, and nothing was written.
    Refused,
}

impl Exit {
    /// The codes as `pqperf --help` explains them.
    pub const HELP: &'static str = "Exit codes: 0 done; 1 something failed (a KAT verdict other than PASS, a build failure, a unit not measured, a regression, an invalid dataset, an I/O error); 2 usage or refused input (bad argument, a selection matching nothing, a missing input such as build.json, a run directory that does not exist, an unusable CPU); nothing is written then.";

    /// The process exit code.
    pub fn code(self) -> i32 {
        match self {
            Exit::Done => 0,
            Exit::Failed => 1,
            Exit::Refused => 2,
        }
    }

    /// [`Exit::Failed`] when `failed`, else [`Exit::Done`].
    pub fn failed_if(failed: bool) -> Exit {
        if failed { Exit::Failed } else { Exit::Done }
    }

    /// The worse of the two (refused over failed over done): how several steps end.
    pub fn worst(self, other: Exit) -> Exit {
        self.max(other)
    }
}

impl std::fmt::Display for Exit {
    /// The code, as an exit status is shown (`exit status 1`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.code())
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> Self {
        std::process::ExitCode::from(e.code() as u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_codes_and_the_worst_of_several() {
        assert_eq!(
            [Exit::Done, Exit::Failed, Exit::Refused].map(Exit::code),
            [0, 1, 2]
        );
        assert_eq!(Exit::Done.worst(Exit::Failed), Exit::Failed);
        assert_eq!(Exit::Refused.worst(Exit::Failed), Exit::Refused);
        assert_eq!(Exit::failed_if(true).to_string(), "1");
        assert!(Exit::HELP.starts_with("Exit codes: 0 done; 1 "));
    }
}
