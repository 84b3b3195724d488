//! Stage measure: host checks, counters, the per-trial driver, calibration and planning, campaigns, sharding and publication of evidence.
