/* pqperf hash/DRNG profiling wrappers (method.md section 10.3, ecosystem.md section 4.7).
 *
 * Linked into a *copy* of an instance library with `-Wl,--wrap=SYM` for every profiled
 * symbol SYM that the library's objects reference.  Each `__wrap_SYM` calls `__real_SYM`
 * unchanged (arguments and results pass through untouched, so the profiling build still
 * reproduces the KAT) and, while accounting is enabled and no other wrapped call is active
 * (depth counter), adds the call's ticks to the bucket of its call shape
 * (function family, input bits, output bits).
 *
 * Only the wrappers selected with -DPQPERF_WRAP_<SYM> are compiled, so a library that does
 * not reference a symbol gets no dangling `__real_` reference.
 *
 * Exported control interface (resolved by pqperf's profiling driver):
 *   const char *ngcc_hashprof_tick_source(void);
 *   uint64_t    ngcc_hashprof_ticks(void);
 *   void        ngcc_hashprof_enable(int on);
 *   void        ngcc_hashprof_reset(void);
 *   size_t      ngcc_hashprof_entries(struct ngcc_hashprof_entry *out, size_t max,
 *                                     uint64_t *overflow_calls);
 *   void        ngcc_hashprof_overhead(uint64_t n, double *outer, double *inner);
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define HP_EXPORT __attribute__((visibility("default"), used))

/* ---------------------------------------------------------------- tick source */
#if defined(__x86_64__) || defined(__i386__)
static inline uint64_t hp_ticks(void) {
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}
static const char hp_tick_source[] = "rdtsc";
#elif defined(__aarch64__)
static inline uint64_t hp_ticks(void) {
    uint64_t v;
    __asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v)::"memory");
    return v;
}
static const char hp_tick_source[] = "cntvct_el0";
#else
static inline uint64_t hp_ticks(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static const char hp_tick_source[] = "clock_gettime_ns";
#endif

/* ---------------------------------------------------------------- aggregation table */
#define HP_SLOTS 8192u
#define HP_FN_LEN 24

struct ngcc_hashprof_entry {
    char fn[HP_FN_LEN];
    uint64_t in_bits;
    uint64_t out_bits;
    uint64_t calls;
    uint64_t ticks;
};

struct hp_slot {
    uint32_t used;
    uint32_t fn;
    uint64_t in_bits;
    uint64_t out_bits;
    uint64_t calls;
    uint64_t ticks;
};

enum {
    HP_DRNG = 0,
    HP_PSEUDOHASH,
    HP_PSEUDOXOF,
    HP_SM3HASH,
    HP_SHAKE128,
    HP_SHAKE256,
    HP_SHA3_256,
    HP_SHA3_384,
    HP_SHA3_512,
    HP_SHA224,
    HP_SHA256,
    HP_SHA384,
    HP_SHA512,
    HP_AES128,
    HP_AES192,
    HP_AES256,
    HP_NOOP,
    HP_FN_COUNT
};

static const char *const hp_fn_names[HP_FN_COUNT] = {
    "drng",     "pseudohash", "pseudoXOF", "sm3hash", "shake128", "shake256",
    "sha3_256", "sha3_384",   "sha3_512",  "sha224",  "sha256",   "sha384",
    "sha512",   "aes128",     "aes192",    "aes256",  "noop",
};

static struct hp_slot hp_table[HP_SLOTS];
static uint32_t hp_order[HP_SLOTS]; /* slot indices in order of first occurrence */
static uint32_t hp_used;
static uint64_t hp_overflow;
static int hp_enabled;
static int hp_depth;

static inline uint64_t hp_mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static void hp_account(struct hp_slot *table, uint32_t *order, uint32_t *used,
                       uint64_t *overflow, uint32_t fn, uint64_t in_bits, uint64_t out_bits,
                       uint64_t ticks) {
    uint64_t h = hp_mix(hp_mix(hp_mix((uint64_t)fn + 0x9e3779b97f4a7c15ULL) ^ in_bits) ^ out_bits);
    for (uint32_t probe = 0; probe < HP_SLOTS; probe++) {
        struct hp_slot *s = &table[(h + probe) & (HP_SLOTS - 1)];
        if (!s->used) {
            s->used = 1;
            s->fn = fn;
            s->in_bits = in_bits;
            s->out_bits = out_bits;
            s->calls = 1;
            s->ticks = ticks;
            order[(*used)++] = (uint32_t)((h + probe) & (HP_SLOTS - 1));
            return;
        }
        if (s->fn == fn && s->in_bits == in_bits && s->out_bits == out_bits) {
            s->calls++;
            s->ticks += ticks;
            return;
        }
    }
    (*overflow)++;
}

/* One accounted call: depth guard, two tick reads, bookkeeping after the call. */
#define HP_CALL(FN, INB, OUTB, CALL)                                                   \
    do {                                                                               \
        if (!hp_enabled || hp_depth) {                                                 \
            CALL;                                                                      \
        } else {                                                                       \
            hp_depth++;                                                                \
            uint64_t hp_t0 = hp_ticks();                                               \
            CALL;                                                                      \
            uint64_t hp_t1 = hp_ticks();                                               \
            hp_depth--;                                                                \
            hp_account(hp_table, hp_order, &hp_used, &hp_overflow, (FN), (uint64_t)(INB), \
                       (uint64_t)(OUTB), hp_t1 - hp_t0);                               \
        }                                                                              \
    } while (0)

/* ---------------------------------------------------------------- control interface */
HP_EXPORT const char *ngcc_hashprof_tick_source(void) { return hp_tick_source; }
HP_EXPORT uint64_t ngcc_hashprof_ticks(void) { return hp_ticks(); }
HP_EXPORT void ngcc_hashprof_enable(int on) { hp_enabled = on ? 1 : 0; }
HP_EXPORT void ngcc_hashprof_reset(void) {
    memset(hp_table, 0, sizeof hp_table);
    hp_used = 0;
    hp_overflow = 0;
    hp_depth = 0;
}
HP_EXPORT size_t ngcc_hashprof_entries(struct ngcc_hashprof_entry *out, size_t max,
                                       uint64_t *overflow_calls) {
    size_t n = 0;
    for (uint32_t i = 0; i < hp_used && n < max; i++) {
        const struct hp_slot *s = &hp_table[hp_order[i]];
        memset(out[n].fn, 0, HP_FN_LEN);
        strncpy(out[n].fn, hp_fn_names[s->fn], HP_FN_LEN - 1);
        out[n].in_bits = s->in_bits;
        out[n].out_bits = s->out_bits;
        out[n].calls = s->calls;
        out[n].ticks = s->ticks;
        n++;
    }
    if (overflow_calls) *overflow_calls = hp_overflow;
    return n;
}

/* Wrapper self-measurement.  A no-op function is called n times directly and n times
 * through the same accounting path the wrappers use (into a private table).
 *   *outer = extra ticks per call seen by the caller (what the operation total gains),
 *   *inner = ticks per call charged to the (empty) wrapped call itself (the floor that
 *            every accounted call carries in its own ticks).
 * Each figure is the minimum over 7 rounds, so interrupts do not inflate it. */
__attribute__((noinline)) static void hp_noop(volatile uint64_t *sink) { (*sink)++; }

HP_EXPORT void ngcc_hashprof_overhead(uint64_t n, double *outer, double *inner) {
    static struct hp_slot table[HP_SLOTS];
    static uint32_t order[HP_SLOTS];
    uint32_t used;
    uint64_t overflow;
    volatile uint64_t sink = 0;
    void (*volatile fp)(volatile uint64_t *) = hp_noop;
    double best_outer = -1.0, best_inner = -1.0;
    if (n == 0) n = 1;
    for (int round = 0; round < 7; round++) {
        memset(table, 0, sizeof table);
        used = 0;
        overflow = 0;
        uint64_t a0 = hp_ticks();
        for (uint64_t i = 0; i < n; i++) fp(&sink);
        uint64_t a1 = hp_ticks();
        int depth = 0;
        for (uint64_t i = 0; i < n; i++) {
            if (depth) {
                fp(&sink);
            } else {
                depth++;
                uint64_t t0 = hp_ticks();
                fp(&sink);
                uint64_t t1 = hp_ticks();
                depth--;
                hp_account(table, order, &used, &overflow, HP_NOOP, 0, 0, t1 - t0);
            }
        }
        uint64_t a2 = hp_ticks();
        double direct = (double)(a1 - a0) / (double)n;
        double wrapped = (double)(a2 - a1) / (double)n;
        double o = wrapped - direct;
        double in = used ? (double)table[order[0]].ticks / (double)n : 0.0;
        if (best_outer < 0 || o < best_outer) best_outer = o;
        if (best_inner < 0 || in < best_inner) best_inner = in;
    }
    if (outer) *outer = best_outer < 0 ? 0.0 : best_outer;
    if (inner) *inner = best_inner < 0 ? 0.0 : best_inner;
}

/* ---------------------------------------------------------------- wrappers */
/* Pointer-typed context arguments are declared as void *: the calling convention is the
 * same and wrap.c then needs none of the candidates' headers. */

#define WRAP_INT4(SYM, FN, T1, T2, T3, T4, INB, OUTB)                                   \
    extern int __real_##SYM(T1 a, T2 b, T3 c, T4 d);                                    \
    int __wrap_##SYM(T1 a, T2 b, T3 c, T4 d);                                           \
    int __wrap_##SYM(T1 a, T2 b, T3 c, T4 d) {                                          \
        int r = 0;                                                                      \
        HP_CALL(FN, INB, OUTB, r = __real_##SYM(a, b, c, d));                           \
        return r;                                                                       \
    }
#define WRAP_INT3(SYM, FN, T1, T2, T3, INB, OUTB)                                       \
    extern int __real_##SYM(T1 a, T2 b, T3 c);                                          \
    int __wrap_##SYM(T1 a, T2 b, T3 c);                                                 \
    int __wrap_##SYM(T1 a, T2 b, T3 c) {                                                \
        int r = 0;                                                                      \
        HP_CALL(FN, INB, OUTB, r = __real_##SYM(a, b, c));                              \
        return r;                                                                       \
    }
#define WRAP_INT2(SYM, FN, T1, T2, INB, OUTB)                                           \
    extern int __real_##SYM(T1 a, T2 b);                                                \
    int __wrap_##SYM(T1 a, T2 b);                                                       \
    int __wrap_##SYM(T1 a, T2 b) {                                                      \
        int r = 0;                                                                      \
        HP_CALL(FN, INB, OUTB, r = __real_##SYM(a, b));                                 \
        return r;                                                                       \
    }
#define WRAP_V1(SYM, FN, T1, INB, OUTB)                                                 \
    extern void __real_##SYM(T1 a);                                                     \
    void __wrap_##SYM(T1 a);                                                            \
    void __wrap_##SYM(T1 a) { HP_CALL(FN, INB, OUTB, __real_##SYM(a)); }
#define WRAP_V2(SYM, FN, T1, T2, INB, OUTB)                                             \
    extern void __real_##SYM(T1 a, T2 b);                                               \
    void __wrap_##SYM(T1 a, T2 b);                                                      \
    void __wrap_##SYM(T1 a, T2 b) { HP_CALL(FN, INB, OUTB, __real_##SYM(a, b)); }
#define WRAP_V3(SYM, FN, T1, T2, T3, INB, OUTB)                                         \
    extern void __real_##SYM(T1 a, T2 b, T3 c);                                         \
    void __wrap_##SYM(T1 a, T2 b, T3 c);                                                \
    void __wrap_##SYM(T1 a, T2 b, T3 c) { HP_CALL(FN, INB, OUTB, __real_##SYM(a, b, c)); }
#define WRAP_V4(SYM, FN, T1, T2, T3, T4, INB, OUTB)                                     \
    extern void __real_##SYM(T1 a, T2 b, T3 c, T4 d);                                   \
    void __wrap_##SYM(T1 a, T2 b, T3 c, T4 d);                                          \
    void __wrap_##SYM(T1 a, T2 b, T3 c, T4 d) {                                         \
        HP_CALL(FN, INB, OUTB, __real_##SYM(a, b, c, d));                               \
    }

typedef unsigned long long ull;
typedef const unsigned char *cbytes;
typedef unsigned char *bytes;

/* ICCS placeholder helpers and DRNG (iccs-api-and-kat.md section 1.1, 2.1).
 * Shapes: pseudohash/sm3hash(d, m, l, o) -> (fn, l, d); pseudoXOF(d, m, l, o) -> (fn, l, d);
 * get_random_number(ctx, o, bits) -> (drng, 0, bits). */
#ifdef PQPERF_WRAP_sm3hash
WRAP_INT4(sm3hash, HP_SM3HASH, int, cbytes, ull, bytes, c, a)
#endif
#ifdef PQPERF_WRAP_pseudohash
WRAP_INT4(pseudohash, HP_PSEUDOHASH, int, cbytes, ull, bytes, c, a)
#endif
#ifdef PQPERF_WRAP_pseudoXOF
WRAP_INT4(pseudoXOF, HP_PSEUDOXOF, ull, cbytes, ull, bytes, c, a)
#endif
#ifdef PQPERF_WRAP_get_random_number
WRAP_INT3(get_random_number, HP_DRNG, void *, bytes, ull, 0, c)
#endif

/* PQClean (`nist`) instances: randombytes and the common Keccak/SHA-2/AES code
 * (common/fips202.h, sha2.h, aes.h).  Byte lengths are converted to bits. */
#ifdef PQPERF_WRAP_PQCLEAN_randombytes
WRAP_INT2(PQCLEAN_randombytes, HP_DRNG, bytes, size_t, 0, 8 * (ull)b)
#endif

#ifdef PQPERF_WRAP_shake128
WRAP_V4(shake128, HP_SHAKE128, bytes, size_t, cbytes, size_t, 8 * (ull)d, 8 * (ull)b)
#endif
#ifdef PQPERF_WRAP_shake128_absorb
WRAP_V3(shake128_absorb, HP_SHAKE128, void *, cbytes, size_t, 8 * (ull)c, 0)
#endif
#ifdef PQPERF_WRAP_shake128_squeezeblocks
WRAP_V3(shake128_squeezeblocks, HP_SHAKE128, bytes, size_t, void *, 0, 8 * 168 * (ull)b)
#endif
#ifdef PQPERF_WRAP_shake128_ctx_release
WRAP_V1(shake128_ctx_release, HP_SHAKE128, void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_shake128_ctx_clone
WRAP_V2(shake128_ctx_clone, HP_SHAKE128, void *, const void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_shake128_inc_init
WRAP_V1(shake128_inc_init, HP_SHAKE128, void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_shake128_inc_absorb
WRAP_V3(shake128_inc_absorb, HP_SHAKE128, void *, cbytes, size_t, 8 * (ull)c, 0)
#endif
#ifdef PQPERF_WRAP_shake128_inc_finalize
WRAP_V1(shake128_inc_finalize, HP_SHAKE128, void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_shake128_inc_squeeze
WRAP_V3(shake128_inc_squeeze, HP_SHAKE128, bytes, size_t, void *, 0, 8 * (ull)b)
#endif
#ifdef PQPERF_WRAP_shake128_inc_ctx_clone
WRAP_V2(shake128_inc_ctx_clone, HP_SHAKE128, void *, const void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_shake128_inc_ctx_release
WRAP_V1(shake128_inc_ctx_release, HP_SHAKE128, void *, 0, 0)
#endif

#ifdef PQPERF_WRAP_shake256
WRAP_V4(shake256, HP_SHAKE256, bytes, size_t, cbytes, size_t, 8 * (ull)d, 8 * (ull)b)
#endif
#ifdef PQPERF_WRAP_shake256_absorb
WRAP_V3(shake256_absorb, HP_SHAKE256, void *, cbytes, size_t, 8 * (ull)c, 0)
#endif
#ifdef PQPERF_WRAP_shake256_squeezeblocks
WRAP_V3(shake256_squeezeblocks, HP_SHAKE256, bytes, size_t, void *, 0, 8 * 136 * (ull)b)
#endif
#ifdef PQPERF_WRAP_shake256_ctx_release
WRAP_V1(shake256_ctx_release, HP_SHAKE256, void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_shake256_ctx_clone
WRAP_V2(shake256_ctx_clone, HP_SHAKE256, void *, const void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_shake256_inc_init
WRAP_V1(shake256_inc_init, HP_SHAKE256, void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_shake256_inc_absorb
WRAP_V3(shake256_inc_absorb, HP_SHAKE256, void *, cbytes, size_t, 8 * (ull)c, 0)
#endif
#ifdef PQPERF_WRAP_shake256_inc_finalize
WRAP_V1(shake256_inc_finalize, HP_SHAKE256, void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_shake256_inc_squeeze
WRAP_V3(shake256_inc_squeeze, HP_SHAKE256, bytes, size_t, void *, 0, 8 * (ull)b)
#endif
#ifdef PQPERF_WRAP_shake256_inc_ctx_clone
WRAP_V2(shake256_inc_ctx_clone, HP_SHAKE256, void *, const void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_shake256_inc_ctx_release
WRAP_V1(shake256_inc_ctx_release, HP_SHAKE256, void *, 0, 0)
#endif

#ifdef PQPERF_WRAP_sha3_256
WRAP_V3(sha3_256, HP_SHA3_256, bytes, cbytes, size_t, 8 * (ull)c, 256)
#endif
#ifdef PQPERF_WRAP_sha3_256_inc_init
WRAP_V1(sha3_256_inc_init, HP_SHA3_256, void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_sha3_256_inc_absorb
WRAP_V3(sha3_256_inc_absorb, HP_SHA3_256, void *, cbytes, size_t, 8 * (ull)c, 0)
#endif
#ifdef PQPERF_WRAP_sha3_256_inc_finalize
WRAP_V2(sha3_256_inc_finalize, HP_SHA3_256, bytes, void *, 0, 256)
#endif
#ifdef PQPERF_WRAP_sha3_256_inc_ctx_clone
WRAP_V2(sha3_256_inc_ctx_clone, HP_SHA3_256, void *, const void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_sha3_256_inc_ctx_release
WRAP_V1(sha3_256_inc_ctx_release, HP_SHA3_256, void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_sha3_384
WRAP_V3(sha3_384, HP_SHA3_384, bytes, cbytes, size_t, 8 * (ull)c, 384)
#endif
#ifdef PQPERF_WRAP_sha3_384_inc_init
WRAP_V1(sha3_384_inc_init, HP_SHA3_384, void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_sha3_384_inc_absorb
WRAP_V3(sha3_384_inc_absorb, HP_SHA3_384, void *, cbytes, size_t, 8 * (ull)c, 0)
#endif
#ifdef PQPERF_WRAP_sha3_384_inc_finalize
WRAP_V2(sha3_384_inc_finalize, HP_SHA3_384, bytes, void *, 0, 384)
#endif
#ifdef PQPERF_WRAP_sha3_384_inc_ctx_clone
WRAP_V2(sha3_384_inc_ctx_clone, HP_SHA3_384, void *, const void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_sha3_384_inc_ctx_release
WRAP_V1(sha3_384_inc_ctx_release, HP_SHA3_384, void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_sha3_512
WRAP_V3(sha3_512, HP_SHA3_512, bytes, cbytes, size_t, 8 * (ull)c, 512)
#endif
#ifdef PQPERF_WRAP_sha3_512_inc_init
WRAP_V1(sha3_512_inc_init, HP_SHA3_512, void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_sha3_512_inc_absorb
WRAP_V3(sha3_512_inc_absorb, HP_SHA3_512, void *, cbytes, size_t, 8 * (ull)c, 0)
#endif
#ifdef PQPERF_WRAP_sha3_512_inc_finalize
WRAP_V2(sha3_512_inc_finalize, HP_SHA3_512, bytes, void *, 0, 512)
#endif
#ifdef PQPERF_WRAP_sha3_512_inc_ctx_clone
WRAP_V2(sha3_512_inc_ctx_clone, HP_SHA3_512, void *, const void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_sha3_512_inc_ctx_release
WRAP_V1(sha3_512_inc_ctx_release, HP_SHA3_512, void *, 0, 0)
#endif

/* SHA-2: one-shot (out, in, inlen); inc_blocks(state, in, nblocks); inc_finalize(out, state,
 * in, inlen). Block sizes 512 bits (224/256) and 1024 bits (384/512). */
#ifdef PQPERF_WRAP_sha224
WRAP_V3(sha224, HP_SHA224, bytes, cbytes, size_t, 8 * (ull)c, 224)
#endif
#ifdef PQPERF_WRAP_sha224_inc_init
WRAP_V1(sha224_inc_init, HP_SHA224, void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_sha224_inc_ctx_clone
WRAP_V2(sha224_inc_ctx_clone, HP_SHA224, void *, const void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_sha224_inc_blocks
WRAP_V3(sha224_inc_blocks, HP_SHA224, void *, cbytes, size_t, 512 * (ull)c, 0)
#endif
#ifdef PQPERF_WRAP_sha224_inc_finalize
WRAP_V4(sha224_inc_finalize, HP_SHA224, bytes, void *, cbytes, size_t, 8 * (ull)d, 224)
#endif
#ifdef PQPERF_WRAP_sha224_inc_ctx_release
WRAP_V1(sha224_inc_ctx_release, HP_SHA224, void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_sha256
WRAP_V3(sha256, HP_SHA256, bytes, cbytes, size_t, 8 * (ull)c, 256)
#endif
#ifdef PQPERF_WRAP_sha256_inc_init
WRAP_V1(sha256_inc_init, HP_SHA256, void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_sha256_inc_ctx_clone
WRAP_V2(sha256_inc_ctx_clone, HP_SHA256, void *, const void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_sha256_inc_blocks
WRAP_V3(sha256_inc_blocks, HP_SHA256, void *, cbytes, size_t, 512 * (ull)c, 0)
#endif
#ifdef PQPERF_WRAP_sha256_inc_finalize
WRAP_V4(sha256_inc_finalize, HP_SHA256, bytes, void *, cbytes, size_t, 8 * (ull)d, 256)
#endif
#ifdef PQPERF_WRAP_sha256_inc_ctx_release
WRAP_V1(sha256_inc_ctx_release, HP_SHA256, void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_sha384
WRAP_V3(sha384, HP_SHA384, bytes, cbytes, size_t, 8 * (ull)c, 384)
#endif
#ifdef PQPERF_WRAP_sha384_inc_init
WRAP_V1(sha384_inc_init, HP_SHA384, void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_sha384_inc_ctx_clone
WRAP_V2(sha384_inc_ctx_clone, HP_SHA384, void *, const void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_sha384_inc_blocks
WRAP_V3(sha384_inc_blocks, HP_SHA384, void *, cbytes, size_t, 1024 * (ull)c, 0)
#endif
#ifdef PQPERF_WRAP_sha384_inc_finalize
WRAP_V4(sha384_inc_finalize, HP_SHA384, bytes, void *, cbytes, size_t, 8 * (ull)d, 384)
#endif
#ifdef PQPERF_WRAP_sha384_inc_ctx_release
WRAP_V1(sha384_inc_ctx_release, HP_SHA384, void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_sha512
WRAP_V3(sha512, HP_SHA512, bytes, cbytes, size_t, 8 * (ull)c, 512)
#endif
#ifdef PQPERF_WRAP_sha512_inc_init
WRAP_V1(sha512_inc_init, HP_SHA512, void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_sha512_inc_ctx_clone
WRAP_V2(sha512_inc_ctx_clone, HP_SHA512, void *, const void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_sha512_inc_blocks
WRAP_V3(sha512_inc_blocks, HP_SHA512, void *, cbytes, size_t, 1024 * (ull)c, 0)
#endif
#ifdef PQPERF_WRAP_sha512_inc_finalize
WRAP_V4(sha512_inc_finalize, HP_SHA512, bytes, void *, cbytes, size_t, 8 * (ull)d, 512)
#endif
#ifdef PQPERF_WRAP_sha512_inc_ctx_release
WRAP_V1(sha512_inc_ctx_release, HP_SHA512, void *, 0, 0)
#endif

/* AES (common/aes.h): keyexp(ctx, key); ecb(out, in, nblocks, ctx); ctr(out, outlen, iv, ctx). */
#ifdef PQPERF_WRAP_aes128_ecb_keyexp
WRAP_V2(aes128_ecb_keyexp, HP_AES128, void *, cbytes, 128, 0)
#endif
#ifdef PQPERF_WRAP_aes128_ctr_keyexp
WRAP_V2(aes128_ctr_keyexp, HP_AES128, void *, cbytes, 128, 0)
#endif
#ifdef PQPERF_WRAP_aes128_ecb
WRAP_V4(aes128_ecb, HP_AES128, bytes, cbytes, size_t, const void *, 128 * (ull)c, 128 * (ull)c)
#endif
#ifdef PQPERF_WRAP_aes128_ctr
WRAP_V4(aes128_ctr, HP_AES128, bytes, size_t, cbytes, const void *, 0, 8 * (ull)b)
#endif
#ifdef PQPERF_WRAP_aes128_ctx_release
WRAP_V1(aes128_ctx_release, HP_AES128, void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_aes192_ecb_keyexp
WRAP_V2(aes192_ecb_keyexp, HP_AES192, void *, cbytes, 192, 0)
#endif
#ifdef PQPERF_WRAP_aes192_ctr_keyexp
WRAP_V2(aes192_ctr_keyexp, HP_AES192, void *, cbytes, 192, 0)
#endif
#ifdef PQPERF_WRAP_aes192_ecb
WRAP_V4(aes192_ecb, HP_AES192, bytes, cbytes, size_t, const void *, 128 * (ull)c, 128 * (ull)c)
#endif
#ifdef PQPERF_WRAP_aes192_ctr
WRAP_V4(aes192_ctr, HP_AES192, bytes, size_t, cbytes, const void *, 0, 8 * (ull)b)
#endif
#ifdef PQPERF_WRAP_aes192_ctx_release
WRAP_V1(aes192_ctx_release, HP_AES192, void *, 0, 0)
#endif
#ifdef PQPERF_WRAP_aes256_ecb_keyexp
WRAP_V2(aes256_ecb_keyexp, HP_AES256, void *, cbytes, 256, 0)
#endif
#ifdef PQPERF_WRAP_aes256_ctr_keyexp
WRAP_V2(aes256_ctr_keyexp, HP_AES256, void *, cbytes, 256, 0)
#endif
#ifdef PQPERF_WRAP_aes256_ecb
WRAP_V4(aes256_ecb, HP_AES256, bytes, cbytes, size_t, const void *, 128 * (ull)c, 128 * (ull)c)
#endif
#ifdef PQPERF_WRAP_aes256_ctr
WRAP_V4(aes256_ctr, HP_AES256, bytes, size_t, cbytes, const void *, 0, 8 * (ull)b)
#endif
#ifdef PQPERF_WRAP_aes256_ctx_release
WRAP_V1(aes256_ctx_release, HP_AES256, void *, 0, 0)
#endif
