/* The "new NT" memset design and its AVX2 / AVX-512 widenings.
 *
 * One GNU as macro, MEMSET_NEW name, W, ERMS, emits every variant; W is the store width of the hot
 * path (16 = SSE, 32 = AVX2, 64 = AVX-512) and ERMS says whether sizes >= CB_STOSB_THRESHOLD go
 * to `rep stosb` when the CPU has ERMS.
 *
 *   n < 4          branches: 0, 1, 2..3 (a byte store and an overlapping word store)
 *   4 <= n < 16    branchless: four 4-byte stores at 0, n-4, s, n-4-s with s = 4 if n >= 8 else 0
 *   16 <= n < 64   branchless: the same with 16-byte stores (s = 16 if n >= 32)
 *   64 <= n < 4W   (W = 32, 64 only) the same with W-byte stores (s = W if n >= 2W)
 *   n >= 4W        hot path: one unaligned W-byte store at dst, p = (dst + W) & -W,
 *                  k = ceil((t - p) / 4W) iterations of 4 aligned W-byte stores (a `dec` counted
 *                  loop), where t = (dst + n - 3W) & -W; then, unconditionally, 3 aligned stores at
 *                  t, t+W, t+2W and one unaligned store at dst + n - W.
 *   n >= CB_STOSB_THRESHOLD and the ERMS flag set (ERMS variants only):
 *                  the first 64 bytes with vector stores, p = (dst + 64) & -64, rep stosb of
 *                  dst + n - p bytes from p.
 *
 * For W = 16 this stores 4 (n < 64), 5 (n = 64), 9 (n = 96 or 128) and 13 (n = 160..192) times,
 * as in the reference's table.
 *
 * ERMS is decided at load time, like the reference's global: a constructor (.init_array) runs
 * CPUID (leaf 7, EBX bit 9) and sets the byte cb_memset_have_erms, which the ERMS variants read
 * before taking the rep stosb path. The byte is exported; a harness may clear it to force the
 * vector path. The *_noerms variants never use rep stosb (an ERMS-less CPU, or the sweep baseline).
 * A loader that does not run ELF constructors leaves the flag 0: then the ERMS variants behave
 * like the *_noerms ones.
 *
 * The cut-over threshold is the preprocessor symbol CB_STOSB_THRESHOLD (default 800, the
 * reference's value; must be >= 64). The threshold sweep assembles one shared object per threshold
 * (-DCB_STOSB_THRESHOLD=N; cyclebench.routines.build caches each by source+flags), so every
 * threshold runs exactly the production code: an immediate compare, no extra load.
 * cb_memset_stosb_threshold (a read-only u64) records the value a shared object was built with.
 *
 * AVX2 variants broadcast into ymm0 only on the >= 64 paths and end those with vzeroupper; the
 * small paths use VEX.128 stores, which keep the upper state clean. AVX-512 variants use
 * zmm16/xmm16 (EVEX only), which never dirty the upper state of ymm0-15, so need no vzeroupper.
 *
 * SysV: void *fn(void *dst (rdi), int c (esi), size_t n (rdx)); returns dst.
 * Clobbers rcx, rdx, rsi, rdi, r8, r9, xmm0 / ymm0 / zmm16, flags.
 */
#ifndef CB_STOSB_THRESHOLD
#define CB_STOSB_THRESHOLD 800
#endif

        .intel_syntax noprefix

        .if CB_STOSB_THRESHOLD < 64
        .error "CB_STOSB_THRESHOLD must be >= 64"
        .endif

/* ---- stores of the fill pattern, selected by the variant's width W ---- */

        .macro ST16 W, addr             /* 16 bytes, unaligned */
        .if \W == 16
        movups  \addr, xmm0
        .elseif \W == 32
        vmovdqu \addr, xmm0
        .else
        vmovdqu64 \addr, xmm16
        .endif
        .endm

        .macro STW_U W, addr            /* W bytes, unaligned */
        .if \W == 16
        movups  \addr, xmm0
        .elseif \W == 32
        vmovdqu \addr, ymm0
        .else
        vmovdqu64 \addr, zmm16
        .endif
        .endm

        .macro STW_A W, addr            /* W bytes, W-aligned */
        .if \W == 16
        movaps  \addr, xmm0
        .elseif \W == 32
        vmovdqa \addr, ymm0
        .else
        vmovdqa64 \addr, zmm16
        .endif
        .endm

        .macro RET_WIDE W               /* return from a path that used W-byte registers */
        .if \W == 32
        vzeroupper
        .endif
        ret
        .endm

        .macro MEMSET_NEW name, W, ERMS, SHIFT
        .text
        .globl  \name
        .type   \name, @function
        .p2align 6
\name:
        mov     rax, rdi
        movzx   esi, sil
        movabs  r9, 0x0101010101010101
        imul    rsi, r9                 /* before any branch: every path needs it */
        .if \W == 16
        movq    xmm0, rsi
        punpcklqdq xmm0, xmm0
        .elseif \W == 32
        vmovq   xmm0, rsi
        vpunpcklqdq xmm0, xmm0, xmm0
        .else
        vpbroadcastq zmm16, rsi
        .endif
        cmp     rdx, 64
        jae     .L\name\()_ge64
        cmp     rdx, 16
        jae     .L\name\()_16_63
        cmp     rdx, 4
        jae     .L\name\()_4_15
        test    rdx, rdx                /* 0..3: the only branchy sizes */
        jz      1f
        mov     byte ptr [rdi], sil
        cmp     rdx, 2
        jb      1f
        mov     word ptr [rdi + rdx - 2], si
