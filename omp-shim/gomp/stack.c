/*
 * stack.c - run a function on another stack (x86-64 System V).
 *
 * shim_call_on_stack(fn, arg, top) saves the stack pointer in a callee-saved
 * register, moves to top (16-byte aligned), calls fn(arg) and comes back.
 * The shim uses it to run main and every OpenMP thread on a stack inside the
 * DSM region, so that other ranks can read the variables a parallel region
 * shares from it.  Any thread.
 */
#include "shim.h"

#if !defined(__x86_64__)
#error "omp-shim/gomp/stack.c supports x86-64 only"
#endif

__asm__(
    ".text\n"
    ".globl shim_call_on_stack\n"
    ".hidden shim_call_on_stack\n"
    ".type shim_call_on_stack, @function\n"
    "shim_call_on_stack:\n"
    "    pushq %rbp\n"
    "    movq %rsp, %rbp\n"
    "    movq %rdx, %rsp\n"
    "    movq %rdi, %rax\n"
    "    movq %rsi, %rdi\n"
    "    callq *%rax\n"
    "    movq %rbp, %rsp\n"
    "    popq %rbp\n"
    "    retq\n"
    ".size shim_call_on_stack, .-shim_call_on_stack\n");
