/* Hostile addition to the toy signature (issue 36, "inputs nobody can know before their window
 * opens"): at its first keygen or sign call (a warm-up, before the parent's first gate, so
 * untimed) the library derives every timed input of its process the way pqperf's driver does,
 * from what it can read, computes the outputs (keygen: its own DRNG stream after each window's
 * reseeding; sign: the signature of every message) and then serves the timed calls from that
 * table without doing the work. Two sources:
 *
 * - `argv`: the process seed on the driver's command line (`--seed HEX` in /proc/self/cmdline),
 *   with the derivation of `seed+call-index v2` (messages: SHA-256(seed ‖ "message" ‖ k) with
 *   the input index XORed into the first 8 bytes; every window reseeded with
 *   window_seed(seed, index)).
 * - `public`: no seed on the command line: the public derivation of the process seeds
 *   (process_seed(i) = SHA-256("pqperf stream v1" ‖ 00 01 … 2f ‖ u64_le(i) ‖ k), i < 12) with
 *   the per-window derivation of `seed+call-index v3` (messages on the window's own base,
 *   SHA-256("pqperf window message v3" ‖ window seed ‖ k)).
 *
 * The window positions come from the positional argv (WARMUPS, TRIALS, ITERS, --samples), as
 * the driver lays out its input indices (pqperf_model::stream::CallLayout::input_index).
 * Marker at exit on stderr: `precompute: source=<argv|public|none> windows=W tries=T hits=H`
 * (timed-call lookups made and answered from the table). Include after the DRNG (`state`,
 * `rnd`, `work`, `mix`) of toy_sig.c; sig_keygen and sig_sign call precompute_keygen /
 * precompute_sign first.
 *
 * The same table for the toy hash and the toy key exchange's steps timed alone
 * (crates/pqperf/tests/measure/toy_kex_hash.c, -DPRECOMPUTE):
 *
 * - hash (precompute_hash, at its first CryptHash call, a warm-up): the digest of every message
 *   the process may hash — the fixed pattern (i · 131 + BYTES) mod 256 with the call index
 *   XORed into its head (what every call hashed when the message was fixed: index 0), and,
 *   from the argv seed or the public seeds, every window's message head
 *   SHA-256("pqperf window message v3" ‖ window seed ‖ k) with the call's input index XORed
 *   in (`seed+call-index v4`); a call whose message head is in the table gets its digest at
 *   once.
 * - key-exchange step (precompute_kex_init, at its first kex_init_a call, in the driver's
 *   preparation): the DRNG bytes kex_init_a draws in every exchange of every window (the toy's
 *   DRNG reseeded with window_seed(seed, index), 64 bytes drawn per exchange), from the argv
 *   seed or the public seeds; a timed init_a whose window and exchange are in the table takes
 *   its key from it (counted as tries/hits only when the process times init_a). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- SHA-256 --- */
typedef struct {
    uint32_t h[8];
    unsigned char buf[64];
    uint64_t len;
    unsigned n;
} pc_sha;

static const uint32_t PC_K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define PC_ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void pc_block(pc_sha *s, const unsigned char *p) {
    uint32_t w[64], a[8];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
               p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = PC_ROR(w[i - 15], 7) ^ PC_ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = PC_ROR(w[i - 2], 17) ^ PC_ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    memcpy(a, s->h, sizeof a);
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = a[7] + (PC_ROR(a[4], 6) ^ PC_ROR(a[4], 11) ^ PC_ROR(a[4], 25)) +
                      ((a[4] & a[5]) ^ (~a[4] & a[6])) + PC_K[i] + w[i];
        uint32_t t2 = (PC_ROR(a[0], 2) ^ PC_ROR(a[0], 13) ^ PC_ROR(a[0], 22)) +
                      ((a[0] & a[1]) ^ (a[0] & a[2]) ^ (a[1] & a[2]));
        memmove(a + 1, a, 7 * sizeof a[0]);
        a[4] += t1;
        a[0] = t1 + t2;
    }
    for (int i = 0; i < 8; i++) s->h[i] += a[i];
}

static void pc_init(pc_sha *s) {
    static const uint32_t H0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, H0, sizeof H0);
    s->len = 0;
    s->n = 0;
}

static void pc_update(pc_sha *s, const void *data, size_t len) {
    const unsigned char *p = data;
    s->len += len;
    while (len--) {
        s->buf[s->n++] = *p++;
        if (s->n == 64) {
            pc_block(s, s->buf);
            s->n = 0;
        }
    }
}

