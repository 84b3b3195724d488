/*
 * auxfunc.h -- ICCS placeholder symmetric primitives (pqperf port, written from the
 * specification; not the official file). All lengths are in BITS; bit strings are MSB-first
 * (bit 0 is the 0x80 bit of byte 0).
 *
 * Return codes: 0 ok; -4 digest length not supported (also prints
 * "ERROR: Digestbitlen not in the limitation. " to stderr); -2 allocation failure and
 * -3 internal HMAC failure exist in the official API but are never produced by this port;
 * -1 (pqperf extension) a null pointer with a non-zero length.
 */
#ifndef AUXFUNC_H
#define AUXFUNC_H

#ifdef __cplusplus
extern "C" {
#endif

/* SM3 of the first msg_len bits of msg; digest_len must be 256; writes 32 bytes. */
int sm3hash(int digest_len, const unsigned char *msg, unsigned long long msg_len,
            unsigned char *digest);

/* HMAC-SM3 based hash; digest_len in {512, 768, 1024}; writes digest_len/8 bytes. */
int pseudohash(int digest_len, const unsigned char *msg, unsigned long long msg_len,
               unsigned char *digest);

/* KDF-SM3 counter mode; writes ceil(output_len/8) bytes, low unused bits of the last byte
 * cleared; output_len == 0 writes nothing. Documented limit: output_len < 2^40 - 2^8. */
int pseudoXOF(unsigned long long output_len, const unsigned char *msg,
              unsigned long long msg_len, unsigned char *output);

#ifdef __cplusplus
}
#endif

#endif /* AUXFUNC_H */
