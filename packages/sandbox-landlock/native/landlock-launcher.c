/*
 * landlock-launcher: restrict this process with Landlock and a seccomp filter, optionally switch to
 * a user, then exec the command in place (same pid, so signals sent to the process or its group
 * reach the tool itself).
 *
 *   landlock-launcher --seccomp-fd FD [--expect-abi N] [--ro PATH]... [--rw PATH]... [--ro-fd FD]...
 *                     [--rw-fd FD]... [--exec-fd FD] [--deny-tcp] [--user NAME[:GROUP]] -- CMD [ARGS...]
 *   landlock-launcher --abi        prints the Landlock ABI (0 when Landlock is missing)
 *   --max-abi N (before either)    lowers the ABI it works with: for degradation tests only
 *
 * Nothing is read from the environment: the launcher is started with a fixed clean one, and the
 * tool's own reaches the tool through the runtime's final exec stage (the command given here).
 * --expect-abi N: refuse unless the ABI applied is exactly N (the one toolvisor qualified the tool
 * at), so a tool never runs under fewer restrictions than its qualification promised.
 * --ro-fd/--rw-fd: a rule for a descriptor the runtime opened and checked against what it
 * qualified at load (a grant swapped for a symlink is refused there); the descriptor is closed.
 * --exec-fd: allow reading and executing the file behind that descriptor (the final exec stage
 * runs from /proc/self/fd/FD); it stays open for that exec.
 *
 * --seccomp-fd FD (required): the seccomp program to install, a raw struct sock_filter[] read from
 * FD to its end (the runtime writes it and closes its side); the descriptor is closed. The
 * program is @toolvisor/syscall-filter's allowlist, built in TypeScript: the one source of truth
 * for both mechanisms (the net: none variant is what refuses every socket family). It is
 * installed right before landlock_restrict_self, after every other step, so nothing the launcher
 * does itself needs to be on it but landlock_restrict_self, close and execve.
 *
 * Fails closed: when anything cannot be set up exactly as asked, it prints one line
 * "toolvisor-landlock: <what>: <why>" on stderr and exits 125 without running CMD.
 * Exec failure: 127 when CMD is not found, 126 otherwise.
 *
 * Order: parse, read the seccomp program, ask the ABI, build the ruleset (opening every rule path
 * as the caller), look the user up (NSS reads /etc), drop to the user, drop every capability when
 * still uid 0, PR_SET_PDEATHSIG (a uid change clears it), check the parent is still there,
 * PR_SET_NO_NEW_PRIVS, seccomp, landlock_restrict_self, execvp.
 *
 * C99 + GNU, no libraries. Build: cc -std=gnu99 -O2 -Wall -Wextra -Werror -o landlock-launcher this.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#define PROG "toolvisor-landlock"
#define EXIT_SETUP 125

/* ---- Landlock uAPI, carried here: the distro headers lag the kernel (6.1 headers, 6.18 kernel). */

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444 /* same number on every architecture */
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

struct ll_ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net; /* ABI 4 */
  uint64_t scoped;             /* ABI 6 */
};

struct ll_path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1

#define FS_EXECUTE (1ULL << 0)
#define FS_WRITE_FILE (1ULL << 1)
#define FS_READ_FILE (1ULL << 2)
#define FS_READ_DIR (1ULL << 3)
#define FS_ABI1_ALL ((1ULL << 13) - 1) /* EXECUTE .. MAKE_SYM */
#define FS_REFER (1ULL << 13)          /* ABI 2 */
#define FS_TRUNCATE (1ULL << 14)       /* ABI 3 */
#define FS_IOCTL_DEV (1ULL << 15)      /* ABI 5 */
/* Rights that make sense on a non-directory; dir-only rights on a file make add_rule fail (EINVAL). */
#define FS_FILE_ONLY (FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV)
#define FS_READ_RULE (FS_EXECUTE | FS_READ_FILE | FS_READ_DIR)

#define NET_BIND_TCP (1ULL << 0)    /* ABI 4 */
#define NET_CONNECT_TCP (1ULL << 1) /* ABI 4 */

#define SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define SCOPE_SIGNAL (1ULL << 1)               /* ABI 6 */

/* ---- seccomp target architecture: the program is built for these two (and kills any other ABI) */

#if defined(__x86_64__) || (defined(__aarch64__) && defined(__AARCH64EL__))
#define SECCOMP_ARCH_SUPPORTED 1
#endif

/* ---- failing closed */

static void fail(const char *what, const char *why) __attribute__((noreturn));
static void fail(const char *what, const char *why) {
  fprintf(stderr, PROG ": %s: %s\n", what, why);
  exit(EXIT_SETUP);
}

