/* The "old NT" memset design, reconstructed from the reference's description (its flow chart is an
 * image; this follows the text and the store counts of its comparison table):
 *
 *   n < 8         byte loop (one store per iteration)
 *   8 <= n < 80   8-byte store loop (one store per iteration), then - behind a branch - one
 *                 possibly overlapping 8-byte store ending at dst + n
 *   n >= 80       one unaligned 16-byte store, align dst up to 16 (dst + 16 rounded down),
 *                 a loop of 8 x 16-byte aligned stores (128 B per iteration), a loop of one
 *                 16-byte store per iteration for what is left, and - behind a branch - one
 *                 unaligned 16-byte store ending at dst + n
 *
 * Store counts for a 16-aligned dst: 8 -> 1, 16 -> 2, 36 -> 5, 64 -> 8, 80 -> 5, 96 -> 6,
 * 128 -> 8, 144 -> 9, 160 -> 10 (the "min" column of the reference's table).
 * SysV: void *cb_memset_nt_old(void *dst (rdi), int c (esi), size_t n (rdx)); returns dst.
 */
        .intel_syntax noprefix
        .text

        .globl  cb_memset_nt_old
        .type   cb_memset_nt_old, @function
        .p2align 6
cb_memset_nt_old:
        mov     rax, rdi
        movzx   esi, sil
        movabs  r9, 0x0101010101010101
        imul    rsi, r9                 /* rsi = fill byte in all 8 bytes */
        cmp     rdx, 80
        jae     .Lold_big
        cmp     rdx, 8
        jb      .Lold_bytes

        /* 8..79 bytes: 8 bytes per iteration, then an overlapping tail store if needed */
        lea     rcx, [rdi + rdx - 8]
        mov     r8, rdx
        shr     r8, 3
1:      mov     qword ptr [rdi], rsi
        add     rdi, 8
        dec     r8
        jnz     1b
        test    edx, 7
        jz      2f
        mov     qword ptr [rcx], rsi
2:      ret

.Lold_bytes:                            /* 0..7 bytes */
        test    rdx, rdx
        jz      2f
1:      mov     byte ptr [rdi], sil
        inc     rdi
        dec     rdx
        jnz     1b
2:      ret

.Lold_big:                              /* n >= 80 */
        movq    xmm0, rsi
        punpcklqdq xmm0, xmm0
        lea     rcx, [rdi + rdx]        /* end */
        movups  [rdi], xmm0             /* first 16 bytes, unaligned */
        add     rdi, 16
        and     rdi, -16                /* 16-aligned, 1..16 bytes past dst */
        mov     rdx, rcx
        sub     rdx, rdi                /* bytes left (>= 64) */
        mov     r8, rdx
        shr     r8, 7                   /* 128-byte blocks */
        jz      4f
3:      movaps  [rdi], xmm0
        movaps  [rdi + 16], xmm0
        movaps  [rdi + 32], xmm0
        movaps  [rdi + 48], xmm0
        movaps  [rdi + 64], xmm0
        movaps  [rdi + 80], xmm0
        movaps  [rdi + 96], xmm0
        movaps  [rdi + 112], xmm0
        add     rdi, 128
        dec     r8
        jnz     3b
4:      and     edx, 127
        mov     r8, rdx
        shr     r8, 4                   /* whole 16-byte chunks left */
        jz      6f
5:      movaps  [rdi], xmm0             /* one store per iteration */
        add     rdi, 16
        dec     r8
        jnz     5b
6:      test    edx, 15
        jz      7f
        movups  [rcx - 16], xmm0        /* last, overlapping, unaligned */
7:      ret
        .size   cb_memset_nt_old, .-cb_memset_nt_old

        .section .note.GNU-stack, "", @progbits
