//! Stage build: candidate import (PQClean, ICCS submissions) and gcc builds of one shared library per instance, recorded in build.json.
