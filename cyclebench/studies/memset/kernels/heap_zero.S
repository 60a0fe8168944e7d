/* RtlHeapZero-like zeroing, specialised for the heap's granule.
 *
 * PRECONDITION: dst is 16-byte aligned and n is a multiple of 16. Outside that domain the result
 * is undefined (it faults on an unaligned dst). It only zeroes: c is ignored. The signature is
 * memset's so that the same call harness and input streams drive it.
 *
 *   n = 0          return
 *   n = 16..48     four aligned 16-byte stores at 0, n-16, s, n-16-s (s = 16 if n >= 32): no
 *                  branch on the size beyond n < 64 / n == 0
 *   n >= 64        k = (n - 1) / 64 iterations of 4 aligned stores, then 4 aligned stores ending at
 *                  dst + n. All stores are 16-aligned, so the trailing ones overlap earlier ones
 *                  completely or not at all.
 *
 * No pattern expansion (no imul), no alignment fix-up, no 1..15-byte paths.
 * SysV: void *cb_heapzero16(void *dst (rdi), int c (esi, ignored), size_t n (rdx)); returns dst.
 */
        .intel_syntax noprefix
        .text

        .globl  cb_heapzero16
        .type   cb_heapzero16, @function
        .p2align 6
cb_heapzero16:
        mov     rax, rdi
        xorps   xmm0, xmm0
        cmp     rdx, 64
        jb      .Lhz_small
        lea     rcx, [rdi + rdx - 64]
        lea     r8, [rdx - 1]
        shr     r8, 6
        jz      2f
1:      movaps  [rdi], xmm0
        movaps  [rdi + 16], xmm0
        add     rdi, 64
        dec     r8
        movaps  [rdi - 32], xmm0
        movaps  [rdi - 16], xmm0
        jnz     1b
2:      movaps  [rcx], xmm0
        movaps  [rcx + 16], xmm0
        movaps  [rcx + 32], xmm0
        movaps  [rcx + 48], xmm0
        ret

.Lhz_small:                             /* n in {0, 16, 32, 48} */
        test    rdx, rdx
        jz      3f
        lea     r9, [rdi + rdx - 16]
        and     rdx, 32
        movaps  [rdi], xmm0
        shr     rdx, 1
        movaps  [r9], xmm0
        movaps  [rdi + rdx], xmm0
        neg     rdx
        movaps  [r9 + rdx], xmm0
3:      ret
        .size   cb_heapzero16, .-cb_heapzero16

        .section .note.GNU-stack, "", @progbits
