/*
 * loop PROGRAM|- N: installs the seccomp program in the file PROGRAM (or none for "-"), then
 * times N getppid() calls (an allowed call the kernel's action cache answers) and N
 * ioctl(FIONREAD) calls on a pipe (an argument-checked call the program runs for), and prints
 * "getppid NS ioctl NS" in nanoseconds per call, of this process's own CPU time (so other load on
 * the machine, which only preempts it, does not count).
 */
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv) {
  static struct sock_filter filter[4096];
  long n = argc > 2 ? atol(argv[2]) : 1000000, i;
  int fds[2], pending;
  double began, getppid_ns, ioctl_ns;
  if (argc < 3 || pipe(fds) != 0) return 2;
  if (strcmp(argv[1], "-") != 0) {
    FILE *f = fopen(argv[1], "rb");
    size_t bytes = f == NULL ? 0 : fread(filter, 1, sizeof filter, f);
    struct sock_fprog prog = { .len = (unsigned short)(bytes / 8), .filter = filter };
    if (bytes == 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
      perror("seccomp");
      return 1;
    }
  }
  began = now();
  for (i = 0; i < n; i++) syscall(SYS_getppid);
  getppid_ns = (now() - began) / n;
  began = now();
  for (i = 0; i < n; i++) ioctl(fds[0], FIONREAD, &pending);
  ioctl_ns = (now() - began) / n;
  printf("getppid %.1f ioctl %.1f\n", getppid_ns, ioctl_ns);
  return 0;
}
