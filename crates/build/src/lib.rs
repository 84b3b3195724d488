//! Stage build: candidate import (PQClean, ICCS submissions) and gcc builds of one shared library per instance, recorded in build.json.
// ENGINEERS: read /work/main/DEVELOPING.md first (own target dir, git rules, deadline 11:25 UTC).
