/* TEST-ONLY: memset routines with planted bugs, to prove that cyclebench.studies.memset.correctness
 * catches each kind of mistake. Never time or ship these. Each comment gives the expected first
 * failure of the default check (sizes 0..4096 x alignments 0..63 x fills 0xa5, 0; then large sizes).
 * SysV: void *fn(void *dst (rdi), int c (esi), size_t n (rdx)).
 */
        .intel_syntax noprefix
        .text

/* correct byte loop shared by the bugs below for the sizes they do not break; returns dst */
        .type   bug_bytes, @function
        .p2align 4
bug_bytes:
        mov     rax, rdi
        test    rdx, rdx
        jz      2f
1:      mov     byte ptr [rdi], sil
        inc     rdi
        dec     rdx
        jnz     1b
2:      ret
        .size   bug_bytes, .-bug_bytes

/* the new design's >= 64 path with a configurable mistake */
        .macro HOT64 name, lastdisp=16, align_up=1
        .globl  \name
        .type   \name, @function
        .p2align 4
\name:
        cmp     rdx, 64
        jb      bug_bytes
        mov     rax, rdi
        movzx   esi, sil
        movabs  r9, 0x0101010101010101
        imul    rsi, r9
        movq    xmm0, rsi
        punpcklqdq xmm0, xmm0
        lea     rcx, [rdi + rdx - \lastdisp]
        lea     r8, [rdi + rdx - 48]
        and     r8, -16
        movups  [rdi], xmm0
        .if \align_up == 1
        add     rdi, 16
        and     rdi, -16
        .elseif \align_up == 2
        and     rdi, -16                /* aligns down: writes before dst */
        .endif                          /* 0: no alignment at all */
        mov     rdx, r8
        sub     rdx, rdi
        add     rdx, 63
        shr     rdx, 6
        jz      3f
2:      movaps  [rdi], xmm0
        movaps  [rdi + 16], xmm0
        add     rdi, 64
        dec     rdx
        movaps  [rdi - 32], xmm0
        movaps  [rdi - 16], xmm0
        jnz     2b
3:      movaps  [r8], xmm0
        movaps  [r8 + 16], xmm0
        movaps  [r8 + 32], xmm0
        movups  [rcx], xmm0
        ret
        .size   \name, .-\name
        .endm

/* Off-by-one tail: the last store ends one byte early. Missed only when dst + n is not 16-aligned
 * (otherwise the aligned trailing stores cover it): size 64, alignment 1, byte 63 not written. */
        HOT64   cb_bug_tail_off_by_one, lastdisp=17

/* Missing alignment fix: aligned stores (movaps) on an unaligned dst: SIGSEGV at size 64, align 1. */
        HOT64   cb_bug_no_align, align_up=0

/* Alignment fixed the wrong way (rounded down): writes before dst: size 64, align 1, offset -1. */
        HOT64   cb_bug_align_down, align_up=2

/* Writes one byte past the end with the fill value: the region itself is right, only the guard
 * bytes show it. Sizes 4..15: the last 4-byte store is at n-3. Size 4, align 0, offset 4. */
        .globl  cb_bug_past_end
        .type   cb_bug_past_end, @function
        .p2align 4
cb_bug_past_end:
        cmp     rdx, 4
        jb      bug_bytes
        cmp     rdx, 16
        jae     bug_bytes
        mov     rax, rdi
        movzx   esi, sil
        imul    esi, esi, 0x01010101
        lea     r9, [rdi + rdx - 3]
        and     rdx, 8
        mov     dword ptr [rdi], esi
        shr     rdx, 1
        mov     dword ptr [r9], esi
        mov     dword ptr [rdi + rdx], esi
        neg     rdx
        mov     dword ptr [r9 + rdx], esi
        ret
        .size   cb_bug_past_end, .-cb_bug_past_end

/* Ignores c and always zeroes: caught with the non-zero fill at size 1. */
        .globl  cb_bug_ignores_fill
        .type   cb_bug_ignores_fill, @function
cb_bug_ignores_fill:
        xor     esi, esi
        jmp     bug_bytes
        .size   cb_bug_ignores_fill, .-cb_bug_ignores_fill

/* Returns dst + n instead of dst: caught at size 1. */
        .globl  cb_bug_return_end
        .type   cb_bug_return_end, @function
cb_bug_return_end:
        lea     r10, [rdi + rdx]
        call    bug_bytes
        mov     rax, r10
        ret
        .size   cb_bug_return_end, .-cb_bug_return_end

/* Uses rbx (callee-saved) as the counter without saving it: caught at size 0. */
        .globl  cb_bug_clobbers_rbx
        .type   cb_bug_clobbers_rbx, @function
cb_bug_clobbers_rbx:
        mov     rax, rdi
        mov     rbx, rdx
        test    rbx, rbx
        jz      2f
1:      mov     byte ptr [rdi], sil
        inc     rdi
        dec     rbx
        jnz     1b
2:      ret
        .size   cb_bug_clobbers_rbx, .-cb_bug_clobbers_rbx

/* Right up to 64 KiB, then leaves the last byte: only the large random sizes catch it. */
        .globl  cb_bug_large_only
        .type   cb_bug_large_only, @function
cb_bug_large_only:
        cmp     rdx, 65536
        jbe     bug_bytes
        mov     r10, rdi
        dec     rdx
        mov     rcx, rdx
        mov     eax, esi
        rep stosb
        mov     rax, r10
        ret
        .size   cb_bug_large_only, .-cb_bug_large_only

/* Never returns for n == 100: the checker's timeout catches it. */
        .globl  cb_bug_hangs
        .type   cb_bug_hangs, @function
cb_bug_hangs:
        cmp     rdx, 100
        jne     bug_bytes
1:      jmp     1b
        .size   cb_bug_hangs, .-cb_bug_hangs

/* Executes an undefined instruction for n >= 32: SIGILL, reported as UnsupportedInstruction
 * (as an AVX-512 kernel on a CPU without AVX-512 would be). */
        .globl  cb_bug_sigill
        .type   cb_bug_sigill, @function
cb_bug_sigill:
        cmp     rdx, 32
        jb      bug_bytes
        ud2
        .size   cb_bug_sigill, .-cb_bug_sigill

        .section .note.GNU-stack, "", @progbits
