/*
 * own_symbols.c -- a "candidate" that defines its own randombytes and drng_algorithm (as many
 * ICCS candidates do) and uses the ICCS helpers from libpqperf_iccs.a: must link without
 * multiple-definition errors, and its own definitions must be the ones used.
 */
#include <stdio.h>
#include <string.h>

#include "auxfunc.h"
#include "drng.h"

DRNG_ctx drng_algorithm;

int randombytes(unsigned char *x, unsigned long long xlen)
{
    return get_random_number(&drng_algorithm, x, 8 * xlen);
}

int main(void)
{
    unsigned char d[32];
    init_random_number(&drng_algorithm, (const unsigned char *)"", 0);
    randombytes(d, 32);
    for (int i = 0; i < 32; i++)
        printf("%02x", d[i]);
    printf("\n");
    sm3hash(256, (const unsigned char *)"abc", 24, d);
    for (int i = 0; i < 32; i++)
        printf("%02x", d[i]);
    printf("\n");
    return 0;
}
