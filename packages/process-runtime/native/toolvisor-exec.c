/*
 * toolvisor-exec: the final exec into a tool. Every process the runtime starts reaches its tool
 * through this program, run last, right before the tool itself (after bwrap, the Landlock
 * launcher, setpriv or runuser when those wrap the launch):
 *
 *   toolvisor-exec [--foreground] [--status-fd S] [--env-bytes L] [--env-fd N] -- FILE [ARGS...]
 *
 * 1. reads the tool's environment from descriptor N (NUL-separated NAME=VALUE entries: L bytes
 *    when `--env-bytes L` comes first, else up to end of file) and closes N, unless N is S (given
 *    before it: one socket both ways, the environment in and a failed exec out): the environment reaches the tool only, never the privileged
 *    helpers before it, which all start with a fixed clean environment (LD_PRELOAD and friends
 *    in a tool's declared environment must not run code in bwrap or setpriv as root);
 * 2. closes every descriptor from 3 up (whatever toolvisor's own parent left open must not reach
 *    a tool: a directory descriptor is the whole host filesystem through openat);
 * 3. execs FILE with exactly that environment (no PATH search: FILE is absolute). Descriptor S
 *    (when given) is kept open, close-on-exec, until then: an exec that fails writes
 *    "errno=<n> <message>" on it, one that succeeds closes it, so the runtime can tell a tool that
 *    could not start from one that ran and failed, through any wrapper.
 *
 * With `--foreground` (a launch on a terminal) it first puts the tool's process group in the
 * terminal's foreground (see `take_foreground`).
 *
 * The runtime usually runs this program as /proc/self/fd/K, from a descriptor it opened, so it
 * can start inside a sandbox and as another user wherever the package is installed.
 *
 * Fails closed: a setup problem prints "toolvisor-exec: <what>: <why>" on stderr and exits 125
 * without running FILE. Exec failure: 127 when FILE does not exist, 126 otherwise.
 *
 * Built two ways from this one source, the logic written once against a few system calls:
 * freestanding (TOOLVISOR_FREESTANDING: no C library, its own _start, raw system calls on x86-64
 * and AArch64 Linux), which the build tries first because it is what makes the extra exec cheap
 * (a static C library's start-up probes the CPU, a trap to the hypervisor in a VM: most of the
 * cost of this program); else C99 + GNU over the C library, linked statically when it can.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#define PROG "toolvisor-exec"
#define EXIT_SETUP 125
/* The most environment a tool may be given: far above any real one, bounded all the same. */
#define MAX_ENV_BYTES (16 * 1024 * 1024)

