/*
 * iccs_crypthash.h -- instance header of the ICCS baseline hash instances (plays the role of
 * CryptHash_AlgorithmInstance.h). The build passes ICCS_HELPER, DIGEST_BIT_LENGTH and
 * ALGORITHM_INSTANCE with -D; see iccs_crypthash.c.
 */
#ifndef ICCS_CRYPTHASH_H
#define ICCS_CRYPTHASH_H

#define ICCS_HELPER_SM3HASH 1
#define ICCS_HELPER_PSEUDOHASH 2
#define ICCS_HELPER_PSEUDOXOF 3

#ifndef ICCS_HELPER
#define ICCS_HELPER ICCS_HELPER_PSEUDOXOF
#endif
#ifndef DIGEST_BIT_LENGTH
#define DIGEST_BIT_LENGTH 256
#endif
#ifndef ALGORITHM_INSTANCE
#define ALGORITHM_INSTANCE "pseudoXOF-256"
#endif
#ifndef OUTPUT_BLANK_TEST_VECTORS
#define OUTPUT_BLANK_TEST_VECTORS 0
#endif

#ifdef __cplusplus
extern "C" {
#endif

int CryptHash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits,
              unsigned char *digest);

#ifdef __cplusplus
}
#endif

#endif /* ICCS_CRYPTHASH_H */
