/*
 * config.h -- parameter sets of the pqperf test candidate SELS (the MSIG one-time signature
 * with another way of choosing the set): the macro SELS_128 or SELS_192 selects it, and the
 * header names the instance of its folder (SELS_128 -> "SELS-128") whatever is defined.
 */
#ifndef MSIG_CONFIG_H
#define MSIG_CONFIG_H

/* The set is chosen by a macro named like the folder, and nothing is chosen without it:
 * a build without -DSELS_128 stops with "'MSIG_N' undeclared". */
#if defined(SELS_128)
#define MSIG_N 16
#elif defined(SELS_192)
#define MSIG_N 24
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
