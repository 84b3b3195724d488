/* Tiny real ICCS-API key exchange (two passes) and hash "candidates" for pqperf's driver tests,
 * with the harness shim built in. -DTOY_HASH builds the hash (CryptHash, 256-bit digest),
 * otherwise the key exchange. Not cryptography: shared secret = m1 XOR m2. */
#include <stdint.h>
#include <string.h>

typedef struct {
    uint32_t magic, abi, type, struct_size;
    char id[16], algorithm[64], instance[64], variant[32], source_dir[256], compiler[64],
        build_flags[128];
#ifdef TOY_HASH
    uint64_t digest_bits, digest_len;
#else
    uint64_t passes, pk, sk, sta, stb, ss, total_msg;
#endif
} ngcc_meta_t;

#ifdef TOY_HASH
static const ngcc_meta_t META = {0x4347474Eu, 1, 4, sizeof(ngcc_meta_t), "hash-90", "ToyHash",
                                 "toyhash", "Reference_Implementation", "toy", "gcc",
                                 "-O2 -fPIC ", 256, 32};
#else
static const ngcc_meta_t META = {0x4347474Eu, 1, 3, sizeof(ngcc_meta_t), "kex-90", "ToyKex",
                                 "toykex", "Reference_Implementation", "toy", "gcc",
                                 "-O2 -fPIC ", 2, 16, 16, 32, 32, 16, 64};
#endif
const ngcc_meta_t *ngcc_meta(void) { return &META; }

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

#ifdef TOY_HASH
int CryptHash(int bits, const unsigned char *m, unsigned long long mbits, unsigned char *d) {
    if (bits != 256) return -1;
    uint64_t h[4] = {1, 2, 3, 4};
    for (unsigned long long i = 0; i < mbits / 8; i++) h[i % 4] = (h[i % 4] ^ m[i]) * 1099511628211ull;
    memcpy(d, h, 32);
    return 0;
}
#else
typedef unsigned char uc;
typedef unsigned long long ull;
ull kex_get_passes_num(void) { return 2; }
ull kex_get_pk_len_bytes(void) { return 16; }
ull kex_get_sk_len_bytes(void) { return 16; }
ull kex_get_sta_len_bytes(void) { return 32; }
ull kex_get_stb_len_bytes(void) { return 32; }
ull kex_get_ss_len_bytes(void) { return 16; }
ull kex_get_total_msg_len_bytes(void) { return 64; }
static int init(uc *pk, ull *pkl, uc *sk, ull *skl, uc *st, ull *stl) {
    for (int i = 0; i < 16; i++) { sk[i] = rnd(); pk[i] = sk[i] ^ 0x33; }
    memset(st, 0, 32);
    *pkl = 16; *skl = 16; *stl = 16;
    return 0;
}
int kex_init_a(uc *pk, ull *pkl, uc *sk, ull *skl, uc *st, ull *stl) { return init(pk, pkl, sk, skl, st, stl); }
int kex_init_b(uc *pk, ull *pkl, uc *sk, ull *skl, uc *st, ull *stl) { return init(pk, pkl, sk, skl, st, stl); }
int kex_generate_pass1_msg_a(uc *ska, ull skal, uc *pkb, ull pkbl, uc *sta, ull *stal, uc *m1, ull *m1l) {
    (void)ska; (void)skal; (void)pkb; (void)pkbl;
    for (int i = 0; i < 16; i++) m1[i] = rnd();
    memcpy(sta, m1, 16); *stal = 16; *m1l = 16;
    return 0;
}
int kex_generate_pass2_msg_b(uc *skb, ull skbl, uc *pka, ull pkal, uc *m1, ull m1l, uc *stb, ull *stbl, uc *m2, ull *m2l) {
    (void)skb; (void)skbl; (void)pka; (void)pkal;
    if (m1l != 16) return -1;
    for (int i = 0; i < 16; i++) { m2[i] = rnd(); stb[i] = m1[i] ^ m2[i]; }
    *stbl = 16; *m2l = 16;
    return 1;
}
int kex_derive_ss_a(uc *ska, ull skal, uc *pkb, ull pkbl, uc *mb, ull mbl, uc *sta, ull stal, uc *ss, ull *ssl) {
    (void)ska; (void)skal; (void)pkb; (void)pkbl; (void)stal;
    if (!mb || mbl != 16) return -1;
    for (int i = 0; i < 16; i++) ss[i] = sta[i] ^ mb[i];
    *ssl = 16;
    return 0;
}
int kex_derive_ss_b(uc *skb, ull skbl, uc *pka, ull pkal, uc *ma, ull mal, uc *stb, ull stbl, uc *ss, ull *ssl) {
    (void)skb; (void)skbl; (void)pka; (void)pkal; (void)ma; (void)mal; (void)stbl;
    memcpy(ss, stb, 16);
    *ssl = 16;
    return 0;
}
#endif
