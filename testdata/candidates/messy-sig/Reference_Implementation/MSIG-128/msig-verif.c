/*
 * msig-verif.c -- command-line tool of the pqperf test candidate messy-sig (a program with
 * main, as reference folders of submissions ship them): runs sig_verif-like steps once with a
 * fixed seed and prints the sizes. Not part of the library; pqperf must leave it out.
 */
#include <stdio.h>
#include <string.h>

#include "SIG_AlgorithmInstance.h"
#include "drng.h"

extern DRNG_ctx drng_algorithm;

int main(void)
{
    unsigned char seed[64];
    unsigned char pk[64], sk[96];
    unsigned long long pkl = sizeof pk, skl = sizeof sk;
    memset(seed, 7, sizeof seed);
    init_random_number(&drng_algorithm, seed, sizeof seed);
    if (sig_keygen(pk, &pkl, sk, &skl) != 0)
        return 1;
    printf("verif: pk %llu sk %llu\n", pkl, skl);
    return 0;
}
