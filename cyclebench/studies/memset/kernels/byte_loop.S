/* memset, one byte store per iteration: the slowest sensible baseline.
 * SysV: void *cb_memset_byte_loop(void *dst (rdi), int c (esi), size_t n (rdx)); returns dst.
 */
        .intel_syntax noprefix
        .text

        .globl  cb_memset_byte_loop
        .type   cb_memset_byte_loop, @function
        .p2align 6
cb_memset_byte_loop:
        mov     rax, rdi
        test    rdx, rdx
        jz      2f
1:      mov     byte ptr [rdi], sil
        inc     rdi
        dec     rdx
        jnz     1b
2:      ret
        .size   cb_memset_byte_loop, .-cb_memset_byte_loop

        .section .note.GNU-stack, "", @progbits
