/* The bounds checks the study's builds insert by hand, chosen by a macro:
 *
 *   (none)          native, ASan, UBSan: the compiler's own instrumentation (or none)
 *   CB_CHECK_INLINE hand-inlined register checks: the object's lower and upper bound in registers,
 *                   compare-and-branch before every access (what bndcl + bndcu do), no metadata
 *   CB_MPX_EMU      emulated MPX: the same register checks, plus narrowing of bounds to a struct's
 *                   inner array (bndmk) and bounds kept in a shadow table beside every pointer
 *                   stored to memory (bndstx / bndldx, in mpxemu.h)
 *
 * A failed check executes ud2 (SIGILL), as #BR would end an MPX program. */
#ifndef CB_CHECKS_H
#define CB_CHECKS_H
#include <stdint.h>

/* Hide a value from the optimiser, and make it assume memory changed: a check against the value
 * cannot be proven redundant and removed (MPX's checks were not either), and a pass over an
 * array cannot be merged with the one before (a pure kernel called twice with the same
 * arguments would otherwise run once). */
#define CB_OPAQUE(x) __asm__ volatile("" : "+r"(x) : : "memory")

#if defined(CB_CHECK_INLINE) || defined(CB_MPX_EMU)
#define CB_CHECKED 1
/* bndcl + bndcu: p .. p+size-1 within [lo, hi] (hi inclusive, as MPX's upper bound). */
#define CB_CHECK(lo, hi, p, size)                                                          \
    do {                                                                                   \
        if (__builtin_expect((uintptr_t)(p) < (uintptr_t)(lo) ||                          \
                             (uintptr_t)(p) + (size) - 1 > (uintptr_t)(hi), 0))           \
            __builtin_trap();                                                              \
    } while (0)
#else
#define CB_CHECKED 0
#define CB_CHECK(lo, hi, p, size) ((void)0)
#endif

#ifdef CB_MPX_EMU
#include "mpxemu.h"
#endif
#endif
