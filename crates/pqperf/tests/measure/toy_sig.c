/* A tiny real ICCS-API signature "candidate" for pqperf's measurement tests, with the harness
 * shim (ngcc_meta, ngcc_seed) built in. Not a secure signature: sk is random, pk = sk ^ 0x5a,
 * sn = a keyed mix of sk and m that verify recomputes from pk.
 * Compile-time modes: -DTOY_SEGV_IN_SIGN, -DTOY_HANG_IN_SIGN, -DTOY_REJECT_VERIFY,
 * -DTOY_WORK=n (busy loop of n rounds per call, to make calls slower; a store-and-reload
 * loop, or with -DTOY_WORK_REGISTER a multiply chain in a register), -DTOY_ROUNDS (sign
 * repeats the busy loop a geometric number of rounds drawn from the DRNG, 4.27 on average,
 * like a rejection-sampling signer: a variable-time operation), -DTOY_NOOP (every
 * operation returns at once: the driver-overhead benchmark). */
#include <stdint.h>
#include <string.h>

#ifndef TOY_ID
#define TOY_ID "sign-90"
#endif
#ifndef TOY_INSTANCE
#define TOY_INSTANCE "toy"
#endif
#ifndef TOY_WORK
#define TOY_WORK 0
#endif

typedef struct {
    uint32_t magic, abi, type, struct_size;
    char id[16], algorithm[64], instance[64], variant[32], source_dir[256], compiler[64],
        build_flags[128];
    uint64_t pk, sk, sn;
} ngcc_meta_t;

static const ngcc_meta_t META = {0x4347474Eu, 1, 2, sizeof(ngcc_meta_t), TOY_ID, "Toy",
                                 TOY_INSTANCE, "Reference_Implementation", "toy", "gcc",
                                 "-O2 -fPIC ", 32, 32, 64};

const ngcc_meta_t *ngcc_meta(void) { return &META; }
const char *ngcc_build_flags(void) { return "-O2 -fPIC "; }

static uint64_t state;
int ngcc_seed(const unsigned char *seed, unsigned long long len) {
    state = 1469598103934665603ull;
    for (unsigned long long i = 0; i < len; i++) state = (state ^ seed[i]) * 1099511628211ull;
    return 0;
}
/* The shim's DRNG output, as `pqperf build` exports it (a library without it makes every
 * driver look it up in vain, which costs the C library's dlerror formatting). */
static unsigned char rnd(void);
int ngcc_random(unsigned char *out, unsigned long long bits) {
    for (unsigned long long i = 0; i < (bits + 7) / 8; i++) out[i] = rnd();
    return 0;
}
static unsigned char rnd(void) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned char)(state >> 56);
}
#ifdef TOY_WORK_REGISTER
/* A dependent multiply chain kept in a register (stored once): arithmetic-bound like most
 * cryptographic code, without the store-and-reload of the default loop, whose speed on a
 * shared VM switches between processes (store forwarding). */
static volatile uint64_t toy_sink;
static void work(void) {
    uint64_t x = 1;
    for (long i = 0; i < TOY_WORK; i++) x = (x * 0x2545F4914F6CDD1Dull) ^ (x >> 29) ^ (uint64_t)i;
    toy_sink = x;
}
#else
static void work(void) {
    volatile uint64_t x = 0;
    for (long i = 0; i < TOY_WORK; i++) x += (uint64_t)i * 2654435761u;
}
#endif

unsigned long long sig_get_pk_len_bytes(void) { return 32; }
unsigned long long sig_get_sk_len_bytes(void) { return 32; }
unsigned long long sig_get_sn_len_bytes(void) { return 64; }

int sig_keygen(unsigned char *pk, unsigned long long *pkl, unsigned char *sk,
               unsigned long long *skl) {
#ifdef TOY_NOOP
    (void)pk; (void)sk; *pkl = 32; *skl = 32; return 0;
#endif
    work();
    for (int i = 0; i < 32; i++) { sk[i] = rnd(); pk[i] = sk[i] ^ 0x5a; }
    *pkl = 32; *skl = 32;
    return 0;
}

static void mix(const unsigned char *key, const unsigned char *m, unsigned long long ml,
                unsigned char *out) {
    for (int i = 0; i < 64; i++) {
        unsigned char b = key[i % 32];
        for (unsigned long long j = (unsigned long long)i; j < ml; j += 64) b = (unsigned char)(b * 31 + m[j]);
        out[i] = b;
    }
}

int sig_sign(unsigned char *sk, unsigned long long skl, unsigned char *m, unsigned long long ml,
             unsigned char *sn, unsigned long long *snl) {
    (void)skl;
#ifdef TOY_NOOP
    (void)sk; (void)m; (void)ml; (void)sn; *snl = 64; return 0;
#endif
#ifdef TOY_SEGV_IN_SIGN
    *(volatile int *)0 = 1;
#endif
#ifdef TOY_HANG_IN_SIGN
    for (volatile int forever = 1; forever;) {}
#endif
#ifdef TOY_ROUNDS
    /* Another round while the DRNG's byte is below 196: P = 196/256, 1/(1 − P) = 4.27. */
    while (rnd() < 196) work();
#endif
    work();
    mix(sk, m, ml, sn);
    *snl = 64;
    return 0;
}

int sig_verify(unsigned char *pk, unsigned long long pkl, unsigned char *sn,
               unsigned long long snl, unsigned char *m, unsigned long long ml) {
    (void)pkl;
#ifdef TOY_NOOP
    (void)pk; (void)sn; (void)snl; (void)m; (void)ml; return 0;
#endif
    work();
    unsigned char sk[32], want[64];
    for (int i = 0; i < 32; i++) sk[i] = pk[i] ^ 0x5a;
    mix(sk, m, ml, want);
#ifdef TOY_REJECT_VERIFY
    want[0] ^= 1;
#endif
    return (snl == 64 && memcmp(want, sn, 64) == 0) ? 0 : -1;
}
