/* The driver's own footprint (issue 41): its baseline RSS is evidence, and most of it was file
 * pages that the kernel maps around each first touch (fault-around, 64 KiB) or that the
 * dynamic loader touched while relocating: of its own executable, of libgcc_s (which only
 * unwinding needs) and of the C library (≈ 1.0 MB at the first gate, of which the driver
 * touches ≈ 0.25 MB). Before Rust's start-up, this constructor drops the pages mapped so far
 * of every read-only segment (text, rodata, symbol and relocation tables) of those three
 * objects (MADV_DONTNEED: these segments are never written, so they come back from the page
 * cache as they are touched), and marks every other page of them MADV_RANDOM: the kernel's
 * fault-around, which MADV_RANDOM alone does not turn off, stops at a mapping's ends, and
 * pages with different flags are separate mappings, so each first touch maps one page
 * instead of 64 KiB. Writable segments (data, RELRO, bss) are left alone. So every page of
 * the C library in a record's RSS is one something touched, the candidate library's calls
 * into it included (4 KiB per page where the reference driver counts 64 KiB windows; see
 * docs/memory.md). The dynamic loader and the candidate library keep the kernel's default,
 * as in the reference driver. Not under an emulator (PQPERF_EMULATED set) or valgrind (its
 * preload in LD_PRELOAD), whose guest mappings are their own business; PQPERF_NO_LEAN
 * (never set by pqperf, whose children get a fixed environment) turns it off for a
 * comparison by hand. */
#define _GNU_SOURCE
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int lean_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    int *first = data;
    int own = *first;
    *first = 0;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    if (!own && !strstr(name, "libgcc_s.so") && !strstr(name, "/libc.so")) return 0;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W)) continue;
        uintptr_t a = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
        uintptr_t b = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz) & ~(page - 1);
        if (b <= a) continue;
        madvise((void *)a, b - a, MADV_DONTNEED);
        /* Fault-around stops at a mapping's ends: every other page marked random makes
         * each page a mapping of its own (neighbours with different flags never merge). */
        for (uintptr_t x = a; x < b; x += 2 * page)
            madvise((void *)x, page, MADV_RANDOM);
    }
    return 0;
}

__attribute__((constructor(101))) static void pqperf_lean(void) {
    const char *pre = getenv("LD_PRELOAD");
    if (getenv("PQPERF_EMULATED") || getenv("PQPERF_NO_LEAN") || (pre && strstr(pre, "vgpreload")))
        return;
    int first = 1;
    dl_iterate_phdr(lean_object, &first);
}
