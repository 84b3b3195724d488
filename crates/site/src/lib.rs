//! Stage site: static HTML site from one or more datasets, rankings, joint cross-system view and inline SVG charts.
