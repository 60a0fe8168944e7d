/* The tree Array holds the same elements as a flat array: for every page size 4 KiB .. 1 MiB and
 * element sizes 4 and 32 bytes, trees of depth 1, 2 and 3 (3 by size where that fits in 64 MiB,
 * and always by the fixed-depth variant) are filled through tarray_at and read back through
 * tarray_at and (depth 3) tarray3_at, against the value a flat array would hold.
 * Prints one line "page esize n depth ok|BAD" per tree, and "all ok" at the end when all held. */
#include <stdio.h>
#include <stdint.h>
#include "tree_array.h"

static uint64_t val(size_t i) { return i * 0x9E3779B97F4A7C15ull ^ 0x5555; }

static int check(size_t page, size_t esize, size_t n, int fixed3) {
    TArray a;
    if (tarray_init(&a, n, esize, page, fixed3)) { printf("%zu %zu %zu - BAD(init)\n", page, esize, n); return 0; }
    uint64_t *flat = malloc(n * sizeof *flat);
    for (size_t i = 0; i < n; i++) { flat[i] = val(i); memcpy(tarray_at(&a, i), &flat[i], esize < 8 ? esize : 8); }
    int ok = 1;
    for (size_t i = 0; i < n && ok; i++) {
        uint64_t got = 0, want = 0;
        memcpy(&got, tarray_at(&a, i), esize < 8 ? esize : 8);
        memcpy(&want, &flat[i], esize < 8 ? esize : 8);
        if (got != want) ok = 0;
        if (a.depth == 3) { got = 0; memcpy(&got, tarray3_at(&a, i), esize < 8 ? esize : 8); if (got != want) ok = 0; }
    }
    /* distinct elements do not overlap: the last write wins only at its own index */
    for (size_t i = 0; i + 1 < n && ok; i += 97) if ((char *)tarray_at(&a, i) == (char *)tarray_at(&a, i + 1)) ok = 0;
    printf("%zu %zu %zu %d %s\n", page, esize, n, a.depth, ok ? "ok" : "BAD");
    tarray_free(&a);
    free(flat);
    return ok;
}

int main(void) {
    int all = 1;
    for (size_t page = 4096; page <= (1u << 20); page <<= 1) {
        for (size_t esize = 4; esize <= 32; esize *= 8) {
            size_t cap1 = (size_t)1 << cb_log2(page / esize), cap2 = cap1 * (page / sizeof(void *));
            size_t ns[] = {1, cap1 - 1, cap1, cap1 + 1, 3 * cap1 + 7, cap2 + 1};
            for (int k = 0; k < 6; k++) {
                if (ns[k] * esize > (64u << 20) || ns[k] == 0) continue;
                all &= check(page, esize, ns[k], 0);
            }
            all &= check(page, esize, 3 * cap1 + 7, 1);      /* fixed depth 3 */
            all &= check(page, esize, 5, 1);
        }
    }
    puts(all ? "all ok" : "SOME BAD");
    return !all;
}
