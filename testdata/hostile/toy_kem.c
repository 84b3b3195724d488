/* A tiny real ICCS-API KEM test candidate for pqperf's measurement tests, with the harness
 * shim (ngcc_meta, ngcc_seed, ngcc_random) built in. Not a secure KEM: sk = random 32 bytes
 * followed by pk, pk = sk ^ 0x3c, ct = random, ss = a keyed mix of pk and ct. -DTOY_WORK=n:
 * a busy loop of n rounds in keygen, enc and dec. -DMEMO_DEC: dec answers a ciphertext it
 * has seen from a memo (testdata/hostile/memo.h, with its marker on stderr). -DMEMO_ENC: enc
 * stores ct → ss and dec answers from that memo (testdata/hostile/prep_memo.h). -DGARBAGE_DEC:
 * dec returns garbage at once in the timing driver (testdata/hostile/garbage_dec.h). */
#include <stdint.h>
#include <string.h>

#ifdef MEMO_DEC
#include "memo.h"
#endif
#ifdef MEMO_ENC
#include "prep_memo.h"
#endif
#ifdef GARBAGE_DEC
#include "garbage_dec.h"
#endif

#ifndef TOY_ID
#define TOY_ID "kem-90"
#endif
#ifndef TOY_INSTANCE
#define TOY_INSTANCE "toykem"
#endif
#ifndef TOY_WORK
#define TOY_WORK 0
#endif

typedef struct {
    uint32_t magic, abi, type, struct_size;
    char id[16], algorithm[64], instance[64], variant[32], source_dir[256], compiler[64],
        build_flags[128];
    uint64_t pk, sk, ct, ss;
} ngcc_meta_t;

static const ngcc_meta_t META = {0x4347474Eu, 1, 1, sizeof(ngcc_meta_t), TOY_ID, "ToyKem",
                                 TOY_INSTANCE, "Reference_Implementation", "toy", "gcc",
                                 "-O2 -fPIC ", 32, 64, 32, 32};

const ngcc_meta_t *ngcc_meta(void) { return &META; }
const char *ngcc_build_flags(void) { return "-O2 -fPIC "; }

static uint64_t state;
int ngcc_seed(const unsigned char *seed, unsigned long long len) {
    state = 1469598103934665603ull;
    for (unsigned long long i = 0; i < len; i++) state = (state ^ seed[i]) * 1099511628211ull;
    return 0;
}
static unsigned char rnd(void) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned char)(state >> 56);
}
int ngcc_random(unsigned char *out, unsigned long long bits) {
    for (unsigned long long i = 0; i < (bits + 7) / 8; i++) out[i] = rnd();
    return 0;
}

static void work(void) {
    volatile uint64_t x = 0;
    for (long i = 0; i < TOY_WORK; i++) x += (uint64_t)i * 2654435761u;
}

unsigned long long kem_get_pk_len_bytes(void) { return 32; }
unsigned long long kem_get_sk_len_bytes(void) { return 64; }
unsigned long long kem_get_ct_len_bytes(void) { return 32; }
unsigned long long kem_get_ss_len_bytes(void) { return 32; }

static void derive(const unsigned char *pk, const unsigned char *ct, unsigned char *ss) {
    for (int i = 0; i < 32; i++) ss[i] = (unsigned char)(pk[i] * 31 + ct[i] * 7 + ct[(i + 1) % 32]);
}

int kem_keygen(unsigned char *pk, unsigned long long *pkl, unsigned char *sk,
               unsigned long long *skl) {
    work();
    for (int i = 0; i < 32; i++) {
        sk[i] = rnd();
        pk[i] = sk[i] ^ 0x3c;
        sk[32 + i] = pk[i];
    }
    *pkl = 32;
    *skl = 64;
    return 0;
}

int kem_enc(unsigned char *pk, unsigned long long pkl, unsigned char *ss,
            unsigned long long *ssl, unsigned char *ct, unsigned long long *ctl) {
    if (pkl != 32) return -1;
    work();
    for (int i = 0; i < 32; i++) ct[i] = rnd();
    derive(pk, ct, ss);
    *ssl = 32;
    *ctl = 32;
#ifdef MEMO_ENC
    prep_memo_encapsulated(ct, 32, ss, 32);
#endif
    return 0;
}

int kem_dec(unsigned char *sk, unsigned long long skl, unsigned char *ct,
            unsigned long long ctl, unsigned char *ss, unsigned long long *ssl) {
    if (skl != 64 || ctl != 32) return -1;
#ifdef MEMO_DEC
    if (memo_lookup(sk, skl, ct, ctl, ss, ssl)) return 0;
#endif
#ifdef MEMO_ENC
    if (prep_memo_known_ct(ct, ctl, ss, ssl)) return 0;
#endif
#ifdef GARBAGE_DEC
    if (garbage_dec_now(ss, 32, ssl)) return 0;
#endif
    work();
    derive(sk + 32, ct, ss);
    *ssl = 32;
#ifdef MEMO_DEC
    memo_store(sk, skl, ct, ctl, ss, 32);
#endif
    return 0;
}
