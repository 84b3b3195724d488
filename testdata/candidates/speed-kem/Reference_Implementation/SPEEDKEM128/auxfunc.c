/*
 * auxfunc.c -- the pqperf test candidate speed-kem ships its own helper file, as many
 * submissions do (a modified copy). It is NOT the ICCS placeholder: each output byte is an
 * FNV-1a hash of (counter, message bits), enough for a test of which helpers a library links.
 * The library compiles it and links it before the ICCS provider, so these definitions win.
 */
#include "auxfunc.h"

static void fnv_expand(const unsigned char *msg, unsigned long long msg_len_bits,
                       unsigned char *out, unsigned long long out_bytes)
{
    unsigned long long n = (msg_len_bits + 7) / 8;
    for (unsigned long long i = 0; i < out_bytes; i++) {
        unsigned int h = 2166136261u ^ (unsigned int)i;
        for (unsigned long long j = 0; j < n; j++) {
            h ^= msg[j];
            h *= 16777619u;
        }
        out[i] = (unsigned char)(h >> 24);
    }
}

int sm3hash(int digest_len, const unsigned char *msg, unsigned long long msg_len,
            unsigned char *digest)
{
    if (digest_len != 256)
        return -4;
    fnv_expand(msg, msg_len, digest, 32);
    return 0;
}

int pseudohash(int digest_len, const unsigned char *msg, unsigned long long msg_len,
               unsigned char *digest)
{
    if (digest_len != 512 && digest_len != 768 && digest_len != 1024)
        return -4;
    fnv_expand(msg, msg_len, digest, (unsigned long long)digest_len / 8);
    return 0;
}

int pseudoXOF(unsigned long long output_len, const unsigned char *msg,
              unsigned long long msg_len, unsigned char *output)
{
    fnv_expand(msg, msg_len, output, (output_len + 7) / 8);
    return 0;
}