static void pc_final(pc_sha *s, unsigned char out[32]) {
    uint64_t bits = s->len * 8;
    unsigned char pad = 0x80, zero = 0, l[8];
    pc_update(s, &pad, 1);
    while (s->n != 56) pc_update(s, &zero, 1);
    for (int i = 0; i < 8; i++) l[i] = (unsigned char)(bits >> (56 - 8 * i));
    pc_update(s, l, 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (unsigned char)(s->h[i] >> 24);
        out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
        out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
        out[4 * i + 3] = (unsigned char)s->h[i];
    }
}

/* 48 bytes: block(0)[0..32] ‖ block(1)[0..16] of SHA-256(a ‖ b ‖ c ‖ u8(k)). */
static void pc_seed48(const void *a, size_t an, const void *b, size_t bn, const void *c, size_t cn,
                      unsigned char out[48]) {
    for (unsigned char k = 0; k < 2; k++) {
        pc_sha s;
        unsigned char d[32];
        pc_init(&s);
        pc_update(&s, a, an);
        pc_update(&s, b, bn);
        pc_update(&s, c, cn);
        pc_update(&s, &k, 1);
        pc_final(&s, d);
        memcpy(out + 32 * k, d, k ? 16 : 32);
    }
}

static void pc_le64(uint64_t x, unsigned char o[8]) {
    for (int i = 0; i < 8; i++) o[i] = (unsigned char)(x >> (8 * i));
}

/* The driver's derivations (pqperf_model::stream). */
static void pc_process_seed(uint64_t i, unsigned char out[48]) {
    unsigned char ref[48], le[8];
    for (int j = 0; j < 48; j++) ref[j] = (unsigned char)j;
    pc_le64(i, le);
    pc_seed48("pqperf stream v1", 16, ref, 48, le, 8, out);
}

static void pc_window_seed(const unsigned char seed[48], uint64_t index, unsigned char out[48]) {
    unsigned char le[8];
    pc_le64(index, le);
    pc_seed48("pqperf window v2", 16, seed, 48, le, 8, out);
}

/* 64 bytes: SHA-256(a ‖ b ‖ u8(k)) for k = 0, 1. */
static void pc_base64(const void *a, size_t an, const void *b, size_t bn, unsigned char out[64]) {
    for (unsigned char k = 0; k < 2; k++) {
        pc_sha s;
        pc_init(&s);
        pc_update(&s, a, an);
        pc_update(&s, b, bn);
        pc_update(&s, &k, 1);
        pc_final(&s, out + 32 * k);
    }
}

/* --- what the process can read: its command line --- */
static int pc_argv_seed(unsigned char seed[48], uint64_t *warmups, uint64_t *trials,
                        uint64_t *iters, int *samples) {
    static char buf[16384];
    FILE *f = fopen("/proc/self/cmdline", "rb");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *args[128];
    int argc = 0;
    for (size_t i = 0; i < n && argc < 128; i += strlen(buf + i) + 1) args[argc++] = buf + i;
    int have_seed = 0, lib = -1;
    *samples = 0;
    for (int i = 0; i < argc; i++) {
        size_t l = strlen(args[i]);
        if (lib < 0 && l > 3 && strcmp(args[i] + l - 3, ".so") == 0) lib = i;
        if (strcmp(args[i], "--samples") == 0) *samples = 1;
        if (strcmp(args[i], "--seed") == 0 && i + 1 < argc && strlen(args[i + 1]) == 96) {
            for (int j = 0; j < 48; j++) {
                unsigned v;
                sscanf(args[i + 1] + 2 * j, "%2x", &v);
                seed[j] = (unsigned char)v;
            }
            have_seed = 1;
        }
    }
    if (lib < 0 || lib + 6 >= argc) return -1;
    *trials = strtoull(args[lib + 3], 0, 10);
    *iters = strtoull(args[lib + 5], 0, 10);
    *warmups = strtoull(args[lib + 6], 0, 10);
    return have_seed;
}

/* --- the table --- */
#define PC_SLOTS (1u << 17)
/* Entries at most (half the slots: the probing always ends). */
#define PC_MAX (PC_SLOTS / 2)
typedef struct {
    unsigned char key[64];
    unsigned char out[64];
    int used;
} pc_slot;
static pc_slot *pc_table;
static unsigned long pc_tries, pc_hits, pc_windows, pc_entries;
static const char *pc_source = "none";
static int pc_done, pc_done_kg, pc_done_sg;

static pc_slot *pc_find(const unsigned char key[64]) {
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < 64; i++) h = (h ^ key[i]) * 1099511628211ull;
    for (unsigned p = (unsigned)(h % PC_SLOTS);; p = (p + 1) % PC_SLOTS) {
        pc_slot *s = &pc_table[p];
        if (!s->used || memcmp(s->key, key, 64) == 0) return s;
    }
}

