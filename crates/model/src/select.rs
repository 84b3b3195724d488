//! Instance selection: the one meaning of `--only`, `--defer` and `--deferred-only` in every
//! command (build, kat, ct, ab, demo, every campaign phase), and of an explicit list of
//! `<id>/<label>` keys (what a campaign phase hands the stage it runs).
//!
//! A pattern is a regular expression searched in the instance key `<id>/<label>`
//! (`^ml-dsa-44/` selects a candidate, `/clean$` a label); no pattern selects everything.
//! The deferral rule applies to the measuring phases only ([`Selection::selects_with_defer`]).
//! A bad pattern is one [`SelectError`] naming the option and the pattern.

use std::collections::BTreeSet;
use std::fmt;

use regex::Regex;

/// Default `--defer` pattern of the reference (very slow NGCC instances); `--deferred-only`
/// without `--defer` selects what it matches.
pub const DEFAULT_DEFER: &str = r"^(sign-30/TRINE-512-|sign-32/UVW-512$)";

/// A pattern that did not compile, named with its option (`--only "(": …`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{option} {pattern:?}: {reason}")]
pub struct SelectError {
    /// The option that gave it (`--only`, `--defer`).
    pub option: &'static str,
    /// The pattern as given.
    pub pattern: String,
    /// Why it does not compile.
    pub reason: String,
}

/// Which instances a command works on: an `--only` pattern, explicit `<id>/<label>` keys,
/// and the deferral rule (`--defer`, `--deferred-only`). The default selects everything.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    only: Option<Regex>,
    keys: Option<BTreeSet<String>>,
    defer: Option<Regex>,
    deferred_only: bool,
}

fn compile(option: &'static str, pattern: &str) -> Result<Regex, SelectError> {
    Regex::new(pattern).map_err(|e| SelectError {
        option,
        pattern: pattern.to_string(),
        reason: e.to_string(),
    })
}

/// The instance key `<id>/<label>` (as build.json and the catalog spell it).
fn key(id: &str, label: &str) -> String {
    format!("{id}/{label}")
}

impl Selection {
    /// Everything.
    pub fn all() -> Selection {
        Selection::default()
    }

    /// The instances `--only PATTERN` selects (`None`: every instance).
    pub fn only(pattern: Option<&str>) -> Result<Selection, SelectError> {
        Ok(Selection {
            only: pattern.map(|p| compile("--only", p)).transpose()?,
            ..Selection::default()
        })
    }

    /// Exactly these `<id>/<label>` keys (none: nothing is selected).
    pub fn keys<I, S>(keys: I) -> Selection
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Selection {
            keys: Some(keys.into_iter().map(Into::into).collect()),
            ..Selection::default()
        }
    }

    /// This selection with the deferral rule of a campaign: `--defer PATTERN` leaves the
    /// instances it matches out; `--deferred-only` keeps only those (the pattern, else
    /// [`DEFAULT_DEFER`]).
    pub fn with_defer(
        mut self,
        defer: Option<&str>,
        deferred_only: bool,
    ) -> Result<Selection, SelectError> {
        self.defer = defer.map(|p| compile("--defer", p)).transpose()?;
        self.deferred_only = deferred_only;
        Ok(self)
    }

    /// Whether the instance `<id>/<label>` is selected: it matches `--only` and is one of
    /// the keys (each when given). The deferral rule is not applied: building, KAT and the
    /// constant-time check work on deferred instances too.
    pub fn selects(&self, id: &str, label: &str) -> bool {
        let k = key(id, label);
        self.only.as_ref().is_none_or(|r| r.is_match(&k))
            && self.keys.as_ref().is_none_or(|ks| ks.contains(&k))
    }

    /// Whether a measuring phase works on `<id>/<label>`: [`Selection::selects`], and the
    /// deferral rule (`--deferred-only`: deferred instances only; `--defer`: none of them).
    pub fn selects_with_defer(&self, id: &str, label: &str) -> bool {
        if !self.selects(id, label) {
            return false;
        }
        let k = key(id, label);
        if self.deferred_only {
            return self.is_deferred(&k);
        }
        !self.defers(&k)
    }

    /// Whether `--defer` (as given) matches `text` (a key or a path below the run).
    pub fn defers(&self, text: &str) -> bool {
        self.defer.as_ref().is_some_and(|r| r.is_match(text))
    }

    /// Whether `key` is deferred by the rule in force: the `--defer` pattern, or with
    /// `--deferred-only` alone the [`DEFAULT_DEFER`] one.
    pub fn is_deferred(&self, key: &str) -> bool {
        match (&self.defer, self.deferred_only) {
            (Some(r), _) => r.is_match(key),
            (None, true) => {
                static DEFAULT: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
                DEFAULT
                    .get_or_init(|| {
                        Regex::new(DEFAULT_DEFER).expect("the default pattern compiles")
                    })
                    .is_match(key)
            }
            (None, false) => false,
        }
    }

    /// The `--only` pattern as given.
    pub fn only_pattern(&self) -> Option<&str> {
        self.only.as_ref().map(Regex::as_str)
    }

    /// The `--defer` pattern as given.
    pub fn defer_pattern(&self) -> Option<&str> {
        self.defer.as_ref().map(Regex::as_str)
    }

    /// `--deferred-only`.
    pub fn deferred_only(&self) -> bool {
        self.deferred_only
    }
}

