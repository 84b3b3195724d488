//! Dataset validation (owned by engineer `model`; placeholder until it lands).