/* ---- the system calls, each returning -errno on failure ---------------------------------- */
#ifdef TOOLVISOR_FREESTANDING
#if defined(__x86_64__)
static long sys6(long n, long a, long b, long c, long d, long e, long f) {
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  register long r9 __asm__("r9") = f;
  long ret;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return ret;
}
__asm__(".text\n.global _start\n_start:\n xor %rbp,%rbp\n mov %rsp,%rdi\n and $-16,%rsp\n call start_c\n hlt\n");
#elif defined(__aarch64__)
static long sys6(long n, long a, long b, long c, long d, long e, long f) {
  register long x8 __asm__("x8") = n;
  register long x0 __asm__("x0") = a;
  register long x1 __asm__("x1") = b;
  register long x2 __asm__("x2") = c;
  register long x3 __asm__("x3") = d;
  register long x4 __asm__("x4") = e;
  register long x5 __asm__("x5") = f;
  __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory");
  return x0;
}
__asm__(".text\n.global _start\n_start:\n mov x29, #0\n mov x0, sp\n bl start_c\n brk #0\n");
#else
#error "TOOLVISOR_FREESTANDING: only x86-64 and AArch64 Linux"
#endif
#define sys3(n, a, b, c) sys6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)
static long x_read(int fd, void *buffer, size_t size) { return sys3(SYS_read, fd, buffer, size); }
static long x_write(int fd, const void *buffer, size_t size) { return sys3(SYS_write, fd, buffer, size); }
static long x_close(int fd) { return sys3(SYS_close, fd, 0, 0); }
static long x_open_dir(const char *path) { return sys6(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0, 0, 0); }
static long x_getdents(int fd, void *buffer, size_t size) { return sys3(SYS_getdents64, fd, buffer, size); }
static long x_cloexec(int fd) { return sys3(SYS_fcntl, fd, F_SETFD, FD_CLOEXEC); }
static long x_close_range(unsigned from, unsigned to) { return sys3(SYS_close_range, from, to, 0); }
static long x_execve(const char *file, char **argv, char **env) { return sys3(SYS_execve, file, argv, env); }
static long x_call(long n, long a, long b, long c, long d) { return sys6(n, a, b, c, d, 0, 0); }
static long x_fd_limit(void) {
  unsigned long limit[2]; /* struct rlimit: current, maximum */
  long r = sys6(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, (long)limit, 0, 0);
  return r < 0 ? 65536 : (long)limit[0];
}
static void *x_map(size_t size) {
  long at = sys6(SYS_mmap, 0, (long)size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return at < 0 && at > -4096 ? NULL : (void *)at;
}
static void x_exit(int code) __attribute__((noreturn));
static void x_exit(int code) {
  for (;;) sys3(SYS_exit_group, code, 0, 0);
}
/* What the compiler may call on its own for copies and zeroing. */
void *memset(void *to, int value, size_t size) {
  unsigned char *p = to;
  while (size-- > 0) *p++ = (unsigned char)value;
  return to;
}
void *memcpy(void *to, const void *from, size_t size) {
  unsigned char *p = to;
  const unsigned char *q = from;
  while (size-- > 0) *p++ = *q++;
  return to;
}
#else
#include <stdlib.h>
#include <unistd.h>
static long result(long r) { return r < 0 ? -errno : r; }
static long x_read(int fd, void *buffer, size_t size) { return result(read(fd, buffer, size)); }
static long x_write(int fd, const void *buffer, size_t size) { return result(write(fd, buffer, size)); }
static long x_close(int fd) { return result(close(fd)); }
static long x_open_dir(const char *path) { return result(open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)); }
static long x_getdents(int fd, void *buffer, size_t size) { return result(syscall(SYS_getdents64, fd, buffer, size)); }
static long x_cloexec(int fd) { return result(fcntl(fd, F_SETFD, FD_CLOEXEC)); }
#ifdef SYS_close_range
static long x_close_range(unsigned from, unsigned to) { return result(syscall(SYS_close_range, from, to, 0U)); }
#else
static long x_close_range(unsigned from, unsigned to) { (void)from, (void)to; return -ENOSYS; }
#endif
static long x_execve(const char *file, char **argv, char **env) { return result(execve(file, argv, env)); }
static long x_call(long n, long a, long b, long c, long d) { return result(syscall(n, a, b, c, d)); }
static long x_fd_limit(void) {
  long max = sysconf(_SC_OPEN_MAX);
  return max > 0 ? max : 65536;
}
static void *x_map(size_t size) {
  void *at = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return at == MAP_FAILED ? NULL : at;
}
static void x_exit(int code) __attribute__((noreturn));
static void x_exit(int code) { _exit(code); }
#endif

/* ---- small helpers the C library would give --------------------------------------------- */
static size_t length_of(const char *text) {
  size_t n = 0;
  while (text[n] != '\0') n++;
  return n;
}

static int same(const char *a, const char *b) {
  while (*a != '\0' && *a == *b) a++, b++;
  return *a == *b;
}

static void say(int fd, const char *text) { (void)!x_write(fd, text, length_of(text)); }

/* The message of the errors an exec or a setup step meets; the runtime names the errno itself. */
static const char *message_of(long err) {
  switch (err) {
    case ENOENT: return "No such file or directory";
    case EACCES: return "Permission denied";
    case EPERM: return "Operation not permitted";
    case ENOEXEC: return "Exec format error";
    case ENOTDIR: return "Not a directory";
    case EISDIR: return "Is a directory";
    case ELOOP: return "Too many levels of symbolic links";
    case ENAMETOOLONG: return "File name too long";
    case E2BIG: return "Argument list too long";
    case ENOMEM: return "Cannot allocate memory";
    case ETXTBSY: return "Text file busy";
    case EBADF: return "Bad file descriptor";
    case EINVAL: return "Invalid argument";
    case EMFILE: return "Too many open files";
    default: return "error";
  }
}

/* `n` in decimal into `out` (at least 24 bytes); returns the text. */
static char *decimal(long n, char *out) {
  char *p = out + 23;
  int negative = n < 0;
  unsigned long u = negative ? 0UL - (unsigned long)n : (unsigned long)n;
  *p = '\0';
  do *--p = (char)('0' + u % 10); while ((u /= 10) != 0);
  if (negative) *--p = '-';
  return p;
}

