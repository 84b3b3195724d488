/*
 * pqperf_iccs.h -- everything libpqperf_iccs.a exports, in one header.
 *
 *   auxfunc.h : sm3hash, pseudohash, pseudoXOF
 *   drng.h    : DRNG_ctx, init_random_number, get_random_number (+ drng_algorithm below)
 *   rng.h     : NIST randombytes_init, randombytes
 *   below     : PQClean KAT generators (nist_kat_init, hqc_kat_init, hqc_kat_release,
 *               PQCLEAN_randombytes) and the HQC stream accessor.
 *
 * PQCLEAN_randombytes serves the generator initialised last (nist_kat_init or
 * randombytes_init: AES-256 CTR_DRBG, the default; hqc_kat_init: SHAKE-256 stream).
 */
#ifndef PQPERF_ICCS_H
#define PQPERF_ICCS_H

#include <stddef.h>
#include <stdint.h>

#include "auxfunc.h"
#include "drng.h"
#include "rng.h"

#ifdef __cplusplus
extern "C" {
#endif

extern DRNG_ctx drng_algorithm;

void nist_kat_init(uint8_t *entropy_input, const uint8_t *personalization_string,
                   int security_strength);
void hqc_kat_init(uint8_t *entropy_input, uint8_t *personalization_string,
                  int security_strength);
void hqc_kat_release(void);
int pqperf_hqc_randombytes(uint8_t *buf, size_t n);
int PQCLEAN_randombytes(uint8_t *output, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* PQPERF_ICCS_H */
