//! Stage profile: link-time wrapped builds, symmetric-primitive call and tick shares, ICCS baseline and hash-cost ratios.
