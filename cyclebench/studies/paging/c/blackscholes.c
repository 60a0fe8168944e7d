/* Black-Scholes European option prices in single precision, written from the formula:
 *   d1 = (ln(S/K) + (r + v^2/2) t) / (v sqrt t),  d2 = d1 - v sqrt t,
 *   call = S N(d1) - K e^{-rt} N(d2),  put = K e^{-rt} (1 - N(d2)) - S (1 - N(d1)),
 * N(x) by the 5-term polynomial (Abramowitz & Stegun 26.2.17, as PARSEC's CNDF).
 *
 *   blackscholes soa|aos KIND PAGE OPTIONS PASSES [dump]
 * soa: five input arrays (spot, strike, rate, volatility, time) plus the option type and the
 * output price, each its own array; aos: one array of 32-byte structs. KIND: storage.h's kinds.
 * Prints "iterations PASSES*OPTIONS" (one iteration prices one option once), and with "dump" one
 * line per option: i S K r v t type price. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "storage.h"

typedef struct { float s, k, r, v, t; int type; float price, pad; } Opt;

static inline float cndf(float x) {
    int neg = x < 0.0f;
    if (neg) x = -x;
    float pdf = expf(-0.5f * x * x) * 0.39894228040143270286f;
    float k = 1.0f / (1.0f + 0.2316419f * x);
    float poly = k * (0.319381530f + k * (-0.356563782f + k * (1.781477937f + k * (-1.821255978f + k * 1.330274429f))));
    float n = 1.0f - pdf * poly;
    return neg ? 1.0f - n : n;
}

static inline float price(float s, float k, float r, float v, float t, int put) {
    float den = v * sqrtf(t);
    float d1 = (logf(s / k) + (r + 0.5f * v * v) * t) / den;
    float d2 = d1 - den;
    float n1 = cndf(d1), n2 = cndf(d2), fv = k * expf(-r * t);
    return put ? fv * (1.0f - n2) - s * (1.0f - n1) : s * n1 - fv * n2;
}

static float unit(size_t i, unsigned salt) {            /* a fixed pseudo-random number in [0, 1) */
    unsigned long x = (i + 1) * 0x9E3779B97F4A7C15ul ^ (unsigned long)salt * 0xD1B54A32D192ED03ul;
    x ^= x >> 31; x *= 0xBF58476D1CE4E5B9ul; x ^= x >> 29;
    return (float)(x >> 40) / (float)(1ul << 24);
}

#define KERNELS(SUFFIX, AT)                                                                        \
static void soa_##SUFFIX(Store *a, size_t n, long passes) {                                       \
    for (long p = 0; p < passes; p++) {                                                            \
        for (size_t i = 0; i < n; i++)                                                             \
            *AT(&a[6], i, float) = price(*AT(&a[0], i, float), *AT(&a[1], i, float),             \
                                         *AT(&a[2], i, float), *AT(&a[3], i, float),             \
                                         *AT(&a[4], i, float), *AT(&a[5], i, int));              \
        __asm__ volatile("" ::: "memory");                                                         \
    }                                                                                              \
}                                                                                                  \
static void aos_##SUFFIX(Store *a, size_t n, long passes) {                                       \
    for (long p = 0; p < passes; p++) {                                                            \
        for (size_t i = 0; i < n; i++) {                                                           \
            Opt *o = AT(a, i, Opt);                                                                \
            o->price = price(o->s, o->k, o->r, o->v, o->t, o->type);                               \
        }                                                                                          \
        __asm__ volatile("" ::: "memory");                                                         \
    }                                                                                              \
}
KERNELS(flat, AT_FLAT)
KERNELS(tree, AT_TREE)
KERNELS(tree3, AT_TREE3)

int main(int argc, char **argv) {
    if (argc < 6) { fprintf(stderr, "usage: blackscholes soa|aos KIND PAGE OPTIONS PASSES [dump]\n"); return 2; }
    int aos = !strcmp(argv[1], "aos"), kind = parse_kind(argv[2]);
    size_t page = strtoul(argv[3], NULL, 0), n = strtoul(argv[4], NULL, 0);
    long passes = atol(argv[5]);
    int dump = argc > 6 && !strcmp(argv[6], "dump");
    if (kind < 0 || (!aos && strcmp(argv[1], "soa")) || n == 0 || passes < 1) { fprintf(stderr, "bad arguments\n"); return 2; }
    Store st[7];
    int nst = aos ? 1 : 7;
    for (int j = 0; j < nst; j++)
        if (store_init(&st[j], kind, n, aos ? sizeof(Opt) : 4, page)) { fprintf(stderr, "cannot allocate\n"); return 3; }
    for (size_t i = 0; i < n; i++) {
        float s = 10.0f + 100.0f * unit(i, 1), k = s * (0.7f + 0.6f * unit(i, 2));
        float r = 0.01f + 0.09f * unit(i, 3), v = 0.05f + 0.6f * unit(i, 4), t = 0.05f + 1.95f * unit(i, 5);
        int type = unit(i, 6) < 0.5f;
        Opt o = {s, k, r, v, t, type, 0.0f, 0.0f};
        if (aos) {
            switch (kind) {
            case TREE: case TREE3: *AT_TREE(&st[0], i, Opt) = o; break;
            default: *AT_FLAT(&st[0], i, Opt) = o;
            }
        } else {
            float in[5] = {s, k, r, v, t};
            for (int j = 0; j < 6; j++) {
                void *e = (kind == TREE || kind == TREE3) ? tarray_at(&st[j].t, i) : (void *)((char *)st[j].flat + 4 * i);
                if (j < 5) memcpy(e, &in[j], 4); else memcpy(e, &type, 4);
            }
        }
    }
    void (*fn)(Store *, size_t, long) =
        kind == TREE ? (aos ? aos_tree : soa_tree) : kind == TREE3 ? (aos ? aos_tree3 : soa_tree3) : (aos ? aos_flat : soa_flat);
    fn(st, n, passes);
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        int tree = kind == TREE || kind == TREE3;
        const Opt *o = aos ? (tree ? AT_TREE(&st[0], i, Opt) : AT_FLAT(&st[0], i, Opt)) : NULL;
        float f[7];
        for (int j = 0; j < 7 && !aos; j++) memcpy(&f[j], tree ? tarray_at(&st[j].t, i) : (void *)((char *)st[j].flat + 4 * i), 4);
        float pr = aos ? o->price : f[6];
        sum += pr;
        if (dump) {
            if (aos) printf("%zu %.9g %.9g %.9g %.9g %.9g %d %.9g\n", i, o->s, o->k, o->r, o->v, o->t, o->type, pr);
            else { int ty; memcpy(&ty, &f[5], 4); printf("%zu %.9g %.9g %.9g %.9g %.9g %d %.9g\n", i, f[0], f[1], f[2], f[3], f[4], ty, pr); }
        }
    }
    printf("checksum %.6f\ndepth %d\npages %zu\nanon_huge_kb %ld\niterations %ld\n", sum,
           (kind == TREE || kind == TREE3) ? st[0].t.depth : 0, (kind == TREE || kind == TREE3) ? st[0].t.pages * nst : 0,
           anon_huge_kb(), passes * (long)n);
    return 0;
}
