/*
 * pqperf_icount.c -- a QEMU TCG plugin (plugin API version 1, qemu-user) that counts the guest
 * instructions executed inside one function of a dynamically loaded library, per call.
 *
 * pqperf compiles this file with the host C compiler (-shared -fPIC) and loads it with
 * `qemu-aarch64 -plugin <so>,ino=N,off=X,out=FILE[,sub=Y]`:
 *   ino  inode of the library file (as /proc/self/maps of the emulator shows it);
 *   off  offset of the counted function from the library's load base (hex);
 *   sub  optional second function (offset, hex): its instructions and calls inside the
 *        counted function are reported as well;
 *   out  the result file (relative to the working directory).
 *
 * How: qemu-user knows no symbols of a library loaded with dlopen, so the load base is found
 * from the system calls: after every guest mmap the emulator's own /proc/self/maps is read
 * until a mapping of the library's inode at file offset 0 appears; that mmap's return value
 * is the base. Every translation block gets an execution callback carrying its address,
 * its last instruction's address and its number of instructions. A block starting at the
 * function's entry, outside the function, enters it; the return address is the instruction
 * after the last one of the block executed just before (the call). Until a block starts at
 * that return address, every block executed counts all its instructions; the block at the
 * return address ends the call and writes nothing but the per-call line. Counting is at the
 * block granularity: exact unless an instruction faults in the middle of a block (a guest
 * signal), which the counted code does not do. Single-threaded guests only.
 *
 * The declarations below are pqperf's own, written from the documented plugin API; no QEMU
 * header is needed.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the plugin API (version 1) as used here ---- */
#define PQ_EXPORT __attribute__((visibility("default")))
typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t; /* first member: const char *target_name */
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_syscall_ret_cb_t)(qemu_plugin_id_t id, unsigned int vcpu_index,
                                                  int64_t num, int64_t ret);
extern void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
                                                  qemu_plugin_vcpu_tb_trans_cb_t cb);
extern void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
                                                 qemu_plugin_vcpu_udata_cb_t cb,
                                                 enum qemu_plugin_cb_flags flags, void *userdata);
extern size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
extern uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
extern struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
extern uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
extern void qemu_plugin_register_vcpu_syscall_ret_cb(qemu_plugin_id_t id,
                                                     qemu_plugin_vcpu_syscall_ret_cb_t cb);
extern void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb,
                                           void *userdata);
extern void qemu_plugin_outs(const char *string);

PQ_EXPORT int qemu_plugin_version = 1;

/* ---- state ---- */
#define AARCH64_MMAP 222
#define MAX_CALLS 4096

struct block {
    uint64_t vaddr; /* first instruction */
    uint64_t last;  /* last instruction */
    uint64_t n;     /* instructions */
};

static unsigned long long lib_ino;
static uint64_t fn_off, sub_off;
static bool have_sub;
static int out_fd = -1;
static bool resolved;
static uint64_t base, entry, sub_entry;
static uint64_t prev_last;            /* last instruction of the previous block executed */
static bool inside, in_sub;
static uint64_t ret_addr, sub_ret;
static uint64_t cur, cur_sub, cur_sub_calls;
static uint64_t calls[MAX_CALLS][3];
static size_t ncalls;
static bool overflow;

static void put(const char *s) {
    size_t n = strlen(s);
    while (out_fd >= 0 && n > 0) {
        ssize_t w = write(out_fd, s, n);
        if (w <= 0) return;
        s += w;
        n -= (size_t)w;
    }
}

/* Whether the emulator's address space maps the library's inode at file offset 0. */
static bool library_mapped(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    bool found = false;
    if (!f) return false;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned long long off = 0, ino = 0;
        char dev[32];
        if (sscanf(line, "%*x-%*x %*4s %llx %31s %llu", &off, dev, &ino) == 3 &&
            ino == lib_ino && off == 0)
            found = true;
    }
    fclose(f);
    return found;
}