1:      ret

.L\name\()_4_15:
        lea     r9, [rdi + rdx - 4]
        and     rdx, 8                  /* 8 if n >= 8 else 0 */
        mov     dword ptr [rdi], esi
        shr     rdx, 1
        mov     dword ptr [r9], esi
        mov     dword ptr [rdi + rdx], esi
        neg     rdx
        mov     dword ptr [r9 + rdx], esi
        ret

.L\name\()_16_63:
        lea     r9, [rdi + rdx - 16]
        and     rdx, 32                 /* 32 if n >= 32 else 0 */
        ST16    \W, [rdi]
        shr     rdx, 1
        ST16    \W, [r9]
        ST16    \W, [rdi + rdx]
        neg     rdx
        ST16    \W, [r9 + rdx]
        ret

.L\name\()_ge64:
        .if \W == 32
        vpbroadcastq ymm0, xmm0
        .endif
        .if \W > 16
        cmp     rdx, 4 * \W
        jb      .L\name\()_mid
        .endif
        .if \ERMS
        cmp     rdx, CB_STOSB_THRESHOLD
        jae     .L\name\()_stosb
        .endif
.L\name\()_vec:
        lea     rcx, [rdi + rdx - \W]           /* last store, may be unaligned */
        lea     r8, [rdi + rdx - 3 * \W]
        and     r8, -\W                         /* 3 aligned trailing stores from here */
        STW_U   \W, [rdi]
        add     rdi, \W
        and     rdi, -\W
        mov     rdx, r8
        sub     rdx, rdi
        add     rdx, 4 * \W - 1
        shr     rdx, \SHIFT                     /* iterations: ceil((r8 - rdi) / 4W) */
        jz      3f
2:      STW_A   \W, [rdi]
        STW_A   \W, [rdi + \W]
        add     rdi, 4 * \W
        dec     rdx
        STW_A   \W, [rdi - 2 * \W]
        STW_A   \W, [rdi - \W]
        jnz     2b
3:      STW_A   \W, [r8]
        STW_A   \W, [r8 + \W]
        STW_A   \W, [r8 + 2 * \W]
        STW_U   \W, [rcx]
        RET_WIDE \W

        .if \W > 16
.L\name\()_mid:                                 /* 64 <= n < 4W */
        lea     r9, [rdi + rdx - \W]
        and     rdx, 2 * \W
        STW_U   \W, [rdi]
        shr     rdx, 1
        STW_U   \W, [r9]
        STW_U   \W, [rdi + rdx]
        neg     rdx
        STW_U   \W, [r9 + rdx]
        RET_WIDE \W
        .endif

        .if \ERMS
.L\name\()_stosb:
        cmp     byte ptr [rip + .Lcb_have_erms], 0
        je      .L\name\()_vec
        .if \W == 16
        movups  [rdi], xmm0
        movups  [rdi + 16], xmm0
        movups  [rdi + 32], xmm0
        movups  [rdi + 48], xmm0
        .elseif \W == 32
        vmovdqu [rdi], ymm0
        vmovdqu [rdi + 32], ymm0
        vzeroupper
        .else
        vmovdqu64 [rdi], zmm16
        .endif
        lea     rcx, [rdi + rdx]
        add     rdi, 64
        and     rdi, -64
        sub     rcx, rdi
        mov     r9, rax
        mov     eax, esi
        rep stosb
        mov     rax, r9
        ret
        .endif
        .size   \name, .-\name
        .endm

        MEMSET_NEW cb_memset_new_sse,           16, 1, 6
        MEMSET_NEW cb_memset_new_sse_noerms,    16, 0, 6
        MEMSET_NEW cb_memset_new_avx2,          32, 1, 7
        MEMSET_NEW cb_memset_new_avx2_noerms,   32, 0, 7
        MEMSET_NEW cb_memset_new_avx512,        64, 1, 8
        MEMSET_NEW cb_memset_new_avx512_noerms, 64, 0, 8

/* ---- load-time CPU feature detection ---- */

        .text
        .type   cb_memset_detect_erms, @function
        .p2align 4
cb_memset_detect_erms:
        push    rbx
        xor     eax, eax
        cpuid
        cmp     eax, 7
        jb      1f
        mov     eax, 7
        xor     ecx, ecx
        cpuid
        shr     ebx, 9                  /* CPUID.(EAX=7,ECX=0):EBX[9] = ERMS */
        and     ebx, 1
        mov     byte ptr [rip + .Lcb_have_erms], bl
1:      pop     rbx
        ret
        .size   cb_memset_detect_erms, .-cb_memset_detect_erms

        .section .init_array, "aw"
        .p2align 3
        .quad   cb_memset_detect_erms

        .data
        .globl  cb_memset_have_erms
        .type   cb_memset_have_erms, @object
        .size   cb_memset_have_erms, 1
cb_memset_have_erms:
.Lcb_have_erms:
        .byte   0

        .section .rodata
        .p2align 3
        .globl  cb_memset_stosb_threshold
        .type   cb_memset_stosb_threshold, @object
        .size   cb_memset_stosb_threshold, 8
cb_memset_stosb_threshold:
        .quad   CB_STOSB_THRESHOLD

        .section .note.GNU-stack, "", @progbits
