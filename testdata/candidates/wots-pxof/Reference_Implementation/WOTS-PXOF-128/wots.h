/* wots.h -- parameters and internal functions of WOTS-PXOF-128. */
#ifndef WOTS_H
#define WOTS_H

#include <stddef.h>

#define WOTS_N 32                      /* hash output and seed length, bytes */
#define WOTS_LOGW 4                    /* Winternitz parameter w = 16 */
#define WOTS_W (1 << WOTS_LOGW)
#define WOTS_LEN1 (8 * WOTS_N / WOTS_LOGW) /* 64 message digits */
#define WOTS_LEN2 3                    /* checksum digits: 64 * 15 = 960 < 16^3 */
#define WOTS_LEN (WOTS_LEN1 + WOTS_LEN2)

#define WOTS_PK_BYTES (2 * WOTS_N)     /* public seed || root */
#define WOTS_SK_BYTES (3 * WOTS_N)     /* secret seed || public seed || root */
#define WOTS_SN_BYTES (WOTS_N + WOTS_LEN * WOTS_N) /* randomizer || chain values */

void wots_chain(unsigned char *out, const unsigned char *in, int start, int steps,
                const unsigned char *pub_seed, int chain);
void wots_secret(unsigned char *out, const unsigned char *sk_seed, int chain);
void wots_root(unsigned char *root, const unsigned char *ends, const unsigned char *pub_seed);
void wots_digits(int *digits, const unsigned char *digest);
void wots_digest(unsigned char *digest, const unsigned char *r, const unsigned char *pub_seed,
                 const unsigned char *m, unsigned long long m_len);

#endif
