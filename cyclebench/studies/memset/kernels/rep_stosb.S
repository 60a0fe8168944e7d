/* memset as a bare `rep stosb`: no alignment, no threshold, no vector stores.
 * SysV: void *cb_memset_rep_stosb(void *dst (rdi), int c (esi), size_t n (rdx)); returns dst.
 */
        .intel_syntax noprefix
        .text

        .globl  cb_memset_rep_stosb
        .type   cb_memset_rep_stosb, @function
        .p2align 6
cb_memset_rep_stosb:
        mov     r9, rdi                 /* rep stosb consumes rdi, rcx and needs al */
        mov     rcx, rdx
        mov     eax, esi
        rep stosb
        mov     rax, r9
        ret
        .size   cb_memset_rep_stosb, .-cb_memset_rep_stosb

        .section .note.GNU-stack, "", @progbits
