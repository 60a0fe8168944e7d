/* A tree array made of fixed-size "pages" (no allocation larger than one page), after the
 * reference's C++ Array: up to three levels, where the last level holds the elements and the
 * levels above hold pointers to pages, like a page table.
 *
 *   tarray_init(&a, n, elem_size, page_bytes, fixed3)
 *       depth 1 when the elements fit in one page, else 2, else 3 (the constructor picks it);
 *       fixed3 != 0 always builds three levels (the "no branches" variant).
 *   tarray_at(&a, i)    walks the levels, with a branch on the depth (the base Array)
 *   tarray3_at(&a, i)   always walks three levels, no branch (the fixed-depth-3 variant)
 *
 * Elements per data page and pointers per pointer page are powers of two (a data page holds
 * 2^k elements, the most that fit), so an index splits into levels with shifts and masks. Every
 * page is one malloc(page_bytes). page_bytes: a power of two, 4 KiB .. 1 MiB. */
#ifndef CB_TREE_ARRAY_H
#define CB_TREE_ARRAY_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    void *root;
    size_t n, esize, page;
    int depth;
    unsigned eshift, pshift;         /* log2 elements per data page, log2 pointers per page */
    size_t emask, pmask;
    size_t pages;                    /* pages allocated (data and pointer) */
} TArray;

static unsigned cb_log2(size_t x) { unsigned k = 0; while ((size_t)1 << (k + 1) <= x) k++; return k; }

static void *cb_page(TArray *a) {
    void *p = malloc(a->page);
    if (!p) abort();
    memset(p, 0, a->page);
    a->pages++;
    return p;
}

/* A subtree of `levels` levels (1 = a data page) covering elements from `first`. */
static void *cb_build(TArray *a, int levels, size_t first) {
    if (levels == 1) return cb_page(a);
    void **p = (void **)cb_page(a);
    size_t span = (size_t)1 << (a->eshift + (size_t)(levels - 2) * a->pshift);
    for (size_t k = 0; k <= a->pmask && first + k * span < a->n; k++)
        p[k] = cb_build(a, levels - 1, first + k * span);
    return p;
}

static int tarray_init(TArray *a, size_t n, size_t esize, size_t page, int fixed3) {
    memset(a, 0, sizeof *a);
    if (n == 0 || esize == 0 || esize > page || (page & (page - 1)) || page < 4096 || page > (1u << 20)) return -1;
    a->n = n; a->esize = esize; a->page = page;
    a->eshift = cb_log2(page / esize); a->emask = ((size_t)1 << a->eshift) - 1;
    a->pshift = cb_log2(page / sizeof(void *)); a->pmask = ((size_t)1 << a->pshift) - 1;
    size_t cap1 = (size_t)1 << a->eshift, cap2 = cap1 << a->pshift, cap3 = cap2 << a->pshift;
    if (n > cap3) return -1;
    a->depth = fixed3 ? 3 : n <= cap1 ? 1 : n <= cap2 ? 2 : 3;
    a->root = cb_build(a, a->depth, 0);
    return 0;
}

static inline void cb_free(TArray *a, void *p, int levels, size_t first) {
    if (levels > 1) {
        size_t span = (size_t)1 << (a->eshift + (size_t)(levels - 2) * a->pshift);
        for (size_t k = 0; k <= a->pmask && first + k * span < a->n; k++)
            cb_free(a, ((void **)p)[k], levels - 1, first + k * span);
    }
    free(p);
}

static inline void tarray_free(TArray *a) { if (a->root) cb_free(a, a->root, a->depth, 0); a->root = NULL; }

static inline void *tarray_at(const TArray *a, size_t i) {
    char *data;
    if (a->depth == 1) {
        data = (char *)a->root;
    } else if (a->depth == 2) {
        data = ((char **)a->root)[i >> a->eshift];
    } else {
        char **l2 = ((char ***)a->root)[i >> (a->eshift + a->pshift)];
        data = l2[(i >> a->eshift) & a->pmask];
    }
    return data + (i & a->emask) * a->esize;
}

static inline void *tarray3_at(const TArray *a, size_t i) {
    char **l2 = ((char ***)a->root)[i >> (a->eshift + a->pshift)];
    char *data = l2[(i >> a->eshift) & a->pmask];
    return data + (i & a->emask) * a->esize;
}
#endif
