/* hash.c -- TOY-HASH-256: CryptHash over the ICCS pseudoXOF. */
#include "CryptHash_AlgorithmInstance.h"
#include "auxfunc.h"

int CryptHash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits,
              unsigned char *digest) {
    if (digest_len_bits != DIGEST_BIT_LENGTH) return -4;
    return pseudoXOF((unsigned long long)digest_len_bits, msg, msg_len_bits, digest);
}