/* Keygen entries are keyed by (window seed ‖ u64 call in window), sign entries by message. */
static void pc_key_kg(const unsigned char w[48], uint64_t c, unsigned char key[64]) {
    memset(key, 0, 64);
    memcpy(key, w, 48);
    pc_le64(c, key + 48);
    key[63] = 0x4b; /* never a message of the table's sign entries */
}

static uint64_t pc_state_of(const unsigned char *seed, unsigned long long len) {
    uint64_t st = 1469598103934665603ull;
    for (unsigned long long i = 0; i < len; i++) st = (st ^ seed[i]) * 1099511628211ull;
    return st;
}

typedef void (*pc_sign_fn)(const unsigned char *sk, const unsigned char m[64], unsigned char sn[64]);

/* Fills the table for every timed window of every candidate seed. */
static void pc_fill(int keygen, const unsigned char *sk, pc_sign_fn sign) {
    pc_done = 1;
    if (keygen)
        pc_done_kg = 1;
    else
        pc_done_sg = 1;
    unsigned char argv_seed[48];
    uint64_t warmups = 0, trials = 0, iters = 0;
    int samples = 0;
    int r = pc_argv_seed(argv_seed, &warmups, &trials, &iters, &samples);
    if (r < 0 || trials == 0 || iters == 0) return;
    if (!pc_table) pc_table = calloc(PC_SLOTS, sizeof(pc_slot));
    if (!pc_table) return;
    uint64_t sc = samples ? (iters < 400 ? iters : 400) : 0;
    uint64_t block = trials * sc, first = warmups + trials * iters;
    int seeds = r == 1 ? 1 : 12;
    pc_source = r == 1 ? "argv" : "public";
    pc_windows = 0;
    for (int i = 0; i < seeds; i++) {
        unsigned char seed[48], base[64];
        if (r == 1)
            memcpy(seed, argv_seed, 48);
        else
            pc_process_seed((uint64_t)i, seed);
        if (r == 1) pc_base64(seed, 48, "message", 7, base);
        for (uint64_t t = 0; t < 2 * trials; t++) {
            uint64_t p = t < trials ? warmups + t * iters : first + (t - trials) * sc;
            uint64_t calls = t < trials ? iters : sc;
            if (!calls) continue;
            uint64_t idx = p < first ? p + block : (p - first < block ? p - first : p);
            unsigned char w[48];
            pc_window_seed(seed, idx, w);
            if (r != 1) pc_base64("pqperf window message v3", 24, w, 48, base);
            pc_windows++;
            uint64_t st = pc_state_of(w, 48);
            for (uint64_t c = 0; c < calls && pc_entries < PC_MAX; c++) {
                unsigned char key[64];
                pc_entries++;
                pc_slot *s;
                if (keygen) {
                    pc_key_kg(w, c, key);
                    s = pc_find(key);
                    for (int j = 0; j < 32; j++) {
                        st = st * 6364136223846793005ull + 1442695040888963407ull;
                        s->out[j] = (unsigned char)(st >> 56);
                        s->out[32 + j] = s->out[j] ^ 0x5a;
                    }
                } else {
                    memcpy(key, base, 64);
                    unsigned char le[8];
                    pc_le64(idx + c, le);
                    for (int j = 0; j < 8; j++) key[j] ^= le[j];
                    s = pc_find(key);
                    sign(sk, key, s->out);
                }
                memcpy(s->key, key, 64);
                s->used = 1;
            }
        }
    }
}

/* Keygen: the window the DRNG was last seeded for and the call within it. */
static unsigned char pc_wseed[48];
static uint64_t pc_call;

static void precompute_seeded(const unsigned char *seed, unsigned long long len) {
    if (len == 48) memcpy(pc_wseed, seed, 48);
    pc_call = 0;
}

/* 1 (pk, sk written) when this keygen call was precomputed. */
static int precompute_keygen(unsigned char *pk, unsigned char *sk) {
    if (!pc_done_kg) {
        pc_fill(1, 0, 0);
        return 0; /* the first call (a warm-up) is honest */
    }
    if (!pc_table) return 0;
    unsigned char key[64];
    pc_key_kg(pc_wseed, pc_call++, key);
    pc_tries++;
    pc_slot *s = pc_find(key);
    if (!s->used) return 0;
    pc_hits++;
    memcpy(sk, s->out, 32);
    memcpy(pk, s->out + 32, 32);
    /* Keep the DRNG where an honest keygen leaves it. */
    for (int j = 0; j < 32; j++) rnd();
    return 1;
}

