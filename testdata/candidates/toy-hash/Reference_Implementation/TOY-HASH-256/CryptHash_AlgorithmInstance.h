/* CryptHash_AlgorithmInstance.h -- pqperf test candidate TOY-HASH-256. */
#ifndef CRYPTHASH_ALGORITHM_INSTANCE_H
#define CRYPTHASH_ALGORITHM_INSTANCE_H
#define OUTPUT_BLANK_TEST_VECTORS 0
#define ALGORITHM_INSTANCE "TOY-HASH-256"
#define DIGEST_BIT_LENGTH 256
int CryptHash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits,
              unsigned char *digest);
#endif
