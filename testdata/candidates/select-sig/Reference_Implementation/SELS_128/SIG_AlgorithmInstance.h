/*
 * SIG_AlgorithmInstance.h -- ICCS signature API of the pqperf test candidate SELS, a
 * Winternitz one-time signature over the ICCS placeholder XOF. The instance name is a macro
 * of config.h chosen by the mode macro (as in published submissions). Written for pqperf's
 * tests; not a submission.
 */
#ifndef SIG_ALGORITHM_INSTANCE_H
#define SIG_ALGORITHM_INSTANCE_H

#include "config.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OUTPUT_BLANK_TEST_VECTORS 0
#define ALGORITHM_INSTANCE "SELS-128"

unsigned long long sig_get_pk_len_bytes(void);
unsigned long long sig_get_sk_len_bytes(void);
unsigned long long sig_get_sn_len_bytes(void);

int sig_keygen(unsigned char *pk, unsigned long long *pk_len_bytes,
               unsigned char *sk, unsigned long long *sk_len_bytes);
int sig_sign(unsigned char *sk, unsigned long long sk_len_bytes,
             unsigned char *m, unsigned long long m_len_bytes,
             unsigned char *sn, unsigned long long *sn_len_bytes);
int sig_verify(unsigned char *pk, unsigned long long pk_len_bytes,
               unsigned char *sn, unsigned long long sn_len_bytes,
               unsigned char *m, unsigned long long m_len_bytes);

#ifdef __cplusplus
}
#endif

#endif