static void fail_errno(const char *what) __attribute__((noreturn));
static void fail_errno(const char *what) { fail(what, strerror(errno)); }

/* Fails with "<flag> <value>: <why>"; `err` is an errno value, or 0 to use `why`. */
static void fail_on(const char *flag, const char *value, int err, const char *why) __attribute__((noreturn));
static void fail_on(const char *flag, const char *value, int err, const char *why) {
  fprintf(stderr, PROG ": %s %s: %s\n", flag, value, err != 0 ? strerror(err) : why);
  exit(EXIT_SETUP);
}

/* ---- ABI */

/* The kernel's Landlock ABI, 0 when Landlock is missing; `why` says why it is missing. */
static int kernel_abi(const char **why) {
  long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
  if (abi >= 1) return (int)abi;
  if (errno == ENOSYS)
    *why = "not built into this kernel (CONFIG_SECURITY_LANDLOCK is off)";
  else if (errno == EOPNOTSUPP)
    *why = "disabled at boot (add landlock to the lsm= kernel parameter)";
  else
    *why = strerror(errno);
  return 0;
}

/* Parses a non-negative number given to `flag`. */
static long number(const char *flag, const char *text) {
  char *end;
  long n;
  errno = 0;
  n = strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || n < 0 || n > INT_MAX) fail(flag, "not a non-negative integer");
  return n;
}

/* The ABI to work with: the kernel's, lowered by --max-abi (degradation tests; never raised). */
static int effective_abi(long max, const char **why) {
  int abi = kernel_abi(why);
  if (max < 0) return abi;
  if (max == 0 && abi > 0) *why = "hidden by --max-abi 0";
  return max < abi ? (int)max : abi;
}

/* Every filesystem right this ABI knows: handled means denied unless a rule grants it. */
static uint64_t fs_rights(int abi) {
  uint64_t r = FS_ABI1_ALL;
  if (abi >= 2) r |= FS_REFER;
  if (abi >= 3) r |= FS_TRUNCATE;
  if (abi >= 5) r |= FS_IOCTL_DEV;
  return r;
}

/* ---- rules */

/* A rule for the object behind `fd`; `what` names it in errors ("--ro /usr", "--rw-fd 7"). */
static void add_fd_rule(int ruleset, const char *flag, const char *what, int fd, uint64_t access) {
  struct ll_path_beneath_attr rule;
  struct stat st;
  if (fstat(fd, &st) != 0) fail_on(flag, what, errno, NULL);
  if (!S_ISDIR(st.st_mode)) access &= FS_FILE_ONLY;
  rule.allowed_access = access;
  rule.parent_fd = fd;
  if (syscall(__NR_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0) != 0) {
    fail_on(flag, what, errno, NULL);
  }
}

static void add_path_rule(int ruleset, const char *flag, const char *path, uint64_t access) {
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) fail_on(flag, path, errno, NULL);
  add_fd_rule(ruleset, flag, path, fd, access);
  close(fd);
}

/* A descriptor number given to `flag`; it must be open. */
static int descriptor(const char *flag, const char *text) {
  long fd = number(flag, text);
  if (fd < 3 || fcntl((int)fd, F_GETFD) < 0) fail_on(flag, text, 0, "not an open descriptor (>= 3)");
  return (int)fd;
}

/* ---- seccomp: the program toolvisor gives, read whole and installed as it is */

#define MAX_INSTRUCTIONS 4096 /* BPF_MAXINSNS: the kernel refuses longer programs */

struct filter {
  struct sock_filter insns[MAX_INSTRUCTIONS];
  unsigned short len;
};

/* Reads the program on the descriptor given to --seccomp-fd to its end, checks its size, closes it. */
static void read_filter(const char *text, struct filter *f) {
  int fd = descriptor("--seccomp-fd", text);
  char *bytes = (char *)f->insns, extra;
  size_t got = 0;
  for (;;) {
    ssize_t n = got < sizeof f->insns ? read(fd, bytes + got, sizeof f->insns - got) : read(fd, &extra, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_on("--seccomp-fd", text, errno, NULL);
    if (n == 0) break;
    if (got == sizeof f->insns) fail_on("--seccomp-fd", text, 0, "longer than 4096 instructions (BPF_MAXINSNS)");
    got += (size_t)n;
  }
  close(fd);
  if (got == 0) fail_on("--seccomp-fd", text, 0, "empty: no filter program was written to it");
  if (got % sizeof f->insns[0] != 0) {
    fail_on("--seccomp-fd", text, 0, "not a whole number of 8-byte instructions (struct sock_filter)");
  }
  f->len = (unsigned short)(got / sizeof f->insns[0]);
}

/* Installs it (no_new_privs is set already); the kernel checks the program and refuses a malformed one. */
static void install_filter(const char *text, struct filter *f) {
  struct sock_fprog prog = { .len = f->len, .filter = f->insns };
  char why[128];
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0) return;
  snprintf(why, sizeof why, "the kernel refused the filter program: %s", strerror(errno));
  fail_on("--seccomp-fd", text, 0, why);
}