/* 1 (sn written) when this message's signature was precomputed. */
static int precompute_sign(const unsigned char *sk, const unsigned char *m, unsigned long long ml,
                           unsigned char *sn, pc_sign_fn sign) {
    if (!pc_done_sg) {
        pc_fill(0, sk, sign);
        return 0;
    }
    if (!pc_table || ml != 64) return 0;
    pc_tries++;
    pc_slot *s = pc_find(m);
    if (!s->used) return 0;
    pc_hits++;
    memcpy(sn, s->out, 64);
    return 1;
}

/* --- hash and key-exchange steps (toy_kex_hash.c) --- */
typedef void (*pc_hash_fn)(const unsigned char *m, unsigned long long len, unsigned char d[32]);

/* The positional OP and BYTES after the library on the command line ("" / 0 when absent). */
static void pc_argv_op(char op[16], uint64_t *bytes) {
    static char buf[16384];
    op[0] = 0;
    *bytes = 0;
    FILE *f = fopen("/proc/self/cmdline", "rb");
    if (!f) return;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *args[128];
    int argc = 0;
    for (size_t i = 0; i < n && argc < 128; i += strlen(buf + i) + 1) args[argc++] = buf + i;
    for (int i = 0; i + 2 < argc; i++) {
        size_t l = strlen(args[i]);
        if (l > 3 && strcmp(args[i] + l - 3, ".so") == 0) {
            snprintf(op, 16, "%s", args[i + 1]);
            *bytes = strtoull(args[i + 2], 0, 10);
            return;
        }
    }
}

/* Every window (first input index, calls) of a process laid out as the driver does. */
typedef struct {
    uint64_t idx, calls;
} pc_win;

static int pc_windows_of(uint64_t warmups, uint64_t trials, uint64_t iters, int samples,
                         pc_win *out, int max) {
    uint64_t sc = samples ? (iters < 400 ? iters : 400) : 0;
    uint64_t block = trials * sc, first = warmups + trials * iters;
    int k = 0;
    if (warmups && k < max) out[k++] = (pc_win){block, warmups};
    for (uint64_t t = 0; t < 2 * trials && k < max; t++) {
        uint64_t p = t < trials ? warmups + t * iters : first + (t - trials) * sc;
        uint64_t calls = t < trials ? iters : sc;
        if (!calls) continue;
        uint64_t idx = p < first ? p + block : (p - first < block ? p - first : p);
        out[k++] = (pc_win){idx, calls};
    }
    return k;
}

static unsigned char *pc_msg;
static uint64_t pc_msg_len;

/* Adds the digest of the message with head `head` (call index n XORed in) to the table. */
static void pc_add_hash(const unsigned char head[64], uint64_t n, pc_hash_fn hash) {
    if (pc_entries >= PC_MAX) return;
    unsigned char key[64] = {0}, le[8];
    uint64_t k = pc_msg_len < 64 ? pc_msg_len : 64;
    memcpy(key, head, k);
    pc_le64(n, le);
    for (uint64_t j = 0; j < 8 && j < k; j++) key[j] ^= le[j];
    pc_slot *s = pc_find(key);
    if (s->used) return;
    memcpy(pc_msg, key, k);
    hash(pc_msg, pc_msg_len, s->out);
    memcpy(s->key, key, 64);
    s->used = 1;
    pc_entries++;
}

static int pc_done_hash;

static void pc_fill_hash(uint64_t len, pc_hash_fn hash) {
    pc_done = pc_done_hash = 1;
    unsigned char argv_seed[48];
    uint64_t warmups = 0, trials = 0, iters = 0;
    int samples = 0;
    int r = pc_argv_seed(argv_seed, &warmups, &trials, &iters, &samples);
    if (r < 0 || trials == 0 || iters == 0) return;
    if (!pc_table) pc_table = calloc(PC_SLOTS, sizeof(pc_slot));
    pc_msg = malloc(len ? len : 1);
    if (!pc_table || !pc_msg) return;
    pc_msg_len = len;
    for (uint64_t i = 0; i < len; i++) pc_msg[i] = (unsigned char)((i * 131 + len) % 256);
    unsigned char fixed[64] = {0};
    memcpy(fixed, pc_msg, len < 64 ? len : 64);
    pc_source = r == 1 ? "argv" : "public";
    pc_win w[40];
    int nw = pc_windows_of(warmups, trials, iters, samples, w, 40);
    /* The fixed message, every call index (the reference protocol's order). */
    uint64_t total = warmups + trials * iters + trials * (samples ? (iters < 400 ? iters : 400) : 0) + 1;
    for (uint64_t n = 0; n < total; n++) pc_add_hash(fixed, n, hash);
    int seeds = r == 1 ? 1 : 12;
    for (int i = 0; i < seeds; i++) {
        unsigned char seed[48];
        if (r == 1)
            memcpy(seed, argv_seed, 48);
        else
            pc_process_seed((uint64_t)i, seed);
        for (int k = 0; k < nw; k++) {
            unsigned char ws[48], base[64];
            pc_window_seed(seed, w[k].idx, ws);
            pc_base64("pqperf window message v3", 24, ws, 48, base);
            pc_windows++;
            for (uint64_t c = 0; c < w[k].calls; c++) pc_add_hash(base, w[k].idx + c, hash);
        }
    }
    memcpy(pc_msg, fixed, len < 64 ? len : 64);
}