static void on_syscall_ret(qemu_plugin_id_t id, unsigned int vcpu, int64_t num, int64_t ret) {
    (void)id;
    (void)vcpu;
    if (resolved || num != AARCH64_MMAP || ret < 0) return;
    if (library_mapped()) {
        char msg[128];
        resolved = true;
        base = (uint64_t)ret;
        entry = base + fn_off;
        sub_entry = base + sub_off;
        snprintf(msg, sizeof msg, "entry 0x%" PRIx64 "\n", fn_off);
        put(msg);
    }
}

static void on_block(unsigned int vcpu, void *udata) {
    const struct block *b = udata;
    (void)vcpu;
    if (!inside) {
        if (resolved && b->vaddr == entry) {
            inside = true;
            ret_addr = prev_last + 4;
            cur = b->n;
            cur_sub = 0;
            cur_sub_calls = 0;
            in_sub = false;
        } else {
            prev_last = b->last;
        }
        return;
    }
    if (b->vaddr == ret_addr) {
        if (ncalls < MAX_CALLS) {
            calls[ncalls][0] = cur;
            calls[ncalls][1] = cur_sub;
            calls[ncalls][2] = cur_sub_calls;
            ncalls++;
        } else {
            overflow = true;
        }
        inside = false;
        prev_last = b->last;
        return;
    }
    if (have_sub) {
        if (!in_sub && b->vaddr == sub_entry) {
            in_sub = true;
            sub_ret = prev_last + 4;
            cur_sub_calls++;
        } else if (in_sub && b->vaddr == sub_ret) {
            in_sub = false;
        }
        if (in_sub) cur_sub += b->n;
    }
    cur += b->n;
    prev_last = b->last;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    size_t n = qemu_plugin_tb_n_insns(tb);
    struct block *b = malloc(sizeof *b);
    (void)id;
    if (!b || n == 0) {
        free(b);
        return;
    }
    b->vaddr = qemu_plugin_tb_vaddr(tb);
    b->last = qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, n - 1));
    b->n = n;
    qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block, QEMU_PLUGIN_CB_NO_REGS, b);
}

static void on_exit_(qemu_plugin_id_t id, void *udata) {
    char msg[128];
    (void)id;
    (void)udata;
    if (!resolved) put("unresolved\n");
    for (size_t i = 0; i < ncalls; i++) {
        snprintf(msg, sizeof msg, "call %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", calls[i][0],
                 calls[i][1], calls[i][2]);
        put(msg);
    }
    if (inside) put("open\n");
    if (overflow) put("overflow\n");
    put("end\n");
    if (out_fd >= 0) close(out_fd);
    out_fd = -1;
}

PQ_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
                                  char **argv) {
    const char *out = NULL;
    const char *target = info ? *(const char *const *)info : NULL;
    bool have_ino = false, have_off = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "ino=", 4) == 0) {
            lib_ino = strtoull(a + 4, NULL, 10);
            have_ino = true;
        } else if (strncmp(a, "off=", 4) == 0) {
            fn_off = strtoull(a + 4, NULL, 16);
            have_off = true;
        } else if (strncmp(a, "sub=", 4) == 0) {
            sub_off = strtoull(a + 4, NULL, 16);
            have_sub = true;
        } else if (strncmp(a, "out=", 4) == 0) {
            out = a + 4;
        } else {
            qemu_plugin_outs("pqperf_icount: unknown argument\n");
            return -1;
        }
    }
    if (!out || !have_ino || !have_off) {
        qemu_plugin_outs("pqperf_icount: needs ino=, off= and out=\n");
        return -1;
    }
    out_fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out_fd < 0) {
        qemu_plugin_outs("pqperf_icount: cannot create the output file\n");
        return -1;
    }
    put("pqperf-icount 1\n");
    put("target ");
    put(target && strlen(target) < 64 ? target : "unknown");
    put("\n");
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_vcpu_syscall_ret_cb(id, on_syscall_ret);
    qemu_plugin_register_atexit_cb(id, on_exit_, NULL);
    return 0;
}
