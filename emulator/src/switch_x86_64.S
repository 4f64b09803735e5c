// The emulator's fiber switch for x86-64 (System V): saves the callee-saved registers and
// the stack pointer of the running fiber, then resumes another. ~10x cheaper than glibc's
// swapcontext, which also saves the signal mask with a system call.
//
//   void cudalings_emu_switch(void** save, void* to)
    .text
    .globl cudalings_emu_switch
    .hidden cudalings_emu_switch
    .type cudalings_emu_switch, @function
cudalings_emu_switch:
    .cfi_startproc
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .cfi_endproc
    .size cudalings_emu_switch, .-cudalings_emu_switch

// The first frame of a fiber: calls the entry in %r12; it never returns.
    .globl cudalings_emu_fiber_start
    .hidden cudalings_emu_fiber_start
    .type cudalings_emu_fiber_start, @function
cudalings_emu_fiber_start:
    .cfi_startproc
    .cfi_undefined rip
    xorl %ebp, %ebp
    callq *%r12
    ud2
    .cfi_endproc
    .size cudalings_emu_fiber_start, .-cudalings_emu_fiber_start

    .section .note.GNU-stack,"",@progbits
