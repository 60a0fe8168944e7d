/* cb_routine_empty: the empty call for the baseline pass of a routine benchmark. It has the
 * memset signature (and serves any call shape: it reads no argument), writes nothing and returns
 * its first argument, so a pass calling it costs the loop, the argument loads, the call and the
 * return: what is subtracted from a pass over the real routine.
 * SysV: void *cb_routine_empty(void *dst (rdi), int c (esi), size_t n (rdx)); returns dst.
 */
        .intel_syntax noprefix
        .text
        .globl  cb_routine_empty
        .type   cb_routine_empty, @function
        .p2align 6
cb_routine_empty:
        mov     rax, rdi
        ret
        .size   cb_routine_empty, .-cb_routine_empty

        .section .note.GNU-stack, "", @progbits
