//! The driver's output writer: reference `META`/`TRIAL`/`STATUS` lines (tab-separated),
//! flushed line by line so a killed child leaves what it measured.

use super::*;

pub(super) struct Out<'a>(pub(super) &'a mut dyn Write);

impl Out<'_> {
    pub(super) fn meta(&mut self, k: &str, v: impl std::fmt::Display) {
        let _ = writeln!(self.0, "META\t{k}\t{v}");
        let _ = self.0.flush();
    }
    pub(super) fn line(&mut self, s: impl std::fmt::Display) {
        let _ = writeln!(self.0, "{s}");
        let _ = self.0.flush();
    }
}