static void fail(const char *what, const char *why) __attribute__((noreturn));
static void fail(const char *what, const char *why) {
  say(2, PROG ": "), say(2, what), say(2, ": "), say(2, why), say(2, "\n");
  x_exit(EXIT_SETUP);
}

/* A whole number of `text` from `least` up to INT_MAX, else a setup failure saying `expected`. */
static long parse_number(const char *flag, const char *text, long least, const char *expected) {
  long n = 0;
  const char *p = text;
  if (*p == '\0') fail(flag, expected);
  for (; *p != '\0'; p++) {
    if (*p < '0' || *p > '9' || n > 0x7fffffffL / 10) fail(flag, expected);
    n = n * 10 + (*p - '0');
  }
  if (n < least || n > 0x7fffffffL) fail(flag, expected);
  return n;
}

static int parse_fd(const char *flag, const char *text) {
  return (int)parse_number(flag, text, 3, "expected a descriptor number >= 3");
}

/*
 * Reads `expected` bytes of `fd` (or, when it is negative, all of it up to end of file; at most
 * MAX_ENV_BYTES either way) into a NUL-terminated buffer; `*length` gets its size.
 */
static char *read_all(int fd, long expected, size_t *length) {
  /* Reserved, not committed: only the pages the environment fills are ever touched. */
  char *buffer = x_map(MAX_ENV_BYTES + 1);
  size_t used = 0;
  if (buffer == NULL) fail("--env-fd", "out of memory");
  if (expected > MAX_ENV_BYTES) fail("--env-bytes", "the environment is larger than 16 MiB");
  while (expected < 0 || used < (size_t)expected) {
    long n;
    if (used == MAX_ENV_BYTES) fail("--env-fd", "the environment is larger than 16 MiB");
    n = x_read(fd, buffer + used, (expected < 0 ? MAX_ENV_BYTES : (size_t)expected) - used);
    if (n == -EINTR) continue;
    if (n < 0) fail("--env-fd", message_of(-n));
    if (n == 0 && expected >= 0) fail("--env-fd", "the environment ended before --env-bytes");
    if (n == 0) break;
    used += (size_t)n;
  }
  buffer[used] = '\0';
  *length = used;
  return buffer;
}

/* The NULL-terminated array of the entries of a NUL-separated block. */
static char **entries_of(char *block, size_t length) {
  size_t count = 0, i, at = 0;
  char **list;
  for (i = 0; i < length; i++)
    if (block[i] == '\0') count++;
  if (length > 0 && block[length - 1] != '\0') count++;
  list = x_map((count + 1) * sizeof *list);
  if (list == NULL) fail("--env-fd", "out of memory");
  for (i = 0; i < count; i++) {
    const char *entry = block + at;
    const char *p = entry;
    list[i] = block + at;
    at += length_of(entry) + 1;
    while (*p != '\0' && *p != '=') p++;
    if (*p != '=') fail("--env-fd", "an entry without '='");
  }
  list[count] = NULL;
  return list;
}

/*
 * Closes every descriptor from 3 up but `keep`: close_range where the kernel has it (5.9), else
 * those /proc/self/fd lists, else each one below the descriptor limit.
 */
static void close_from_3(int keep) {
  unsigned below = keep < 0 ? ~0U : (unsigned)keep - 1; /* the range before `keep` */
  int ok = keep == 3 || x_close_range(3U, below) == 0;
  if (ok && keep >= 3) ok = x_close_range((unsigned)keep + 1, ~0U) == 0;
  if (ok) return;
  {
    char entries[4096];
    long dir = x_open_dir("/proc/self/fd"), n, fd, limit;
    if (dir < 0) {
      for (fd = 3, limit = x_fd_limit(); fd < limit; fd++)
        if (fd != keep) x_close((int)fd);
      return;
    }
    while ((n = x_getdents(dir, entries, sizeof entries)) > 0) {
      long at = 0;
      while (at < n) {
        /* struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name */
        unsigned short size = *(unsigned short *)(entries + at + 16);
        const char *name = entries + at + 19;
        fd = 0;
        for (; *name >= '0' && *name <= '9'; name++) fd = fd * 10 + (*name - '0');
        if (*name == '\0' && name != entries + at + 19 && fd >= 3 && fd != dir && fd != keep) x_close((int)fd);
        at += size;
      }
    }
    if (n < 0) fail("/proc/self/fd", message_of(-n));
    x_close((int)dir);
  }
}

