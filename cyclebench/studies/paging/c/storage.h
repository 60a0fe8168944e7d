/* The storage kinds an experiment program can put an array in, chosen on the command line:
 *   plain    one malloc (glibc maps large ones; THP in madvise mode leaves them on 4 KiB pages)
 *   plain4k  one mmap with MADV_NOHUGEPAGE          plain2m  2 MiB-aligned mmap with MADV_HUGEPAGE
 *   tree     the tree Array, depth chosen by size   tree3    the tree Array, always three levels
 * AT_FLAT / AT_TREE / AT_TREE3 (s, i, T) give the address of element i; every kind gives the same
 * elements. */
#ifndef CB_STORAGE_H
#define CB_STORAGE_H
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include "tree_array.h"

enum kind { PLAIN, PLAIN4K, PLAIN2M, TREE, TREE3 };

typedef struct { enum kind kind; char *flat; TArray t; size_t bytes; } Store;

static int parse_kind(const char *s) {
    static const char *names[] = {"plain", "plain4k", "plain2m", "tree", "tree3"};
    for (int k = 0; k < 5; k++) if (!strcmp(s, names[k])) return k;
    return -1;
}

static int store_init(Store *s, enum kind kind, size_t n, size_t esize, size_t page) {
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->bytes = n * esize;
    if (kind == TREE || kind == TREE3) return tarray_init(&s->t, n, esize, page, kind == TREE3);
    if (kind == PLAIN) { s->flat = calloc(n, esize); return s->flat ? 0 : -1; }
    size_t align = 2u << 20, len = (s->bytes + align - 1) / align * align;
    char *p = mmap(NULL, len + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return -1;
    char *q = (char *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
    if (madvise(q, len, kind == PLAIN2M ? MADV_HUGEPAGE : MADV_NOHUGEPAGE)) return -1;
    s->flat = q;
    return 0;
}

/* Element access per kind, for kernels instantiated once per kind (KERNELS below), so a plain
 * array's loop carries no test of the kind. */
#define AT_FLAT(s, i, T) ((T *)(s)->flat + (i))
#define AT_TREE(s, i, T) ((T *)tarray_at(&(s)->t, (i)))
#define AT_TREE3(s, i, T) ((T *)tarray3_at(&(s)->t, (i)))

/* kB of this process's anonymous memory backed by huge pages (/proc/self/smaps_rollup). */
static long anon_huge_kb(void) {
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256]; long kb = -1;
    if (!f) return -1;
    while (fgets(line, sizeof line, f)) if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1) break;
    fclose(f);
    return kb;
}
#endif
