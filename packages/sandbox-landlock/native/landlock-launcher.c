/*
 * landlock-launcher: restrict this process with Landlock (and optionally a seccomp socket filter),
 * optionally switch to a user, then exec the command in place (same pid, so signals sent to the
 * process or its group reach the tool itself).
 *
 *   landlock-launcher [--ro PATH]... [--rw PATH]... [--deny-tcp] [--no-inet]
 *                     [--user NAME[:GROUP]] -- CMD [ARGS...]
 *   landlock-launcher --abi        prints the Landlock ABI (0 when Landlock is missing)
 *
 * Fails closed: when anything cannot be set up exactly as asked, it prints one line
 * "toolvisor-landlock: <what>: <why>" on stderr and exits 125 without running CMD.
 * Exec failure: 127 when CMD is not found, 126 otherwise. LL_MAX_ABI=n clamps the ABI (tests).
 *
 * Order: parse, ask the ABI, build the ruleset (opening every rule path as the caller), look the
 * user up (NSS reads /etc), drop to the user, drop every capability when still uid 0,
 * PR_SET_PDEATHSIG (a uid change clears it), check the parent is still there, PR_SET_NO_NEW_PRIVS,
 * seccomp, landlock_restrict_self, execvp.
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>
#include <linux/audit.h>
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
#define FS_RESOLVE_UNIX (1ULL << 16)   /* ABI 9: connect/sendmsg to pathname unix sockets */
/* Rights that make sense on a non-directory; dir-only rights on a file make add_rule fail (EINVAL). */
#define FS_FILE_ONLY \
  (FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV | FS_RESOLVE_UNIX)
#define FS_READ_RULE (FS_EXECUTE | FS_READ_FILE | FS_READ_DIR)

#define NET_BIND_TCP (1ULL << 0)    /* ABI 4 */
#define NET_CONNECT_TCP (1ULL << 1) /* ABI 4 */

#define SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define SCOPE_SIGNAL (1ULL << 1)               /* ABI 6 */

/* ---- seccomp target architecture */

#if defined(__x86_64__)
#define SECCOMP_ARCH AUDIT_ARCH_X86_64
#define X32_SYSCALL_BIT 0x40000000U
#elif defined(__aarch64__) && defined(__AARCH64EL__)
#define SECCOMP_ARCH AUDIT_ARCH_AARCH64
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG0_LOW offsetof(struct seccomp_data, args[0])
#else
#define ARG0_LOW (offsetof(struct seccomp_data, args[0]) + 4)
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

/* The ABI to work with: the kernel's, lowered by LL_MAX_ABI=n (degradation tests; never raised). */
static int effective_abi(const char **why) {
  const char *s = getenv("LL_MAX_ABI");
  char *end;
  long n;
  int abi = kernel_abi(why);
  if (s == NULL || *s == '\0') return abi;
  errno = 0;
  n = strtol(s, &end, 10);
  if (errno != 0 || *end != '\0' || n < 0 || n > INT_MAX) fail("LL_MAX_ABI", "not a non-negative integer");
  if (n == 0 && abi > 0) *why = "hidden by LL_MAX_ABI=0";
  return n < abi ? (int)n : abi;
}

/* Every filesystem right this ABI knows: handled means denied unless a rule grants it. */
static uint64_t fs_rights(int abi) {
  uint64_t r = FS_ABI1_ALL;
  if (abi >= 2) r |= FS_REFER;
  if (abi >= 3) r |= FS_TRUNCATE;
  if (abi >= 5) r |= FS_IOCTL_DEV;
  if (abi >= 9) r |= FS_RESOLVE_UNIX;
  return r;
}

/* ---- rules */

static void add_path_rule(int ruleset, const char *flag, const char *path, uint64_t access) {
  struct ll_path_beneath_attr rule;
  struct stat st;
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0 || fstat(fd, &st) != 0) fail_on(flag, path, errno, NULL);
  if (!S_ISDIR(st.st_mode)) access &= FS_FILE_ONLY;
  rule.allowed_access = access;
  rule.parent_fd = fd;
  if (syscall(__NR_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0) != 0) {
    fail_on(flag, path, errno, NULL);
  }
  close(fd);
}

/* ---- seccomp: no socket but AF_UNIX, no io_uring (it can create sockets), native ABI only */

static void deny_inet(void) {
#ifdef SECCOMP_ARCH
  struct sock_filter filter[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SECCOMP_ARCH, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS), /* i386/arm32 entry: socketcall bypass */
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#ifdef X32_SYSCALL_BIT
    BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 0, 1), /* x32 numbers: refused */
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
#endif
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 2, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socketpair, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LOW), /* the domain is an int: the low word */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
  };
  struct sock_fprog prog = { .len = (unsigned short)(sizeof filter / sizeof filter[0]), .filter = filter };
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) fail_errno("--no-inet: seccomp");
#else
  fail("--no-inet", "no seccomp filter for this architecture (x86_64 and little-endian aarch64 only)");
#endif
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
  int abi, ruleset, cmd = -1, deny_tcp = 0, no_inet = 0, i;
  const char *user = NULL;
  struct ll_ruleset_attr attr;
  struct target target;

  if (argc == 2 && strcmp(argv[1], "--abi") == 0) {
    abi = effective_abi(&missing_why);
    if (abi == 0) fprintf(stderr, PROG ": Landlock: %s\n", missing_why);
    printf("%d\n", abi);
    return fflush(stdout) == 0 ? 0 : EXIT_SETUP;
  }

  /* First pass: flags, so every refusal happens before any rule is built. */
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) {
      cmd = i + 1;
      break;
    }
    if (strcmp(a, "--ro") == 0 || strcmp(a, "--rw") == 0 || strcmp(a, "--user") == 0) {
      if (i + 1 >= argc) fail(a, "missing value");
      if (argv[i + 1][0] == '\0') fail(a, "empty value");
      if (strcmp(a, "--user") == 0) {
        if (user != NULL) fail(a, "given twice");
        user = argv[i + 1];
      }
      i++;
    } else if (strcmp(a, "--deny-tcp") == 0) {
      deny_tcp = 1;
    } else if (strcmp(a, "--no-inet") == 0) {
      no_inet = 1;
    } else {
      fail(a, "unknown option");
    }
  }
  if (cmd < 0) fail("usage", "missing -- before the command");
  if (cmd >= argc) fail("usage", "missing command after --");
#ifndef SECCOMP_ARCH
  if (no_inet) deny_inet(); /* refuses: no filter for this architecture */
#endif

  abi = effective_abi(&missing_why);
  if (abi == 0) fail("Landlock", missing_why);
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

  /* Second pass: rule paths, opened with the caller's rights, before any uid change. */
  for (i = 1; i < cmd - 1; i++) {
    if (strcmp(argv[i], "--ro") == 0) {
      add_path_rule(ruleset, "--ro", argv[++i], FS_READ_RULE);
    } else if (strcmp(argv[i], "--rw") == 0) {
      add_path_rule(ruleset, "--rw", argv[++i], attr.handled_access_fs);
    } else if (strcmp(argv[i], "--user") == 0) {
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
  if (no_inet) deny_inet();
  if (syscall(__NR_landlock_restrict_self, ruleset, 0) != 0) fail_errno("landlock_restrict_self");
  close(ruleset);

  execvp(argv[cmd], argv + cmd);
  {
    int err = errno;
    fprintf(stderr, PROG ": exec %s: %s\n", argv[cmd], strerror(err));
    return err == ENOENT ? 127 : 126;
  }
}