impl fmt::Display for Selection {
    /// How the selection reads in a log line: `--only "…"`, `N key(s)`, or `every instance`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.only, &self.keys) {
            (Some(r), _) => write!(f, "--only {:?}", r.as_str()),
            (None, Some(k)) => write!(f, "{} key(s)", k.len()),
            (None, None) => f.write_str("every instance"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_is_searched_in_the_key() {
        let s = Selection::only(Some("^ml-dsa-44/")).unwrap();
        assert!(s.selects("ml-dsa-44", "ml-dsa-44_clean"));
        assert!(!s.selects("ml-dsa-65", "ml-dsa-65_clean"));
        let s = Selection::only(Some("/clean$")).unwrap();
        assert!(s.selects("x", "clean"));
        assert!(!s.selects("x", "clean2"));
        assert!(Selection::all().selects("a", "b"));
        assert_eq!(Selection::all().only_pattern(), None);
    }

    #[test]
    fn keys_are_keys_not_patterns() {
        let s = Selection::keys(["a.b/c+d".to_string()]);
        assert!(s.selects("a.b", "c+d"));
        // `.` and `+` are not regex operators here.
        assert!(!s.selects("axb", "ccd"));
        assert!(!s.selects("a.b", "c+d2"));
        assert!(!Selection::keys(Vec::<String>::new()).selects("a", "b"));
    }

    #[test]
    fn a_bad_pattern_is_named_with_its_option() {
        let e = Selection::only(Some("(")).unwrap_err();
        assert!(e.to_string().starts_with("--only \"(\": "), "{e}");
        let e = Selection::all().with_defer(Some("[z"), false).unwrap_err();
        assert!(e.to_string().starts_with("--defer \"[z\": "), "{e}");
    }

    #[test]
    fn defer_leaves_out_and_deferred_only_keeps() {
        let s = Selection::all()
            .with_defer(Some("^sign-30/"), false)
            .unwrap();
        assert!(!s.selects_with_defer("sign-30", "TRINE-512-ref"));
        assert!(s.selects_with_defer("sign-31", "x"));
        // Deferral is the measuring phases' rule only.
        assert!(s.selects("sign-30", "TRINE-512-ref"));
        let s = Selection::all()
            .with_defer(Some("^sign-30/"), true)
            .unwrap();
        assert!(s.selects_with_defer("sign-30", "TRINE-512-ref"));
        assert!(!s.selects_with_defer("sign-31", "x"));
        // --deferred-only alone: the reference's default pattern.
        let s = Selection::all().with_defer(None, true).unwrap();
        assert!(s.selects_with_defer("sign-32", "UVW-512"));
        assert!(!s.selects_with_defer("sign-32", "UVW-512x"));
        assert!(!s.defers("sign-32/UVW-512"));
        // --only still applies.
        let s = Selection::only(Some("^kem"))
            .unwrap()
            .with_defer(None, true)
            .unwrap();
        assert!(!s.selects_with_defer("sign-32", "UVW-512"));
    }
}
