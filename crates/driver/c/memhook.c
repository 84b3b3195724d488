/* Allocation interposer of the lean driver executable `pqperf-driver` (linked into the binary
 * only, by build.rs): malloc, calloc, realloc, reallocarray, free, posix_memalign,
 * aligned_alloc, memalign, valloc and pvalloc are defined here and forward to the C library's
 * own implementations (glibc's __libc_* entry points), so calls from candidate libraries and
 * from the C library itself come through here. Outside the memory pass each function is one
 * relaxed atomic load and a tail call. Between pqperf_memhook_begin and pqperf_memhook_end
 * every block allocated is recorded with its requested size in a fixed open-addressing
 * table; freeing or reallocating a recorded block subtracts it, so the live-byte peak counts
 * only the operation's own allocations (blocks allocated before the pass and freed during it
 * are not subtracted). A full table counts the block as untracked (the peak is then an upper
 * bound). Read through pqperf_ffi::memprobe::HeapHook. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

struct pqperf_heap {
    uint64_t peak_bytes, allocations, live_bytes, untracked;
};

#define SLOTS (1u << 14)
#define TOMB ((uintptr_t)1)
static struct { uintptr_t p; uint64_t n; } table[SLOTS];
static int counting;
static volatile int lock;
static struct pqperf_heap st;

static void take(void) { while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE)) {} }
static void give(void) { __atomic_store_n(&lock, 0, __ATOMIC_RELEASE); }
static unsigned slot_of(uintptr_t p) { return (unsigned)((p >> 4) * 0x9E3779B97F4A7C15ull >> 50) & (SLOTS - 1); }

/* Records a live block of n bytes; `fresh` counts it as an allocation (a realloc that kept
 * its block is not one). */
static void track(void *ptr, size_t n, int fresh) {
    if (!ptr) return;
    uintptr_t p = (uintptr_t)ptr;
    take();
    if (fresh) st.allocations++;
    st.live_bytes += n;
    if (st.live_bytes > st.peak_bytes) st.peak_bytes = st.live_bytes;
    unsigned i = slot_of(p);
    for (unsigned k = 0; k < SLOTS; k++, i = (i + 1) & (SLOTS - 1)) {
        if (table[i].p == 0 || table[i].p == TOMB) { table[i].p = p; table[i].n = n; give(); return; }
    }
    st.untracked++;
    give();
}

static void add(void *ptr, size_t n) { track(ptr, n, 1); }

static void sub(void *ptr) {
    if (!ptr) return;
    uintptr_t p = (uintptr_t)ptr;
    take();
    unsigned i = slot_of(p);
    for (unsigned k = 0; k < SLOTS && table[i].p != 0; k++, i = (i + 1) & (SLOTS - 1)) {
        if (table[i].p == p) { st.live_bytes -= table[i].n; table[i].p = TOMB; break; }
    }
    give();
}

static int on(void) { return __atomic_load_n(&counting, __ATOMIC_RELAXED); }

void pqperf_memhook_begin(void) {
    take();
    for (unsigned i = 0; i < SLOTS; i++) table[i].p = 0;
    st = (struct pqperf_heap){0, 0, 0, 0};
    give();
    __atomic_store_n(&counting, 1, __ATOMIC_SEQ_CST);
}

void pqperf_memhook_end(struct pqperf_heap *out) {
    __atomic_store_n(&counting, 0, __ATOMIC_SEQ_CST);
    take();
    *out = st;
    give();
}

void *malloc(size_t n) {
    void *p = __libc_malloc(n);
    if (on()) add(p, n);
    return p;
}

void *calloc(size_t m, size_t n) {
    void *p = __libc_calloc(m, n);
    if (on() && p) add(p, m * n);
    return p;
}

void free(void *p) {
    if (on()) sub(p);
    __libc_free(p);
}

void *realloc(void *old, size_t n) {
    if (!on()) return __libc_realloc(old, n);
    if (old && n == 0) { sub(old); return __libc_realloc(old, n); }
    void *p = __libc_realloc(old, n);
    if (p) { sub(old); track(p, n, p != old); }
    return p;
}

void *reallocarray(void *old, size_t m, size_t n) {
    size_t t;
    if (__builtin_mul_overflow(m, n, &t)) { errno = ENOMEM; return NULL; }
    return realloc(old, t);
}

void *memalign(size_t al, size_t n) {
    void *p = __libc_memalign(al, n);
    if (on()) add(p, n);
    return p;
}

void *aligned_alloc(size_t al, size_t n) { return memalign(al, n); }

int posix_memalign(void **out, size_t al, size_t n) {
    if (al < sizeof(void *) || (al & (al - 1)) != 0) return EINVAL;
    int e = errno;
    void *p = __libc_memalign(al, n);
    if (!p) { errno = e; return ENOMEM; }
    if (on()) add(p, n);
    *out = p;
    return 0;
}

void *valloc(size_t n) {
    void *p = __libc_valloc(n);
    if (on()) add(p, n);
    return p;
}

void *pvalloc(size_t n) {
    void *p = __libc_pvalloc(n);
    if (on()) add(p, n);
    return p;
}
