/*
 * iccs_crypthash.c -- the ICCS helpers as API_CryptHash hash instances (the ICCS baseline).
 *
 * Compile one shared library per instance with
 *   -DICCS_HELPER=ICCS_HELPER_SM3HASH|ICCS_HELPER_PSEUDOHASH|ICCS_HELPER_PSEUDOXOF
 *   -DDIGEST_BIT_LENGTH=<bits> -DALGORITHM_INSTANCE="\"<label>\""
 * and link libpqperf_iccs.a. CryptHash(bits, m, len_bits, out) calls the helper with the
 * instance's fixed output width; any other digest_len_bits returns -4 like the helpers do.
 */
#include "auxfunc.h"
#include "iccs_crypthash.h"

int CryptHash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits,
              unsigned char *digest)
{
    if (digest_len_bits != DIGEST_BIT_LENGTH)
        return -4;
#if ICCS_HELPER == ICCS_HELPER_SM3HASH
    return sm3hash(digest_len_bits, msg, msg_len_bits, digest);
#elif ICCS_HELPER == ICCS_HELPER_PSEUDOHASH
    return pseudohash(digest_len_bits, msg, msg_len_bits, digest);
#elif ICCS_HELPER == ICCS_HELPER_PSEUDOXOF
    return pseudoXOF((unsigned long long)digest_len_bits, msg, msg_len_bits, digest);
#else
#error "ICCS_HELPER must select sm3hash, pseudohash or pseudoXOF"
#endif
}