/* 1 (d written) when this message's digest was precomputed. */
static int precompute_hash(const unsigned char *m, unsigned long long len, unsigned char *d,
                           pc_hash_fn hash) {
    if (!pc_done_hash) {
        pc_fill_hash(len, hash);
        return 0; /* the first call (a warm-up) is honest */
    }
    if (!pc_table || !pc_msg || len != pc_msg_len) return 0;
    unsigned char key[64] = {0};
    memcpy(key, m, len < 64 ? len : 64);
    pc_tries++;
    pc_slot *s = pc_find(key);
    if (!s->used) return 0;
    pc_hits++;
    memcpy(d, s->out, 32);
    return 1;
}

/* Key exchange: init_a's 16 DRNG bytes of exchange c of the window with DRNG seed w. */
static int pc_done_kex, pc_kex_timed;

static void pc_fill_kex(void) {
    pc_done = pc_done_kex = 1;
    char op[16];
    uint64_t bytes;
    pc_argv_op(op, &bytes);
    pc_kex_timed = strcmp(op, "init_a") == 0;
    unsigned char argv_seed[48];
    uint64_t warmups = 0, trials = 0, iters = 0;
    int samples = 0;
    int r = pc_argv_seed(argv_seed, &warmups, &trials, &iters, &samples);
    if (r < 0 || trials == 0 || iters == 0) return;
    if (!pc_table) pc_table = calloc(PC_SLOTS, sizeof(pc_slot));
    if (!pc_table) return;
    pc_source = r == 1 ? "argv" : "public";
    pc_win w[40];
    /* A step timed alone has no sampled trials. */
    int nw = pc_windows_of(warmups, trials, iters, 0, w, 40);
    int seeds = r == 1 ? 1 : 12;
    for (int i = 0; i < seeds; i++) {
        unsigned char seed[48];
        if (r == 1)
            memcpy(seed, argv_seed, 48);
        else
            pc_process_seed((uint64_t)i, seed);
        for (int k = 0; k < nw; k++) {
            unsigned char ws[48];
            pc_window_seed(seed, w[k].idx, ws);
            pc_windows++;
            uint64_t st = pc_state_of(ws, 48);
            for (uint64_t c = 0; c < w[k].calls && pc_entries < PC_MAX; c++) {
                unsigned char key[64];
                pc_key_kg(ws, c, key);
                pc_slot *s = pc_find(key);
                for (int j = 0; j < 64; j++) {
                    st = st * 6364136223846793005ull + 1442695040888963407ull;
                    if (j < 16) s->out[j] = (unsigned char)(st >> 56);
                }
                memcpy(s->key, key, 64);
                s->used = 1;
                pc_entries++;
            }
        }
    }
}

/* 1 (sk written, the DRNG moved on as an honest init would) when this init_a was precomputed. */
static int precompute_kex_init(unsigned char sk[16]) {
    if (!pc_done_kex) {
        pc_fill_kex();
        return 0; /* the preparation's exchange is honest */
    }
    if (!pc_table) return 0;
    unsigned char key[64];
    pc_key_kg(pc_wseed, pc_call++, key);
    if (pc_kex_timed) pc_tries++;
    pc_slot *s = pc_find(key);
    if (!s->used) return 0;
    if (pc_kex_timed) pc_hits++;
    memcpy(sk, s->out, 16);
    for (int j = 0; j < 16; j++) rnd();
    return 1;
}

__attribute__((destructor)) static void precompute_report(void) {
    if (pc_done)
        fprintf(stderr, "precompute: source=%s windows=%lu tries=%lu hits=%lu\n", pc_source,
                pc_windows, pc_tries, pc_hits);
}