/* ---- run_as */

struct target {
  char name[256];
  uid_t uid;
  gid_t gid;
};

/* The errno values getpwnam(3) and getgrnam(3) may leave when the name simply does not exist. */
static int not_found(int err) { return err == 0 || err == ENOENT || err == ESRCH || err == EBADF || err == EPERM; }

/* NAME[:GROUP], looked up before any privilege is dropped (NSS may read /etc and load modules). */
static void lookup_user(const char *spec, struct target *t) {
  const char *colon = strchr(spec, ':');
  size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
  struct passwd *pw;
  if (len == 0 || len >= sizeof t->name) fail_on("--user", spec, 0, "expected NAME or NAME:GROUP");
  memcpy(t->name, spec, len);
  t->name[len] = '\0';
  errno = 0;
  pw = getpwnam(t->name);
  if (pw == NULL) fail_on("--user", spec, not_found(errno) ? 0 : errno, "no such user");
  t->uid = pw->pw_uid;
  t->gid = pw->pw_gid;
  if (colon != NULL) {
    struct group *gr;
    if (colon[1] == '\0') fail_on("--user", spec, 0, "empty group after ':'");
    errno = 0;
    gr = getgrnam(colon + 1);
    if (gr == NULL) fail_on("--user", spec, not_found(errno) ? 0 : errno, "no such group");
    t->gid = gr->gr_gid;
  }
}

/* initgroups keeps the user's supplementary groups (Node's spawn({uid, gid}) would drop them). */
static void become(const struct target *t) {
  char what[320];
  snprintf(what, sizeof what, "drop privileges to %s", t->name);
  if (initgroups(t->name, t->gid) != 0) fail_errno(what);
  if (setgid(t->gid) != 0) fail_errno(what);
  if (setuid(t->uid) != 0) fail_errno(what);
  if (getuid() != t->uid || geteuid() != t->uid || getgid() != t->gid || getegid() != t->gid) {
    fail(what, "the ids did not change");
  }
  if (t->uid != 0 && setuid(0) == 0) fail(what, "setuid(0) still succeeds afterwards");
}

/* ---- capabilities */

/*
 * A tool left running as uid 0 gets no capability: Landlock does not cover mknod of a device inside
 * a write grant (then opening it), module loading, raw I/O or network administration, and root
 * would otherwise get every capability back at exec. Emptying the bounding set makes exec grant
 * none; ambient capabilities are cleared for every caller.
 */
static void drop_capabilities(void) {
  struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
  struct __user_cap_data_struct data[2];
  int cap;
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
    fail_errno("clear ambient capabilities");
  }
  if (geteuid() != 0) return;
  for (cap = 0; cap < 64; cap++) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0) continue;
    if (errno == EINVAL) break; /* past the kernel's last capability */
    fail_errno("drop capabilities");
  }
  memset(data, 0, sizeof data);
  if (syscall(SYS_capset, &header, data) != 0) fail_errno("drop capabilities");
}

/* ---- main */

int main(int argc, char **argv) {
  pid_t parent = getppid();
  const char *missing_why = "unknown";
  int abi, ruleset, cmd = -1, deny_tcp = 0, i, first = 1;
  long max_abi = -1, expect_abi = -1;
  const char *user = NULL, *seccomp_fd = NULL;
  static struct filter filter;
  struct ll_ruleset_attr attr;
  struct target target;

  if (argc >= 3 && strcmp(argv[1], "--max-abi") == 0) {
    max_abi = number("--max-abi", argv[2]);
    first = 3;
  }
  if (argc == first + 1 && strcmp(argv[first], "--abi") == 0) {
    abi = effective_abi(max_abi, &missing_why);
    if (abi == 0) fprintf(stderr, PROG ": Landlock: %s\n", missing_why);
    printf("%d\n", abi);
    return fflush(stdout) == 0 ? 0 : EXIT_SETUP;
  }

  /* First pass: flags, so every refusal happens before any rule is built. */
  for (i = first; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) {
      cmd = i + 1;
      break;
    }
    if (strcmp(a, "--ro") == 0 || strcmp(a, "--rw") == 0 || strcmp(a, "--user") == 0 ||
        strcmp(a, "--ro-fd") == 0 || strcmp(a, "--rw-fd") == 0 || strcmp(a, "--exec-fd") == 0 ||
        strcmp(a, "--expect-abi") == 0 || strcmp(a, "--seccomp-fd") == 0) {
      if (i + 1 >= argc) fail(a, "missing value");
      if (argv[i + 1][0] == '\0') fail(a, "empty value");
      if (strcmp(a, "--user") == 0) {
        if (user != NULL) fail(a, "given twice");
        user = argv[i + 1];
      } else if (strcmp(a, "--expect-abi") == 0) {
        expect_abi = number(a, argv[i + 1]);
      } else if (strcmp(a, "--seccomp-fd") == 0) {
        if (seccomp_fd != NULL) fail(a, "given twice");
        seccomp_fd = argv[i + 1];
      } else if (strcmp(a, "--ro-fd") == 0 || strcmp(a, "--rw-fd") == 0 || strcmp(a, "--exec-fd") == 0) {
        descriptor(a, argv[i + 1]);
      }
      i++;
    } else if (strcmp(a, "--deny-tcp") == 0) {
      deny_tcp = 1;
    } else {
      fail(a, "unknown option");
    }
  }
  if (cmd < 0) fail("usage", "missing -- before the command");
  if (cmd >= argc) fail("usage", "missing command after --");
