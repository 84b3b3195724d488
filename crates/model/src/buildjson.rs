//! `build.json` of a system dataset (evidence-formats.md §3): instances in build order and
//! the optional `optimized` map.

use indexmap::IndexMap;

use crate::evidence_struct;

evidence_struct! {
    /// `build.json`: one entry per built instance, keyed `<id>/<label>`, in build order.
    pub struct BuildJson {
        /// `<id>/<label>` → entry, in file (build) order.
        pub instances: IndexMap<String, BuildEntry>,
        /// `optimized/<family>` → exit status of the family's optimized build (x86_1 only).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub optimized: Option<IndexMap<String, i64>>,
    }
}

evidence_struct! {
    /// One built instance.
    pub struct BuildEntry {
        /// Candidate id (`iccs` for the ICCS baseline primitives).
        pub candidate: String,
        /// Harness label.
        pub label: String,
        /// Name the implementation reports.
        pub instance: String,
        /// `reference`, `optimized-avx2`, `iccs-baseline`.
        pub variant: String,
        /// `guide`, `guide-performance`, `harness-default`.
        pub flags: String,
        /// Final KAT verdict.
        pub kat: String,
        /// Verdict with the guide flags (present iff flags = harness-default).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub guide_result: Option<String>,
        /// `<id>/lib/lib<label>.so`.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub library: Option<String>,
        /// sha256 of the library.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub library_sha256: Option<String>,
        /// Sum of MemSiz of LOAD segments (page "ELF image"); absent or null when unknown.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub elf_load_bytes: Option<u64>,
        /// `kat/<id>/<label>.log`.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub kat_log: Option<String>,
        /// sha256 of the KAT log.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub kat_log_sha256: Option<String>,
        /// Old label when renamed after the build.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub relabelled_from: Option<String>,
        /// Explanation of the relabelling.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub relabel_note: Option<String>,
    }
}

impl BuildJson {
    /// Entry for `<candidate>/<label>`.
    pub fn entry(&self, candidate: &str, label: &str) -> Option<&BuildEntry> {
        self.instances.get(&format!("{candidate}/{label}"))
    }

    /// Entries of one candidate, in build order.
    pub fn of_candidate<'a>(
        &'a self,
        candidate: &'a str,
    ) -> impl Iterator<Item = &'a BuildEntry> + 'a {
        self.instances
            .values()
            .filter(move |e| e.candidate == candidate)
    }
}
