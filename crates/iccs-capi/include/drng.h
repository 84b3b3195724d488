/*
 * drng.h -- ICCS deterministic random number generator (pqperf port, written from the
 * specification; not the official file): SP 800-90A Hash_DRBG structure with SM3,
 * seedlen 440 bits. Every get_random_number call advances the state once, also for 0 bits.
 *
 * Candidates use the global context `DRNG_ctx drng_algorithm`, declared extern by the
 * candidate and defined by the KAT driver / harness shim (libpqperf_iccs.a also carries a
 * definition in a separate archive member, used only when nothing else defines it).
 */
#ifndef DRNG_H
#define DRNG_H

#ifdef __cplusplus
extern "C" {
#endif

#define SEEDLEN 55

typedef struct {
    unsigned char V[SEEDLEN];
    unsigned char C[SEEDLEN];
    unsigned char reseed_counter[SEEDLEN];
} DRNG_ctx;

/* Instantiate with seed_len BYTES of seed (0 allowed). Returns 0 (-1: null pointer). */
int init_random_number(DRNG_ctx *drng, const unsigned char *seed,
                       unsigned long long seed_len);

/* Write ceil(random_number_len/8) bytes; the length is in BITS. Returns 0 (-1: null). */
int get_random_number(DRNG_ctx *drng, unsigned char *random_number,
                      unsigned long long random_number_len);

#ifdef __cplusplus
}
#endif

#endif /* DRNG_H */