#ifndef SECCOMP_ARCH_SUPPORTED
  fail("seccomp", "no filter for this architecture (x86_64 and little-endian aarch64 only)");
#endif
  if (seccomp_fd == NULL) fail("--seccomp-fd", "missing: the launcher installs only the filter program it is given");
  read_filter(seccomp_fd, &filter);

  abi = effective_abi(max_abi, &missing_why);
  if (abi == 0) fail("Landlock", missing_why);
  if (expect_abi >= 0 && abi != expect_abi) {
    char why[160];
    snprintf(why, sizeof why, "Landlock ABI %d applies here, toolvisor qualified the tool at ABI %ld: reload the tool",
             abi, expect_abi);
    fail("--expect-abi", why);
  }
  if (deny_tcp && abi < 4) {
    char why[96];
    snprintf(why, sizeof why, "needs Landlock ABI >= 4, this kernel has ABI %d", abi);
    fail("--deny-tcp", why);
  }

  memset(&attr, 0, sizeof attr);
  attr.handled_access_fs = fs_rights(abi);
  if (deny_tcp) attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP; /* no port rule: all denied */
  if (abi >= 6) attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL;
  /* Older kernels accept the larger struct as long as the fields they do not know are zero. */
  ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (ruleset < 0) fail_errno("landlock_create_ruleset");

  /* Second pass: rules, from paths opened with the caller's rights or from descriptors, before any uid change. */
  for (i = first; i < cmd - 1; i++) {
    const char *a = argv[i];
    char what[64];
    if (strcmp(a, "--ro") == 0) {
      add_path_rule(ruleset, a, argv[++i], FS_READ_RULE);
    } else if (strcmp(a, "--rw") == 0) {
      add_path_rule(ruleset, a, argv[++i], attr.handled_access_fs);
    } else if (strcmp(a, "--ro-fd") == 0 || strcmp(a, "--rw-fd") == 0 || strcmp(a, "--exec-fd") == 0) {
      int fd = descriptor(a, argv[++i]);
      uint64_t access = strcmp(a, "--rw-fd") == 0 ? attr.handled_access_fs
                        : strcmp(a, "--ro-fd") == 0 ? FS_READ_RULE
                                                    : FS_EXECUTE | FS_READ_FILE;
      snprintf(what, sizeof what, "%d", fd);
      add_fd_rule(ruleset, a, what, fd, access);
      if (strcmp(a, "--exec-fd") != 0) close(fd);
    } else if (strcmp(a, "--user") == 0 || strcmp(a, "--expect-abi") == 0 || strcmp(a, "--seccomp-fd") == 0) {
      i++;
    }
  }

  if (user != NULL) {
    lookup_user(user, &target);
    become(&target);
  }
  drop_capabilities();

  /* After the uid change, which clears it; then make sure the parent did not die before it was set. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) fail_errno("PR_SET_PDEATHSIG");
  if (getppid() != parent) fail("PR_SET_PDEATHSIG", "the parent process already exited");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail_errno("PR_SET_NO_NEW_PRIVS");
  install_filter(seccomp_fd, &filter);
  if (syscall(__NR_landlock_restrict_self, ruleset, 0) != 0) fail_errno("landlock_restrict_self");
  close(ruleset);

  execvp(argv[cmd], argv + cmd);
  {
    int err = errno;
    fprintf(stderr, PROG ": exec %s: %s\n", argv[cmd], strerror(err));
    return err == ENOENT ? 127 : 126;
  }
}
