/*
 * SPEED_KEM.c -- benchmark program of the pqperf test candidate speed-kem (upper-case name,
 * as a real submission shipped it): defines main and its own DRNG context drng_algorithm,
 * times keygen/enc/dec with the cycle counter of cpucycles.c and prints through
 * print_results. Not part of the library: pqperf must leave it out, and must not conclude
 * from it that the library defines drng_algorithm.
 */
#include <stdio.h>
#include <string.h>

#include "KEM_AlgorithmInstance.h"
#include "drng.h"

DRNG_ctx drng_algorithm;

unsigned long long cpucycles(void);
void print_results(const char *what, const unsigned long long *t, int n);

#define RUNS 16

int main(void)
{
    unsigned char seed[64], pk[64], sk[64], ct[64], ss[64], ss2[64];
    unsigned long long pkl, skl, ctl, ssl, ssl2, t[RUNS];
    memset(seed, 1, sizeof seed);
    init_random_number(&drng_algorithm, seed, sizeof seed);
    for (int i = 0; i < RUNS; i++) {
        t[i] = cpucycles();
        pkl = skl = ctl = ssl = ssl2 = 64;
        kem_keygen(pk, &pkl, sk, &skl);
        kem_enc(pk, pkl, ss, &ssl, ct, &ctl);
        kem_dec(sk, skl, ct, ctl, ss2, &ssl2);
        t[i] = cpucycles() - t[i];
    }
    print_results("keygen+enc+dec", t, RUNS);
    return 0;
}
