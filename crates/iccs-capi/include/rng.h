/*
 * rng.h -- NIST PQCgenKAT random generator interface (pqperf port, written from the
 * specification): AES-256 CTR_DRBG without derivation function, 48-byte entropy input,
 * optional 48-byte personalization string, no reseed. One process-wide state.
 */
#ifndef rng_h
#define rng_h

#ifdef __cplusplus
extern "C" {
#endif

#define RNG_SUCCESS      0
#define RNG_BAD_MAXLEN  -1
#define RNG_BAD_OUTBUF  -2
#define RNG_BAD_REQ_LEN -3

void randombytes_init(unsigned char *entropy_input, unsigned char *personalization_string,
                      int security_strength);

int randombytes(unsigned char *x, unsigned long long xlen);

#ifdef __cplusplus
}
#endif

#endif /* rng_h */
