/* A dependent random walk through an array of 32-bit indices.
 *
 *   chase KIND PAGE ELEMENTS ACCESSES [dump]
 * ELEMENTS: a power of two. Element i holds (i * P + 1) mod ELEMENTS, P = 1,000,000,009 (a prime,
 * 1 mod 4), and the walk goes x -> a[x] from 0. The reference multiplied the index by a large
 * prime; the "+ 1" is ours: i * P alone maps 0 to itself (the walk from 0 would never move), and
 * with it the map is a full-period LCG (Hull-Dobell), visiting every element once per lap.
 * Prints "iterations ACCESSES" (one iteration = one access); "dump" prints every element. */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include "storage.h"

#define P 1000000009ull

#define KERNEL(SUFFIX, AT)                                                     \
static uint32_t walk_##SUFFIX(Store *a, long accesses) {                       \
    uint32_t x = 0;                                                            \
    for (long k = 0; k < accesses; k++) x = *AT(a, x, uint32_t);               \
    return x;                                                                  \
}
KERNEL(flat, AT_FLAT)
KERNEL(tree, AT_TREE)
KERNEL(tree3, AT_TREE3)

int main(int argc, char **argv) {
    if (argc < 5) { fprintf(stderr, "usage: chase KIND PAGE ELEMENTS ACCESSES [dump]\n"); return 2; }
    int kind = parse_kind(argv[1]);
    size_t page = strtoul(argv[2], NULL, 0), n = strtoul(argv[3], NULL, 0);
    long accesses = atol(argv[4]);
    if (kind < 0 || n < 2 || (n & (n - 1)) || n > (1ull << 32) || accesses < 1) { fprintf(stderr, "bad arguments\n"); return 2; }
    Store s;
    if (store_init(&s, kind, n, 4, page)) { fprintf(stderr, "cannot allocate\n"); return 3; }
    int tree = kind == TREE || kind == TREE3;
    for (size_t i = 0; i < n; i++) {
        uint32_t v = (uint32_t)((i * P + 1) & (n - 1));
        if (tree) *AT_TREE(&s, i, uint32_t) = v; else *AT_FLAT(&s, i, uint32_t) = v;
    }
    uint32_t x = kind == TREE ? walk_tree(&s, accesses) : kind == TREE3 ? walk_tree3(&s, accesses) : walk_flat(&s, accesses);
    if (argc > 5 && !strcmp(argv[5], "dump"))
        for (size_t i = 0; i < n; i++) printf("%u\n", tree ? *AT_TREE(&s, i, uint32_t) : *AT_FLAT(&s, i, uint32_t));
    printf("last %u\ndepth %d\nanon_huge_kb %ld\niterations %ld\n", x, tree ? s.t.depth : 0, anon_huge_kb(), accesses);
    return 0;
}
