/*
 * candidate.c -- a minimal ICCS-style candidate for the size measurement: references the
 * three helpers and the DRNG through drng_algorithm (defined here, like the harness shim).
 * Built once against libpqperf_iccs.a and once against stubs; the difference is what the
 * artifact adds to a candidate's ELF image.
 */
#include "auxfunc.h"
#include "drng.h"

DRNG_ctx drng_algorithm;

int candidate_op(unsigned char *out, const unsigned char *in, unsigned long long n)
{
    int rc = get_random_number(&drng_algorithm, out, 256);
    rc |= sm3hash(256, in, 8 * n, out);
    rc |= pseudohash(512, in, 8 * n, out);
    rc |= pseudoXOF(1024, in, 8 * n, out);
    return rc;
}

int candidate_seed(const unsigned char *seed, unsigned long long n)
{
    return init_random_number(&drng_algorithm, seed, n);
}
