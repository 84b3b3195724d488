//! Page locations in the harness and site layouts, and relative links between them
//! (method.md §13.0, §14; site-pages.md "Link rewriting").

use crate::Form;

/// Harness repository URL (absolute links stay absolute in both forms).
pub const HARNESS_URL: &str = "https://github.com/ngcc-dev/ngcc-harness";

/// Commit of the harness the site pins its PDF badges to (site-pages.md, summary rows).
pub const SITE_PDF_COMMIT: &str = "dc66c6cb3c06e75bdea0048e21fa4e13c63f00af";

/// The address of a page (or linked document) of the published set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageRef {
    /// Candidate page of a system.
    Candidate {
        /// System id.
        sys: String,
        /// Candidate id.
        id: String,
    },
    /// System summary.
    Summary(String),
    /// System method page.
    Method(String),
    /// Symmetric survey.
    Survey,
    /// External-size audit (hand-written companion page).
    SizeAudit,
    /// Site root index of the performance pages.
    Root,
    /// Site security report of a candidate.
    SecurityReport(String),
}

impl PageRef {
    /// Path of the page relative to the output root of the form (the harness repository, or
    /// the site root holding `content/`).
    pub fn path(&self, form: Form) -> String {
        match (form, self) {
            (Form::Harness, PageRef::Candidate { sys, id }) => format!("{id}/perf_{sys}.md"),
            (Form::Harness, PageRef::Summary(sys)) => format!("performance/summary_{sys}.md"),
            (Form::Harness, PageRef::Method(sys)) => format!("performance/method_{sys}.md"),
            (Form::Harness, PageRef::Survey) => "performance/symmetric-survey.md".into(),
            (Form::Harness, PageRef::SizeAudit) => "performance/EXTERNAL_SIZE_AUDIT.md".into(),
            (Form::Harness, PageRef::Root) => "performance/README.md".into(),
            (Form::Harness, PageRef::SecurityReport(id)) => format!("{id}/README.md"),
            (Form::Site, PageRef::Candidate { sys, id }) => {
                format!("content/performance/{sys}/{id}.md")
            }
            (Form::Site, PageRef::Summary(sys)) => format!("content/performance/{sys}/index.md"),
            (Form::Site, PageRef::Method(sys)) => format!("content/performance/{sys}/method.md"),
            (Form::Site, PageRef::Survey) => "content/performance/symmetric-survey.md".into(),
            (Form::Site, PageRef::SizeAudit) => "content/performance/external-size-audit.md".into(),
            (Form::Site, PageRef::Root) => "content/performance/index.md".into(),
            (Form::Site, PageRef::SecurityReport(id)) => format!("content/reports/{id}.md"),
        }
    }

    /// The harness path of a page (the `synchronized from harness:` comment of the site).
    pub fn harness_path(&self) -> String {
        self.path(Form::Harness)
    }
}

/// Relative link from the directory of `from` to `to` (both `/`-separated relative paths).
pub fn relative(from: &str, to: &str) -> String {
    let from_dir: Vec<&str> = {
        let mut v: Vec<&str> = from.split('/').collect();
        v.pop();
        v
    };
    let to_parts: Vec<&str> = to.split('/').collect();
    let common = from_dir
        .iter()
        .zip(to_parts.iter())
        .take_while(|(a, b)| a == b)
        .count();
    let common = common.min(to_parts.len().saturating_sub(1));
    let mut out: Vec<&str> = vec![".."; from_dir.len() - common];
    out.extend_from_slice(&to_parts[common..]);
    out.join("/")
}

/// Link from page `from` to page `to` in `form`.
pub fn link(from: &PageRef, to: &PageRef, form: Form) -> String {
    relative(&from.path(form), &to.path(form))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harness_and_site_links() {
        let c = PageRef::Candidate {
            sys: "x86_1".into(),
            id: "sign-02".into(),
        };
        assert_eq!(
            link(&c, &PageRef::Summary("x86_1".into()), Form::Harness),
            "../performance/summary_x86_1.md"
        );
        assert_eq!(
            link(&c, &PageRef::Survey, Form::Harness),
            "../performance/symmetric-survey.md"
        );
        assert_eq!(
            link(&c, &PageRef::Survey, Form::Site),
            "../symmetric-survey.md"
        );
        assert_eq!(
            link(&c, &PageRef::SizeAudit, Form::Site),
            "../external-size-audit.md"
        );
        assert_eq!(
            link(&c, &PageRef::Method("x86_1".into()), Form::Site),
            "method.md"
        );
        assert_eq!(
            link(&c, &PageRef::Summary("x86_1".into()), Form::Site),
            "index.md"
        );
        assert_eq!(link(&c, &PageRef::Root, Form::Site), "../index.md");
        let other = PageRef::Candidate {
            sys: "arm_1".into(),
            id: "sign-02".into(),
        };
        assert_eq!(link(&c, &other, Form::Site), "../arm_1/sign-02.md");
        assert_eq!(
            link(&c, &PageRef::SecurityReport("sign-02".into()), Form::Site),
            "../../reports/sign-02.md"
        );
        let s = PageRef::Summary("x86_1".into());
        assert_eq!(
            link(
                &s,
                &PageRef::Candidate {
                    sys: "x86_1".into(),
                    id: "sign-01".into()
                },
                Form::Harness
            ),
            "../sign-01/perf_x86_1.md"
        );
        assert_eq!(
            link(&s, &PageRef::Method("x86_1".into()), Form::Harness),
            "method_x86_1.md"
        );
    }
}
