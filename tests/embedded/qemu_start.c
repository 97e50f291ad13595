/* qemu_start.c - an entry point that lets the Cortex-M7 build of examples/embedded.c run under
   qemu-user (qemu-arm), for `make test-m7`.

   The bare-metal image links newlib's crt0, which expects a board (its stack, its semihosting);
   qemu-arm is a Linux process emulator instead: it loads the ELF, zeroes .bss, sets up a
   stack, and starts at _start. So the same embedded.o is linked a second time with this file
   (-nostartfiles) in place of crt0; main's result leaves through the Linux exit system call,
   and the test passes when it is 0 (the fused result matched the direct loop). The code of the
   example and the library is the Cortex-M7 code (Thumb-2, FPv5), which qemu-arm's default
   CPU runs. */
int main(void);
void _start(void);

void _start(void) {
  register int status __asm__("r0") = main();
  register int call __asm__("r7") = 1; /* __NR_exit on ARM EABI Linux */
  __asm__ volatile("svc 0" : : "r"(status), "r"(call) : "memory");
  for (;;) {
  }
}
