/*
 * config.h -- parameter sets of the pqperf test candidate MSIG. The mode macro MSIG_MODE
 * selects the set: 3 (default here) -> MSIG-192, n = 24 bytes; 1 -> MSIG-128, n = 16 bytes
 * (a build passes -DMSIG_MODE=1). The instance name and every size are macros of the set.
 */
#ifndef MSIG_CONFIG_H
#define MSIG_CONFIG_H

#ifndef MSIG_MODE
#define MSIG_MODE 3
#endif

#if MSIG_MODE == 1
#define CRYPTO_ALGNAME "MSIG-" "128"
#define MSIG_N 16
#elif MSIG_MODE == 3
#define CRYPTO_ALGNAME "MSIG-" "192"
#define MSIG_N 24
#else
#error "MSIG_MODE must be 1 or 3"
#endif

#define MSIG_LOGW 4                                  /* Winternitz w = 16 */
#define MSIG_W (1 << MSIG_LOGW)
#define MSIG_LEN1 (8 * MSIG_N / MSIG_LOGW)           /* message digits */
#define MSIG_LEN2 3                                  /* checksum digits (< 16^3) */
#define MSIG_LEN (MSIG_LEN1 + MSIG_LEN2)

#define CRYPTO_PUBLICKEYBYTES (2 * MSIG_N)           /* public seed || root */
#define CRYPTO_SECRETKEYBYTES (3 * MSIG_N)           /* secret seed || public seed || root */
#define CRYPTO_BYTES (MSIG_N + MSIG_LEN * MSIG_N)    /* randomizer || chain values */

#endif
