/* An emulated MPX bounds table, in software: what bndstx and bndldx did, written out.
 *
 * Layout as MPX's: a bounds directory with one entry per 1 MiB of address space (2^27 entries for
 * 47-bit user addresses, reserved with MAP_NORESERVE so that only touched pages cost memory), each
 * pointing to a bounds table of 32-byte entries, one per 8-byte pointer slot of that 1 MiB
 * (4 MiB per table), mapped lazily on the first store into the region, as the kernel did on a
 * #BR for a missing table. An entry holds the lower bound, the upper bound and the pointer value
 * it was stored with.
 *
 * emu_stx(slot, ptr, lb, ub): three separate stores, not atomic (as MPX's bndstx).
 * emu_ldx(slot, ptr, &lb, &ub): three separate loads, the entry's pointer first; if it is not the
 * pointer just loaded from the slot, the bounds are INIT (everything allowed), as bndldx did: that is
 * what makes the multithreading race give false negatives, and the torn entry false positives.
 * emu_release(p, size): unmap the tables that cover [p, p+size) (the kernel freed bounds tables
 * when their region was unmapped). */
#ifndef CB_MPXEMU_H
#define CB_MPXEMU_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

typedef struct { uintptr_t lb, ub, ptr, reserved; } emu_entry;

#define EMU_REGION_SHIFT 20
#define EMU_DIR_ENTRIES (1ul << (47 - EMU_REGION_SHIFT))
#define EMU_TABLE_BYTES ((1ul << EMU_REGION_SHIFT) / 8 * sizeof(emu_entry))

static emu_entry **emu_dir;
static long emu_tables;            /* tables mapped so far (allocations, as MPX's kernel made) */

static void emu_init(void) {
    emu_dir = mmap(NULL, EMU_DIR_ENTRIES * sizeof(void *), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (emu_dir == MAP_FAILED) { perror("emulated MPX: bounds directory"); exit(3); }
}

static __attribute__((noinline)) emu_entry *emu_new_table(uintptr_t region) {
    emu_entry *t = mmap(NULL, EMU_TABLE_BYTES, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (t == MAP_FAILED) { perror("emulated MPX: bounds table"); exit(3); }
    emu_tables++;
    __atomic_store_n(&emu_dir[region], t, __ATOMIC_RELEASE);
    return t;
}

static inline emu_entry *emu_entry_of(const void *slot, int create) {
    uintptr_t a = (uintptr_t)slot;
    emu_entry *t = __atomic_load_n(&emu_dir[a >> EMU_REGION_SHIFT], __ATOMIC_ACQUIRE);
    if (__builtin_expect(t == NULL, 0)) {
        if (!create) return NULL;
        t = emu_new_table(a >> EMU_REGION_SHIFT);
    }
    return &t[(a & ((1ul << EMU_REGION_SHIFT) - 1)) >> 3];
}

static inline void emu_stx(const void *slot, const void *ptr, uintptr_t lb, uintptr_t ub) {
    emu_entry *e = emu_entry_of(slot, 1);
    __atomic_store_n(&e->lb, lb, __ATOMIC_RELAXED);
    __atomic_store_n(&e->ub, ub, __ATOMIC_RELAXED);
    __atomic_store_n(&e->ptr, (uintptr_t)ptr, __ATOMIC_RELAXED);
}

static inline void emu_ldx(const void *slot, const void *ptr, uintptr_t *lb, uintptr_t *ub) {
    emu_entry *e = emu_entry_of(slot, 0);
    uintptr_t l = 0, u = ~(uintptr_t)0;            /* INIT bounds */
    /* the entry's pointer first: only when it is the pointer just loaded are its bounds used */
    if (e && __atomic_load_n(&e->ptr, __ATOMIC_RELAXED) == (uintptr_t)ptr) {
        l = __atomic_load_n(&e->lb, __ATOMIC_RELAXED);
        u = __atomic_load_n(&e->ub, __ATOMIC_RELAXED);
    }
    *lb = l;
    *ub = u;
}

static __attribute__((unused)) void emu_release(const void *p, size_t size) {
    uintptr_t first = (uintptr_t)p >> EMU_REGION_SHIFT, last = ((uintptr_t)p + size - 1) >> EMU_REGION_SHIFT;
    for (uintptr_t r = first; r <= last; r++)
        if (emu_dir[r]) { munmap(emu_dir[r], EMU_TABLE_BYTES); emu_dir[r] = NULL; }
}
#endif
