//! Stage report: validation of a dataset and the Markdown pages (candidate, summary, method, symmetric survey) in harness and site form.
