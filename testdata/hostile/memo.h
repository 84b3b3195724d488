/* Hostile addition to a test candidate (issue 36, "no repeated inputs"): a memo of outputs by
 * input. The library keeps the last outputs it computed, keyed by the whole input (a secret
 * key and message for sign, a secret key and ciphertext for dec), and returns a stored output
 * without doing the work when an input comes again. The KAT (distinct inputs) passes; it pays
 * only where the driver repeats an input. Marker: at exit it prints on stderr
 * `memo: tries=N hits=H` (lookups made, lookups answered from the memo), which the parent
 * keeps in the record's process entry. */
#include <stdio.h>
#include <string.h>

#define MEMO_SLOTS 4096
#define MEMO_KEY 256
#define MEMO_OUT 128

typedef struct {
    unsigned char key[MEMO_KEY];
    unsigned char out[MEMO_OUT];
    unsigned long long keylen, outlen;
    int used;
} memo_slot;

static memo_slot memo_table[MEMO_SLOTS];
static unsigned long memo_tries, memo_hits;

static unsigned long memo_index(const unsigned char *k, unsigned long long n) {
    unsigned long long h = 1469598103934665603ull;
    for (unsigned long long i = 0; i < n; i++) h = (h ^ k[i]) * 1099511628211ull;
    return (unsigned long)(h % MEMO_SLOTS);
}

/* The key a ‖ b in `key` (at most MEMO_KEY bytes); its length, 0 when too long to memoize. */
static unsigned long long memo_key(unsigned char *key, const unsigned char *a, unsigned long long an,
                                   const unsigned char *b, unsigned long long bn) {
    if (an + bn > MEMO_KEY) return 0;
    memcpy(key, a, an);
    memcpy(key + an, b, bn);
    return an + bn;
}

/* 1 and the stored output in `out` when the input was seen. */
static int memo_lookup(const unsigned char *a, unsigned long long an, const unsigned char *b,
                       unsigned long long bn, unsigned char *out, unsigned long long *outlen) {
    unsigned char key[MEMO_KEY];
    unsigned long long n = memo_key(key, a, an, b, bn);
    if (!n) return 0;
    memo_tries++;
    memo_slot *s = &memo_table[memo_index(key, n)];
    if (!s->used || s->keylen != n || memcmp(s->key, key, n) != 0) return 0;
    memo_hits++;
    memcpy(out, s->out, s->outlen);
    *outlen = s->outlen;
    return 1;
}

static void memo_store(const unsigned char *a, unsigned long long an, const unsigned char *b,
                       unsigned long long bn, const unsigned char *out, unsigned long long outlen) {
    unsigned char key[MEMO_KEY];
    unsigned long long n = memo_key(key, a, an, b, bn);
    if (!n || outlen > MEMO_OUT) return;
    memo_slot *s = &memo_table[memo_index(key, n)];
    memcpy(s->key, key, n);
    s->keylen = n;
    memcpy(s->out, out, outlen);
    s->outlen = outlen;
    s->used = 1;
}

__attribute__((destructor)) static void memo_report(void) {
    if (memo_tries) fprintf(stderr, "memo: tries=%lu hits=%lu\n", memo_tries, memo_hits);
}
