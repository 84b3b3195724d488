/* kem.c -- TOY-KEM: exercises the ICCS KEM API (not a secure KEM). */
#include <string.h>

#include "KEM_AlgorithmInstance.h"
#include "auxfunc.h"
#include "drng.h"

extern DRNG_ctx drng_algorithm;

unsigned long long kem_get_pk_len_bytes(void) { return 32; }
unsigned long long kem_get_sk_len_bytes(void) { return 64; }
unsigned long long kem_get_ss_len_bytes(void) { return 32; }
unsigned long long kem_get_ct_len_bytes(void) { return 32; }

static void derive(unsigned char *ss, const unsigned char *pk, const unsigned char *ct) {
    unsigned char buf[64];
    memcpy(buf, pk, 32);
    memcpy(buf + 32, ct, 32);
    pseudoXOF(256, buf, 512, ss);
}

int kem_keygen(unsigned char *pk, unsigned long long *pk_len, unsigned char *sk, unsigned long long *sk_len) {
    get_random_number(&drng_algorithm, sk, 256);
    pseudoXOF(256, sk, 256, pk);
    memcpy(sk + 32, pk, 32);
    *pk_len = 32;
    *sk_len = 64;
    return 0;
}

int kem_enc(unsigned char *pk, unsigned long long pk_len, unsigned char *ss, unsigned long long *ss_len,
            unsigned char *ct, unsigned long long *ct_len) {
    if (pk_len != 32) return -2;
    get_random_number(&drng_algorithm, ct, 256);
    derive(ss, pk, ct);
    *ss_len = 32;
    *ct_len = 32;
    return 0;
}

int kem_dec(unsigned char *sk, unsigned long long sk_len, unsigned char *ct, unsigned long long ct_len,
            unsigned char *ss, unsigned long long *ss_len) {
    if (sk_len != 64 || ct_len != 32) return -1;
    derive(ss, sk + 32, ct);
    *ss_len = 32;
    return 0;
}
