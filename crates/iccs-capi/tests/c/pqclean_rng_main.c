/*
 * pqclean_rng_main.c -- drives PQClean's own KAT generators (test/common/nistkatrng.c or
 * hqckatrng.c, compiled from the pinned registry copy at test time, never copied into this
 * repository) so that tests/pqclean_oracle.rs can compare them with pqperf's ports.
 * Prints one lowercase hex line per draw of the sizes given on the command line.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef USE_HQC
void hqc_kat_init(uint8_t *entropy_input, uint8_t *personalization_string, int security_strength);
#define KAT_INIT(e) hqc_kat_init((e), NULL, 256)
#else
void nist_kat_init(uint8_t *entropy_input, const uint8_t *personalization_string,
                   int security_strength);
#define KAT_INIT(e) nist_kat_init((e), NULL, 256)
#endif
int PQCLEAN_randombytes(uint8_t *output, size_t n);

int main(int argc, char **argv)
{
    uint8_t entropy[48], buf[4096];
    for (int i = 0; i < 48; i++)
        entropy[i] = (uint8_t)i;
    KAT_INIT(entropy);
    for (int a = 1; a < argc; a++) {
        size_t n = (size_t)strtoul(argv[a], NULL, 10);
        if (n > sizeof buf)
            return 2;
        PQCLEAN_randombytes(buf, n);
        for (size_t i = 0; i < n; i++)
            printf("%02x", buf[i]);
        printf("\n");
    }
    return 0;
}
