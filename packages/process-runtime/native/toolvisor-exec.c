/*
 * toolvisor-exec: the final exec into a tool. Every process the runtime starts reaches its tool
 * through this program, run last, right before the tool itself (after bwrap, the Landlock
 * launcher, setpriv or runuser when those wrap the launch):
 *
 *   toolvisor-exec [--env-fd N] [--status-fd S] -- FILE [ARGS...]
 *
 * 1. reads the tool's environment from descriptor N (NUL-separated NAME=VALUE entries, up to
 *    end of file) and closes N: the environment reaches the tool only, never the privileged
 *    helpers before it, which all start with a fixed clean environment (LD_PRELOAD and friends
 *    in a tool's declared environment must not run code in bwrap or setpriv as root);
 * 2. closes every descriptor from 3 up (whatever toolvisor's own parent left open must not reach
 *    a tool: a directory descriptor is the whole host filesystem through openat);
 * 3. execs FILE with exactly that environment (no PATH search: FILE is absolute). Descriptor S
 *    (when given) is kept open, close-on-exec, until then: an exec that fails writes
 *    "errno=<n> <message>" on it, one that succeeds closes it, so the runtime can tell a tool that
 *    could not start from one that ran and failed, through any wrapper.
 *
 * The runtime usually runs this program as /proc/self/fd/K, from a descriptor it opened, so it
 * can start inside a sandbox and as another user wherever the package is installed.
 *
 * Fails closed: a setup problem prints "toolvisor-exec: <what>: <why>" on stderr and exits 125
 * without running FILE. Exec failure: 127 when FILE does not exist, 126 otherwise.
 *
 * C99 + GNU, no libraries, linked statically when the toolchain can (a faster start).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PROG "toolvisor-exec"
#define EXIT_SETUP 125
/* The most environment a tool may be given: far above any real one, bounded all the same. */
#define MAX_ENV_BYTES (16 * 1024 * 1024)

static void fail(const char *what, const char *why) __attribute__((noreturn));
static void fail(const char *what, const char *why) {
  fprintf(stderr, PROG ": %s: %s\n", what, why);
  exit(EXIT_SETUP);
}

static int parse_fd(const char *flag, const char *text) {
  char *end;
  long n;
  errno = 0;
  n = strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || n < 3 || n > INT_MAX) fail(flag, "expected a descriptor number >= 3");
  return (int)n;
}

/* Reads all of `fd` into a NUL-terminated buffer; `*length` gets its size. */
static char *read_all(int fd, size_t *length) {
  size_t size = 4096, used = 0;
  char *buffer = malloc(size + 1);
  if (buffer == NULL) fail("--env-fd", "out of memory");
  for (;;) {
    ssize_t n;
    if (used == size) {
      if (size >= MAX_ENV_BYTES) fail("--env-fd", "the environment is larger than 16 MiB");
      size *= 2;
      buffer = realloc(buffer, size + 1);
      if (buffer == NULL) fail("--env-fd", "out of memory");
    }
    n = read(fd, buffer + used, size - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("--env-fd", strerror(errno));
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
  list = calloc(count + 1, sizeof *list);
  if (list == NULL) fail("--env-fd", "out of memory");
  for (i = 0; i < count; i++) {
    list[i] = block + at;
    at += strlen(block + at) + 1;
    if (strchr(list[i], '=') == NULL) fail("--env-fd", "an entry without '='");
  }
  return list;
}

/* Closes every descriptor from 3 up but `keep`: close_range where the kernel has it (5.9), else one by one. */
static void close_from_3(int keep) {
#ifdef SYS_close_range
  {
    unsigned below = keep < 0 ? ~0U : (unsigned)keep - 1; /* the range before `keep` */
    int ok = keep == 3 || syscall(SYS_close_range, 3U, below, 0U) == 0;
    if (ok && keep >= 3) ok = syscall(SYS_close_range, (unsigned)keep + 1, ~0U, 0U) == 0;
    if (ok) return;
  }
#endif
  {
    DIR *dir = opendir("/proc/self/fd");
    struct dirent *entry;
    int own;
    if (dir == NULL) {
      long fd, max = sysconf(_SC_OPEN_MAX);
      for (fd = 3; fd < (max > 0 ? max : 65536); fd++)
        if (fd != keep) close((int)fd);
      return;
    }
    own = dirfd(dir);
    while ((entry = readdir(dir)) != NULL) {
      int fd = atoi(entry->d_name);
      if (fd >= 3 && fd != own && fd != keep) close(fd);
    }
    closedir(dir);
  }
}

int main(int argc, char **argv) {
  char **env = NULL;
  int i, cmd = -1, status = -1;
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) {
      cmd = i + 1;
      break;
    }
    if (strcmp(argv[i], "--status-fd") == 0 && i + 1 < argc) {
      status = parse_fd("--status-fd", argv[++i]);
    } else if (strcmp(argv[i], "--env-fd") == 0 && i + 1 < argc) {
      size_t length;
      int fd = parse_fd("--env-fd", argv[++i]);
      char *block = read_all(fd, &length);
      close(fd);
      env = entries_of(block, length);
    } else {
      fail(argv[i], "unknown option (usage: " PROG " [--env-fd N] [--status-fd S] -- FILE [ARGS...])");
    }
  }
  if (cmd < 0 || cmd >= argc) fail("usage", "missing -- FILE");
  if (argv[cmd][0] != '/') fail(argv[cmd], "the file must be an absolute path");
  close_from_3(status);
  if (status >= 0 && fcntl(status, F_SETFD, FD_CLOEXEC) != 0) fail("--status-fd", strerror(errno));
  execve(argv[cmd], argv + cmd, env != NULL ? env : environ);
  {
    int err = errno;
    if (status >= 0) {
      char line[256];
      int len = snprintf(line, sizeof line, "errno=%d %s", err, strerror(err));
      /* The runtime reports it; stderr stays the tool's. If it is gone, the exit code says it. */
      if (write(status, line, (size_t)len) >= 0) return err == ENOENT ? 127 : 126;
    }
    fprintf(stderr, PROG ": exec %s: %s\n", argv[cmd], strerror(err));
    return err == ENOENT ? 127 : 126;
  }
}