/* The kernel's numbers (the same on x86-64 and AArch64), without the C library's headers. */
#define SIGTTOU_BIT (1UL << (22 - 1))
#define HOW_BLOCK 0
#define HOW_SETMASK 2
#define TIOCSPGRP_REQUEST 0x5410

/*
 * `--foreground`: on a terminal (decision 0110), the tool's process group becomes the one in the
 * terminal's foreground, unless it leads the terminal's session already (then it is). Under bwrap
 * the tool is a child of bwrap, which led the session: ^C would be SIGINT to bwrap, which dies of
 * it, instead of to the program, which may handle it (a REPL, an editor). SIGTTOU is blocked
 * meanwhile (a background group taking the terminal is sent it) and the mask put back before the
 * exec, which would carry it over.
 */
static void take_foreground(void) {
  long pid = x_call(SYS_getpid, 0, 0, 0, 0);
  if (x_call(SYS_getsid, 0, 0, 0, 0) == pid) return;
  long err = x_call(SYS_setpgid, 0, 0, 0, 0);
  if (err < 0) fail("--foreground", message_of(-err));
  unsigned long block = SIGTTOU_BIT, old = 0;
  x_call(SYS_rt_sigprocmask, HOW_BLOCK, (long)&block, (long)&old, sizeof block);
  int group = (int)pid;
  err = x_call(SYS_ioctl, 0, TIOCSPGRP_REQUEST, (long)&group, 0);
  x_call(SYS_rt_sigprocmask, HOW_SETMASK, (long)&old, 0, sizeof old);
  if (err < 0) fail("--foreground", message_of(-err));
}

static int run(int argc, char **argv, char **environment) {
  char **env = NULL;
  int i, cmd = -1, status = -1, foreground = 0;
  long err, expected = -1;
  for (i = 1; i < argc; i++) {
    if (same(argv[i], "--")) {
      cmd = i + 1;
      break;
    }
    if (same(argv[i], "--foreground")) {
      foreground = 1;
    } else if (same(argv[i], "--status-fd") && i + 1 < argc) {
      status = parse_fd("--status-fd", argv[++i]);
    } else if (same(argv[i], "--env-bytes") && i + 1 < argc) {
      expected = parse_number("--env-bytes", argv[++i], 0, "expected a number of bytes");
    } else if (same(argv[i], "--env-fd") && i + 1 < argc) {
      size_t length;
      int fd = parse_fd("--env-fd", argv[++i]);
      char *block = read_all(fd, expected, &length);
      if (fd != status) x_close(fd);
      env = entries_of(block, length);
    } else {
      fail(argv[i], "unknown option (usage: " PROG " [--foreground] [--status-fd S] [--env-bytes L] [--env-fd N] -- FILE [ARGS...])");
    }
  }
  if (cmd < 0 || cmd >= argc) fail("usage", "missing -- FILE");
  if (argv[cmd][0] != '/') fail(argv[cmd], "the file must be an absolute path");
  close_from_3(status);
  if (foreground) take_foreground();
  if (status >= 0 && (err = x_cloexec(status)) != 0) fail("--status-fd", message_of(-err));
  err = -x_execve(argv[cmd], argv + cmd, env != NULL ? env : environment);
  {
    char digits[24];
    /* The runtime reports it; stderr stays the tool's. If it is gone, the exit code says it. */
    if (status < 0 || x_write(status, "errno=", 6) < 0) {
      say(2, PROG ": exec "), say(2, argv[cmd]), say(2, ": "), say(2, message_of(err)), say(2, "\n");
    } else {
      say(status, decimal(err, digits)), say(status, " "), say(status, message_of(err));
    }
    return err == ENOENT ? 127 : 126;
  }
}

#ifdef TOOLVISOR_FREESTANDING
/* The kernel's initial stack: argc, argv..., NULL, envp..., NULL. */
__attribute__((used, noreturn)) void start_c(long *stack) {
  int argc = (int)stack[0];
  char **argv = (char **)(stack + 1);
  x_exit(run(argc, argv, argv + argc + 1));
}
#else
extern char **environ;
int main(int argc, char **argv) { return run(argc, argv, environ); }
#endif
