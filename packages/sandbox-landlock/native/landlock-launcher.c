/*
 * landlock-launcher: restrict a tool with Landlock and a seccomp filter, optionally as another
 * user, and keep everything the tool starts inside something it cannot shed: a pid namespace of
 * its own, or (where none can be made) a child subreaper that kills what the tool left.
 *
 *   landlock-launcher --seccomp-fd FD [--expect-abi N] [--ro PATH]... [--rw PATH]... [--ro-fd FD]...
 *                     [--rw-fd FD]... [--exec-fd FD] [--deny-tcp | [--tcp-connect PORT]... [--tcp-bind PORT]...]
 *                     [--user NAME[:GROUP]] [--pid-ns [--ro-over PATH]... [--null-over PATH]... [--null-dir-over PATH]...]
 *                     -- CMD [ARGS...]
 *   landlock-launcher --abi        prints the Landlock ABI (0 when Landlock is missing)
 *   landlock-launcher --features   one "name value" line per feature: "abi N", then "pid-ns yes" or
 *                                  "pid-ns no: <why>" (found by making one, as a launch would)
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
 * --deny-tcp: TCP bind and connect handled with no port rule, so every port is denied (ABI >= 4).
 * --tcp-connect PORT, --tcp-bind PORT (each repeatable, PORT 1..65535; not with --deny-tcp): TCP
 * bind and connect handled, and one port rule per flag allowing connect (a network allow list's
 * proxy) or bind (a published port) on that port, whatever the address: Landlock rules are per
 * port. Every other port is denied (EACCES). Needs ABI >= 4: refused (125) below, never ignored.
 * --pid-ns: the tool runs in new pid, mount and IPC namespaces (and a user namespace mapping only
 * the caller's own ids when the caller is not privileged); refused (125) when they cannot be made,
 * so what runs is what was qualified. Without it the subreaper is used (no namespace is tried: one
 * half made, the proc mount refused as in a container with a masked /proc, cannot be undone).
 * --ro-over PATH: PATH (a directory or a regular file, reached without any symlink) is made
 * read-only inside the mount namespace, recursively. --null-over PATH: where PATH is missing, an
 * empty regular file is created there (left for the runtime to remove after the run) and made
 * read-only, so the tool cannot create PATH; an existing PATH is protected as --ro-over does. Every
 * directory between a write grant and PATH is made a mount point first (EBUSY to rename or remove:
 * the tool cannot move a parent aside and build a new PATH). --null-dir-over PATH: the same with an
 * empty directory (mode 0555) where PATH is missing, for a path that would be a directory (.vscode):
 * creating anything in it is EROFS. All three need --pid-ns.
 *
 * --seccomp-fd FD (required): the seccomp program to install, a raw struct sock_filter[] read from
 * FD to its end by P (the runtime writes it and closes its side); the descriptor is closed. The
 * program is @toolvisor/syscall-filter's allowlist, built in TypeScript: the one source of truth
 * for both mechanisms (the net: none variant is what refuses every socket family). T installs it
 * right before landlock_restrict_self, after every other step, so nothing the launcher does itself
 * needs to be on it but landlock_restrict_self, close and execve; P's namespaces and clones come
 * before it (the program refuses namespace flags).
 *
 * Fails closed: when anything cannot be set up exactly as asked, it prints one line
 * "toolvisor-landlock: <what>: <why>" on stderr and exits 125 without running CMD.
 * Exec failure: 127 when CMD is not found, 126 otherwise.
 *
 * Three processes (signals and exit status as if the tool were the spawned process itself):
 * - P, the process the runtime spawned (its pid and process group are what the runtime knows):
 *   parses, asks the ABI, builds the ruleset (opening every rule path as the caller), looks the
 *   user up, makes the namespaces (--pid-ns), sets PR_SET_PDEATHSIG, then starts Q and stands in for
 *   the tool: a cancel signal does not end it (no-op handlers: SIG_IGN would reach the tool through
 *   exec), and once Q ends it ends as the tool did (its exit code, or its signal re-raised).
 * - Q, the reaper: under --pid-ns the namespace's pid 1 (mounts private, a fresh /proc, the
 *   --ro-over and --null-over mounts); else a child subreaper in a process group of its own (the
 *   runtime's group SIGKILL does not reach it). It starts T, reaps everything, and when T ends
 *   writes T's wait status to P, kills what is left (the kernel does it for a namespace's pid 1)
 *   and exits. It dies with P (PR_SET_PDEATHSIG), killing what is left first when it can.
 * - T, the tool, in P's process group (the runtime's group signals reach it directly): drops to
 *   the user, drops every capability (also inside a user namespace), PR_SET_PDEATHSIG, checks its
 *   parent is still there, PR_SET_NO_NEW_PRIVS, the seccomp filter, landlock_restrict_self, default
 *   signal dispositions and an empty mask, then execvp.
 *
 * C99 + GNU, no libraries. Build: cc -std=gnu99 -O2 -Wall -Wextra -Werror -o landlock-launcher this.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/vfs.h>
#include <sys/wait.h>
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

/* struct landlock_net_port_attr (ABI 4): the port in host endianness. */
struct ll_net_port_attr {
  uint64_t allowed_access;
  uint64_t port;
} __attribute__((packed));

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2 /* ABI 4 */

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

/* _exit, not exit: Q and T share P's memory (see spawn_sharing), so no exit handler may run there. */
static void fail(const char *what, const char *why) __attribute__((noreturn));
static void fail(const char *what, const char *why) {
  fprintf(stderr, PROG ": %s: %s\n", what, why);
  _exit(EXIT_SETUP);
}

static void fail_errno(const char *what) __attribute__((noreturn));
static void fail_errno(const char *what) { fail(what, strerror(errno)); }

/* Fails with "<flag> <value>: <why>"; `err` is an errno value, or 0 to use `why`. */
static void fail_on(const char *flag, const char *value, int err, const char *why) __attribute__((noreturn));
static void fail_on(const char *flag, const char *value, int err, const char *why) {
  fprintf(stderr, PROG ": %s %s: %s\n", flag, value, err != 0 ? strerror(err) : why);
  _exit(EXIT_SETUP);
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

/* A TCP port given to `flag`: digits only, 1..65535. */
static uint64_t tcp_port(const char *flag, const char *text) {
  char *end;
  long n;
  errno = 0;
  n = strtol(text, &end, 10);
  if (text[0] < '0' || text[0] > '9' || errno != 0 || *end != '\0' || n < 1 || n > 65535) {
    fail_on(flag, text, 0, "not a TCP port (1..65535)");
  }
  return (uint64_t)n;
}

/* Allows `access` (connect or bind) on the TCP port given to `flag`. */
static void add_port_rule(int ruleset, const char *flag, const char *text, uint64_t access) {
  struct ll_net_port_attr rule;
  rule.allowed_access = access;
  rule.port = tcp_port(flag, text);
  if (syscall(__NR_landlock_add_rule, ruleset, LL_RULE_NET_PORT, &rule, 0) != 0) fail_on(flag, text, errno, NULL);
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

/* True when this process holds capability `cap` in its effective set (of its user namespace). */
static int holds(int cap) {
  struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
  struct __user_cap_data_struct data[2];
  if (syscall(SYS_capget, &header, data) != 0) return 0;
  return (data[cap / 32].effective & (1U << (cap % 32))) != 0;
}

/*
 * A tool left running as uid 0 gets no capability: Landlock does not cover mknod of a device inside
 * a write grant (then opening it), module loading, raw I/O or network administration, and root
 * would otherwise get every capability back at exec. Inside the user namespace an ordinary caller
 * gets, the tool holds every capability of that namespace until here: they go too. Emptying the
 * bounding set makes exec grant none; ambient capabilities are cleared for every caller.
 */
static void drop_capabilities(void) {
  struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
  struct __user_cap_data_struct data[2];
  int cap;
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
    fail_errno("clear ambient capabilities");
  }
  if (geteuid() != 0 && !holds(CAP_SETPCAP)) return; /* nothing to drop: an ordinary process */
  for (cap = 0; cap < 64; cap++) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0) continue;
    if (errno == EINVAL) break; /* past the kernel's last capability */
    fail_errno("drop capabilities");
  }
  memset(data, 0, sizeof data);
  if (syscall(SYS_capset, &header, data) != 0) fail_errno("drop capabilities");
}

/* ---- namespaces and mounts (uAPI carried here, like Landlock's) */

#ifndef __NR_open_tree
#define __NR_open_tree 428 /* same number on every architecture */
#endif
#ifndef __NR_openat2
#define __NR_openat2 437
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif
#ifndef __NR_move_mount
#define __NR_move_mount 429
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif

struct ll_open_how {
  uint64_t flags;
  uint64_t mode;
  uint64_t resolve;
};
#define LL_RESOLVE_NO_MAGICLINKS 0x02
#define LL_RESOLVE_NO_SYMLINKS 0x04

struct ll_mount_attr {
  uint64_t attr_set;
  uint64_t attr_clr;
  uint64_t propagation;
  uint64_t userns_fd;
};
#define LL_MOUNT_ATTR_RDONLY 0x1
#define LL_OPEN_TREE_CLONE 1
#define LL_AT_RECURSIVE 0x8000
#define LL_MOVE_MOUNT_F_EMPTY_PATH 0x4
#define LL_MOVE_MOUNT_T_EMPTY_PATH 0x40
#define PROC_MAGIC 0x9fa0

/* The namespaces of --pid-ns; CLONE_NEWIPC too: SysV IPC and POSIX queues are the run's own. */
#define NAMESPACES (CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC)

/* Writes `text` to the file at `path` (a /proc/self map); 0, or -1 with errno. */
static int write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  ssize_t n;
  size_t length = strlen(text);
  if (fd < 0) return -1;
  n = write(fd, text, length);
  if (n < 0) {
    int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
  close(fd);
  if ((size_t)n != length) {
    errno = EIO;
    return -1;
  }
  return 0;
}

/*
 * Makes the namespaces this process's children start in (pid) or it is in now (mount, IPC, user):
 * 0, or -1 with `why` filled. Root makes them directly (its --user switch needs the real root); any
 * other caller gets a user namespace of its own mapping only its own uid and gid ("U U 1",
 * setgroups denied first, which an unprivileged gid map needs), so its files stay its own and
 * nothing else gets a name in it. The probe (--features) decides the same way, so it answers for
 * the launches that follow.
 */
static int enter_namespaces(char *why, size_t size) {
  uid_t uid = geteuid();
  gid_t gid = getegid();
  int own_user = uid != 0 && !holds(CAP_SYS_ADMIN);
  char map[64];
  if (unshare(NAMESPACES | (own_user ? CLONE_NEWUSER : 0)) != 0) {
    snprintf(why, size, "unshare(%sCLONE_NEWNS|CLONE_NEWPID|CLONE_NEWIPC): %s",
             own_user ? "CLONE_NEWUSER|" : "", strerror(errno));
    return -1;
  }
  if (!own_user) return 0;
  if (write_file("/proc/self/setgroups", "deny") != 0) {
    snprintf(why, size, "write /proc/self/setgroups: %s", strerror(errno));
    return -1;
  }
  snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
  if (write_file("/proc/self/uid_map", map) != 0) {
    snprintf(why, size, "write /proc/self/uid_map: %s", strerror(errno));
    return -1;
  }
  snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
  if (write_file("/proc/self/gid_map", map) != 0) {
    snprintf(why, size, "write /proc/self/gid_map: %s", strerror(errno));
    return -1;
  }
  return 0;
}

/*
 * In the new mount namespace, as the pid namespace's pid 1: nothing propagates back to the host,
 * and a fresh proc (this namespace's processes only) covers the host's /proc. 0, or -1 with `why`.
 */
static int mount_proc(char *why, size_t size) {
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
    snprintf(why, size, "make / private: %s", strerror(errno));
    return -1;
  }
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) {
    snprintf(why, size, "mount proc on /proc: %s", strerror(errno));
    return -1;
  }
  return 0;
}

/* openat2 refusing every symlink on the way, the last component included (and /proc magic links):
 * a link swapped in cannot redirect what is opened. */
static int open_no_links(int dir, const char *path, int flags, mode_t mode) {
  struct ll_open_how how;
  memset(&how, 0, sizeof how);
  how.flags = (uint64_t)(flags | O_CLOEXEC);
  how.mode = (flags & O_CREAT) ? mode : 0;
  how.resolve = LL_RESOLVE_NO_SYMLINKS | LL_RESOLVE_NO_MAGICLINKS;
  return (int)syscall(__NR_openat2, dir, path, &how, sizeof how);
}

/* --ro-over, --null-over, --null-dir-over: the flags that protect a path inside the mount namespace. */
static int is_over(const char *flag) {
  return strcmp(flag, "--ro-over") == 0 || strcmp(flag, "--null-over") == 0 || strcmp(flag, "--null-dir-over") == 0;
}

/*
 * --null-over: an empty regular file where PATH is missing (O_EXCL: never an existing one);
 * --null-dir-over: an empty directory (mode 0555) there; or, when PATH exists by now, PATH itself.
 * Returns a descriptor of what is to be made read-only.
 */
static int placeholder(const char *flag, const char *path, int as_dir) {
  const char *slash = strrchr(path, '/');
  const char *name = slash == NULL ? path : slash + 1;
  char parent[PATH_MAX];
  int dir, fd;
  if (slash == NULL || *name == '\0' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
    fail_on(flag, path, 0, "not an absolute path to a file");
  }
  if ((size_t)(slash - path) >= sizeof parent) fail_on(flag, path, ENAMETOOLONG, NULL);
  memcpy(parent, path, (size_t)(slash - path));
  parent[slash - path] = '\0';
  dir = open_no_links(AT_FDCWD, slash == path ? "/" : parent, O_PATH | O_DIRECTORY, 0);
  if (dir < 0) fail_on(flag, path, errno, NULL);
  if (as_dir) {
    /* mkdirat never follows a link in the last component: an existing entry is EEXIST. */
    if (mkdirat(dir, name, 0555) != 0 && errno != EEXIST) fail_on(flag, path, errno, NULL);
    fd = open_no_links(dir, name, O_PATH | O_DIRECTORY, 0);
  } else {
    fd = open_no_links(dir, name, O_CREAT | O_EXCL | O_WRONLY, 0444);
    if (fd < 0 && errno == EEXIST) fd = open_no_links(dir, name, O_PATH, 0);
  }
  if (fd < 0) fail_on(flag, path, errno, NULL);
  close(dir);
  return fd;
}

/*
 * PATH read-only inside this mount namespace, submounts included: a detached recursive copy of it
 * is made read-only (mount_setattr: only MOUNT_ATTR_RDONLY is set, so flags a user namespace may
 * not clear, nosuid or nodev of the host's mount, are left as they are) and mounted over it, all
 * by descriptor. Anything but a directory or a regular file is refused.
 */
/* `make_placeholder`: 0 (--ro-over), 1 (--null-over: a file), 2 (--null-dir-over: a directory). */
static void read_only_over(const char *flag, const char *path, int make_placeholder) {
  struct ll_mount_attr attr;
  struct stat st;
  int fd = open_no_links(AT_FDCWD, path, O_PATH, 0);
  int tree;
  if (fd < 0 && errno == ENOENT && make_placeholder) fd = placeholder(flag, path, make_placeholder == 2);
  if (fd < 0) fail_on(flag, path, errno, NULL);
  if (fstat(fd, &st) != 0) fail_on(flag, path, errno, NULL);
  if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) fail_on(flag, path, 0, "not a directory or a regular file");
  tree = (int)syscall(__NR_open_tree, fd, "", LL_OPEN_TREE_CLONE | O_CLOEXEC | AT_EMPTY_PATH | LL_AT_RECURSIVE);
  if (tree < 0) fail_on(flag, path, errno, NULL);
  memset(&attr, 0, sizeof attr);
  attr.attr_set = LL_MOUNT_ATTR_RDONLY;
  if (syscall(__NR_mount_setattr, tree, "", AT_EMPTY_PATH | LL_AT_RECURSIVE, &attr, sizeof attr) != 0) {
    fail_on(flag, path, errno, NULL);
  }
  if (syscall(__NR_move_mount, tree, "", fd, "", LL_MOVE_MOUNT_F_EMPTY_PATH | LL_MOVE_MOUNT_T_EMPTY_PATH) != 0) {
    fail_on(flag, path, errno, NULL);
  }
  close(tree);
  close(fd);
}

/* `dir` bound onto itself (recursively, by descriptor): a mount point, which cannot be renamed or removed. */
static void pin(const char *flag, const char *path, const char *dir) {
  int fd = open_no_links(AT_FDCWD, dir, O_PATH | O_DIRECTORY, 0);
  int tree;
  if (fd < 0) fail_on(flag, path, errno, NULL);
  tree = (int)syscall(__NR_open_tree, fd, "", LL_OPEN_TREE_CLONE | O_CLOEXEC | AT_EMPTY_PATH | LL_AT_RECURSIVE);
  if (tree < 0) fail_on(flag, path, errno, NULL);
  if (syscall(__NR_move_mount, tree, "", fd, "", LL_MOVE_MOUNT_F_EMPTY_PATH | LL_MOVE_MOUNT_T_EMPTY_PATH) != 0) {
    fail_on(flag, path, errno, NULL);
  }
  close(tree);
  close(fd);
}

/* ---- the plan every stage follows */

/* A rule on an object of the host's proc, made again on the fresh /proc (see reanchor). */
struct proc_rule {
  char path[256];
  uint64_t access;
};
#define MAX_PROC_RULES 16

#define MAX_WRITE_GRANTS 64

struct plan {
  char **argv;
  int first, cmd, ruleset, pid_ns, overs;
  /* The --seccomp-fd text (for messages) and the program P read from it, installed by T. */
  const char *seccomp_fd;
  struct filter *filter;
  pid_t parent; /* P's parent (the runtime or its fork server) */
  pid_t group;  /* P's process group: the one the runtime signals */
  const char *user;
  struct target target;
  struct proc_rule proc_rules[MAX_PROC_RULES];
  int proc_rule_count;
  /* The write grants' paths, when --ro-over or --null-over is given (see pin_between). */
  char *write_grants[MAX_WRITE_GRANTS];
  int write_grant_count;
};

/* Notes a write grant's path (`path`, or the descriptor's own) for pin_between. */
static void note_write_grant(struct plan *p, int fd, const char *path) {
  char link[64], target[PATH_MAX];
  ssize_t n;
  if (!p->overs) return;
  if (p->write_grant_count == MAX_WRITE_GRANTS) fail("--rw", "more than 64 write grants");
  if (path == NULL) {
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    n = readlink(link, target, sizeof target - 1);
    if (n < 0) fail_errno("--rw-fd");
    target[n] = '\0';
    path = target;
  }
  p->write_grants[p->write_grant_count] = strdup(path);
  if (p->write_grants[p->write_grant_count] == NULL) fail_errno("--rw");
  p->write_grant_count++;
}

/*
 * A rule on something of the host's proc filesystem (a declared fs.read of /proc) names an inode
 * the fresh /proc stacked over it does not contain: Landlock walks up from the fresh proc past the
 * hidden mount point, so only a rule on / would still apply. The path is kept (`what`, or the
 * descriptor's own path) so that T can make the same rule on the fresh proc.
 */
static void note_proc_rule(struct plan *p, int fd, const char *path, uint64_t access) {
  struct statfs fs;
  struct proc_rule *rule;
  char link[64];
  ssize_t n;
  if (!p->pid_ns || fstatfs(fd, &fs) != 0 || fs.f_type != PROC_MAGIC) return;
  if (p->proc_rule_count == MAX_PROC_RULES) fail("/proc", "more than 16 rules under /proc");
  rule = &p->proc_rules[p->proc_rule_count];
  if (path == NULL) {
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    n = readlink(link, rule->path, sizeof rule->path - 1);
    if (n < 0) fail_errno("/proc");
    rule->path[n] = '\0';
  } else {
    snprintf(rule->path, sizeof rule->path, "%s", path);
  }
  if (strcmp(rule->path, "/proc") != 0 && strncmp(rule->path, "/proc/", 6) != 0) return;
  rule->access = access;
  p->proc_rule_count++;
}

/* T, on the fresh /proc: the rules noted above again (a path that is not there is no grant). */
static void reanchor(const struct plan *p) {
  int i;
  for (i = 0; i < p->proc_rule_count; i++) {
    int fd = open(p->proc_rules[i].path, O_PATH | O_CLOEXEC);
    if (fd < 0) continue;
    add_fd_rule(p->ruleset, "/proc", p->proc_rules[i].path, fd, p->proc_rules[i].access);
    close(fd);
  }
}

/*
 * A protected path holds only while the directories above it stay where they are: inside a write
 * grant the tool could rename `.git` aside (when `.git/hooks` is protected) and build a new one.
 * Every directory strictly between a write grant and `path` is made a mount point (rename and
 * rmdir of one are EBUSY); the grant itself cannot be renamed without a grant on its parent.
 */
static void pin_between(const struct plan *p, const char *flag, const char *path) {
  static char pinned[MAX_WRITE_GRANTS][PATH_MAX];
  static int pinned_count;
  size_t length = strlen(path);
  int g, k;
  for (g = 0; g < p->write_grant_count; g++) {
    const char *grant = p->write_grants[g];
    size_t at = strcmp(grant, "/") == 0 ? 0 : strlen(grant);
    if (strncmp(path, grant, at) != 0 || path[at] != '/') continue;
    /* Each "/" after the grant's own ends a directory between the grant and the path. */
    for (at = at + 1; at < length; at++) {
      char dir[PATH_MAX];
      int seen = 0;
      if (path[at] != '/') continue;
      if (at >= sizeof dir) fail_on(flag, path, ENAMETOOLONG, NULL);
      memcpy(dir, path, at);
      dir[at] = '\0';
      for (k = 0; k < pinned_count; k++) seen = seen || strcmp(pinned[k], dir) == 0;
      if (seen) continue;
      pin(flag, path, dir);
      if (pinned_count < MAX_WRITE_GRANTS) snprintf(pinned[pinned_count++], PATH_MAX, "%s", dir);
    }
  }
}

/* ---- signals */

/* Every signal back to its default and an empty mask: what the tool is exec'd with. */
static void default_signals(void) {
  sigset_t none;
  int sig;
  /* By the kernel's call with an all-zero action: the C library refuses its reserved ones. */
  for (sig = 1; sig < 65; sig++) {
    unsigned long none_action[4] = { 0, 0, 0, 0 };
    syscall(SYS_rt_sigaction, sig, none_action, NULL, 8);
  }
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
}

/*
 * P's handler: a signal sent to the group (the cancel) is the tool's to handle, P only outlives it.
 * A fault of P itself (sent by the kernel) goes back to the default, so that it repeats and ends P.
 */
static void stand_in_signal(int sig, siginfo_t *info, void *context) {
  (void)context;
  if (info != NULL && info->si_code > 0 &&
      (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGTRAP || sig == SIGSYS)) {
    signal(sig, SIG_DFL);
  }
}

/* No-op handlers (not SIG_IGN, which exec would pass on) for every signal that would end or stop P. */
static void outlive_signals(void) {
  struct sigaction action;
  int sig;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = stand_in_signal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (sig = 1; sig < 32; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP || sig == SIGCHLD || sig == SIGCONT) continue;
    sigaction(sig, &action, NULL);
  }
  for (sig = SIGRTMIN; sig <= SIGRTMAX; sig++) sigaction(sig, &action, NULL);
}

/* Ends this process the way `status` (a wait status) says a process ended: code, or signal. */
static void end_as(int status) __attribute__((noreturn));
static void end_as(int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    struct rlimit no_core = { 0, 0 };
    sigset_t only;
    /* The tool's core, if it dumped one, was its own: P writes none for it. */
    setrlimit(RLIMIT_CORE, &no_core);
    signal(sig, SIG_DFL);
    sigemptyset(&only);
    sigaddset(&only, sig);
    sigprocmask(SIG_UNBLOCK, &only, NULL);
    kill(getpid(), sig);
    _exit(128 + sig); /* a signal that does not end a process by default: as a shell reports it */
  }
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_SETUP);
}

/* ---- descriptors */

/* `fd` moved to 3 or above (a launcher started with 0, 1 or 2 closed gets them from pipe2). */
static int above_stdio(int fd) {
  int moved;
  if (fd > 2) return fd;
  moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (moved < 0) fail_errno("pipe");
  close(fd);
  return moved;
}

/*
 * Only stderr and the two ends of the status pipe stay (`low` < `high`, both >= 3): what the stand-in
 * and the reaper hold must not hold the tool's pipes, or a pipe the tool closed would not end.
 */
static void keep_only(int low, int high) {
  close(0);
  close(1);
  if (low > 3) syscall(SYS_close_range, 3U, (unsigned)low - 1, 0U);
  if (high > low + 1) syscall(SYS_close_range, (unsigned)low + 1, (unsigned)high - 1, 0U);
  syscall(SYS_close_range, (unsigned)high + 1, ~0U, 0U);
}

/* ---- T: the tool */

static void tool(const struct plan *p, pid_t reaper) __attribute__((noreturn));
static void tool(const struct plan *p, pid_t reaper) {
  /* The runtime signals P's group: the tool is in it (under --pid-ns it never left it). */
  if (!p->pid_ns && setpgid(0, p->group) != 0) fail_errno("join the process group");
  if (p->user != NULL) become(&p->target);
  drop_capabilities();
  /* After the uid change, which clears it; then make sure the parent did not die before it was set. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) fail_errno("PR_SET_PDEATHSIG");
  if (getppid() != reaper) fail("PR_SET_PDEATHSIG", "the parent process already exited");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail_errno("PR_SET_NO_NEW_PRIVS");
  if (p->pid_ns) reanchor(p);
  install_filter(p->seccomp_fd, p->filter);
  if (syscall(__NR_landlock_restrict_self, p->ruleset, 0) != 0) fail_errno("landlock_restrict_self");
  close(p->ruleset);
  /* A signal sent while this was set up waited, blocked: it now reaches the tool as it would have. */
  default_signals();
  execvp(p->argv[p->cmd], p->argv + p->cmd);
  {
    int err = errno;
    fprintf(stderr, PROG ": exec %s: %s\n", p->argv[p->cmd], strerror(err));
    _exit(err == ENOENT ? 127 : 126);
  }
}

/* ---- the extra processes */

/*
 * Starts `run(arg)` as a child that shares this process's memory, on a stack of its own, while this
 * process waits until the child execs or exits (clone with CLONE_VM | CLONE_VFORK, as posix_spawn
 * does). Against fork, no page tables are copied and no address space is torn down when the child
 * goes: measured, the larger part of what two extra processes cost a launch. P starts Q this way
 * (P only waits for Q anyway), Q starts T. The rules that follow: only one of them runs at a time;
 * Q and T end with _exit (never exit, whose handlers would run in the shared memory); once T is
 * started, Q and then P call nothing that takes a lock T may have died holding (no malloc, no
 * stdio but an unbuffered message on a failure). Q also shares P's descriptor table
 * (`share_descriptors`): when it closes its copies of the tool's pipes once T runs, P's go too,
 * as when P closed them itself after a fork; T gets a copy of its own.
 */
static pid_t spawn_sharing(int (*run)(void *), void *arg, int share_descriptors) {
  const size_t size = 256 * 1024;
  char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return -1;
  return clone(run, stack + size, CLONE_VM | CLONE_VFORK | SIGCHLD | (share_descriptors ? CLONE_FILES : 0), arg);
}

/* What Q hands T: the plan, the parent T must find (Q's pid, or 1 in the namespace), Q's pipe end. */
struct tool_start {
  const struct plan *p;
  pid_t reaper;
  int status_fd;
};

static int tool_main(void *arg) {
  const struct tool_start *start = arg;
  close(start->status_fd);
  tool(start->p, start->reaper);
}

/* ---- Q: the reaper */

/*
 * The pids of this process's children (/proc/self/task/TID/children; else a scan of /proc), read
 * with plain system calls: no stdio or malloc here, whose locks a killed T may have held.
 */
static size_t children_of(pid_t self, pid_t *out, size_t max) {
  char path[64], buffer[4096];
  size_t n = 0;
  int fd;
  snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)self);
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t got = read(fd, buffer, sizeof buffer - 1);
    char *at = buffer, *end;
    close(fd);
    buffer[got > 0 ? got : 0] = '\0';
    while (n < max) {
      long pid = strtol(at, &end, 10);
      if (end == at) break;
      out[n++] = (pid_t)pid;
      at = end;
    }
    return n;
  }
  {
    /* Without CONFIG_PROC_CHILDREN: the fourth field of every /proc/PID/stat is its parent. */
    int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    long got;
    if (dir < 0) return 0;
    while ((got = syscall(SYS_getdents64, dir, buffer, sizeof buffer)) > 0) {
      long at = 0;
      while (at < got && n < max) {
        unsigned short size = *(unsigned short *)(buffer + at + 16);
        const char *name = buffer + at + 19;
        char stat_path[64], stat[512];
        long pid = strtol(name, NULL, 10), ppid = 0;
        at += size;
        if (pid <= 0) continue;
        snprintf(stat_path, sizeof stat_path, "/proc/%ld/stat", pid);
        fd = open(stat_path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        {
          ssize_t length = read(fd, stat, sizeof stat - 1);
          char *end;
          close(fd);
          if (length <= 0) continue;
          stat[length] = '\0';
          end = strrchr(stat, ')');
          /* ") S PPID": the state, then the parent. */
          if (end == NULL || end[1] == '\0' || end[2] == '\0' || end[3] == '\0') continue;
          ppid = strtol(end + 4, NULL, 10);
        }
        if (ppid == self) out[n++] = (pid_t)pid;
      }
    }
    close(dir);
    return n;
  }
}

/*
 * The subreaper's last act: SIGKILL every child, wait for one, again, until none is left. What a
 * killed child had started is orphaned to this process (a subreaper), so it is found next round.
 */
static void kill_descendants(void) {
  pid_t self = getpid(), pids[256];
  for (;;) {
    size_t n = children_of(self, pids, sizeof pids / sizeof pids[0]), i;
    for (i = 0; i < n; i++) kill(pids[i], SIGKILL);
    if (waitpid(-1, NULL, 0) < 0 && errno == ECHILD) return;
  }
}

/*
 * True when P is gone already (its pidfd reads as ended): PDEATHSIG was set too late. A pidfd, not
 * getppid(): in the pid namespace P has no pid, and getppid() is 0 either way.
 */
static int stand_in_gone(int stand_in_fd) {
  struct pollfd watch = { stand_in_fd, POLLIN, 0 };
  return poll(&watch, 1, 0) == 1 && (watch.revents & POLLIN) != 0;
}

static void reaper(const struct plan *p, int status_fd, int other_end, int stand_in_fd) __attribute__((noreturn));
static void reaper(const struct plan *p, int status_fd, int other_end, int stand_in_fd) {
  pid_t stand_in = getppid(), self = getpid(), child;
  sigset_t wanted;
  siginfo_t info;
  int tool_ended = 0, stand_in_ended = 0;
  char why[320];
  /*
   * Under --pid-ns, SIGKILL: the kernel then kills the whole namespace. The subreaper is killed by
   * nobody's hand but its own: it hears P's death (SIGTERM, waited for below) and kills what is left.
   */
  if (prctl(PR_SET_PDEATHSIG, p->pid_ns ? SIGKILL : SIGTERM, 0, 0, 0) != 0) fail_errno("PR_SET_PDEATHSIG");
  if (stand_in_gone(stand_in_fd)) _exit(EXIT_SETUP);
  close(stand_in_fd);
  if (p->pid_ns) {
    int i;
    if (mount_proc(why, sizeof why) != 0) fail("--pid-ns", why);
    for (i = p->first; i < p->cmd - 1; i++) {
      if (is_over(p->argv[i])) {
        pin_between(p, p->argv[i], p->argv[i + 1]);
        read_only_over(p->argv[i], p->argv[i + 1],
                       strcmp(p->argv[i], "--null-over") == 0 ? 1 : strcmp(p->argv[i], "--null-dir-over") == 0 ? 2 : 0);
        i++;
      }
    }
  } else {
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) fail_errno("PR_SET_CHILD_SUBREAPER");
    /* Out of the group the runtime signals: its SIGKILL of the tool must leave the one that cleans up. */
    if (setpgid(0, 0) != 0) fail_errno("leave the process group");
  }
  {
    static struct tool_start start;
    start.p = p;
    start.reaper = p->pid_ns ? 1 : self;
    start.status_fd = status_fd;
    child = spawn_sharing(tool_main, &start, 0);
    if (child < 0) fail_errno("fork the tool");
  }
  close(p->ruleset);
  keep_only(status_fd < other_end ? status_fd : other_end, status_fd < other_end ? other_end : status_fd);
  /* Every signal stays blocked (inherited from P): SIGCHLD and P's death are waited for, the rest
   * (the runtime's group signals, which reach the subreaper until it left the group) stay pending. */
  sigemptyset(&wanted);
  sigaddset(&wanted, SIGCHLD);
  if (!p->pid_ns) sigaddset(&wanted, SIGTERM);
  while (!tool_ended && !stand_in_ended) {
    int sig = sigwaitinfo(&wanted, &info), status;
    pid_t pid;
    if (sig < 0) continue; /* EINTR */
    if (sig == SIGTERM) {
      stand_in_ended = getppid() != stand_in;
      continue;
    }
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      if (pid != child) continue;
      tool_ended = 1;
      while (write(status_fd, &status, sizeof status) < 0 && errno == EINTR) {
      }
    }
  }
  /* Under --pid-ns the kernel kills what is left as this pid 1 exits. */
  if (!p->pid_ns) kill_descendants();
  _exit(0);
}

/* What P hands Q: the plan, both ends of the status pipe (Q writes one; the table is shared), P's pidfd. */
struct reaper_start {
  const struct plan *p;
  int status_fd, other_end, stand_in_fd;
};

static int reaper_main(void *arg) {
  const struct reaper_start *start = arg;
  reaper(start->p, start->status_fd, start->other_end, start->stand_in_fd);
}

/* ---- P: the stand-in */

static void stand_in(struct plan *p) __attribute__((noreturn));
static void stand_in(struct plan *p) {
  int status_pipe[2], status = 0, tool_status = 0, stand_in_fd;
  sigset_t all, none;
  pid_t child;
  ssize_t got;
  char why[320];
  if (p->pid_ns && enter_namespaces(why, sizeof why) != 0) fail("--pid-ns", why);
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) fail_errno("PR_SET_PDEATHSIG");
  if (getppid() != p->parent) fail("PR_SET_PDEATHSIG", "the parent process already exited");
  p->group = getpgrp();
  if (pipe2(status_pipe, O_CLOEXEC) != 0) fail_errno("pipe");
  status_pipe[0] = above_stdio(status_pipe[0]);
  status_pipe[1] = above_stdio(status_pipe[1]);
  stand_in_fd = (int)syscall(__NR_pidfd_open, getpid(), 0); /* close-on-exec */
  if (stand_in_fd < 0) fail_errno("pidfd_open");
  outlive_signals();
  /* Blocked until T is about to exec: a cancel sent meanwhile waits for the tool, as it always did. */
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, NULL);
  {
    static struct reaper_start start;
    start.p = p;
    start.status_fd = status_pipe[1];
    start.other_end = status_pipe[0];
    start.stand_in_fd = stand_in_fd;
    child = spawn_sharing(reaper_main, &start, 1);
    if (child < 0) fail_errno("fork");
  }
  /* Q closed the rest of the shared table; the write end goes now, so that a Q that wrote nothing
   * reads as the end of the pipe. */
  close(status_pipe[1]);
  close(stand_in_fd);
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) end_as(EXIT_SETUP << 8);
  }
  do got = read(status_pipe[0], &tool_status, sizeof tool_status);
  while (got < 0 && errno == EINTR);
  /* No status: the reaper ended before the tool did (a setup failure, 125, or it was killed). */
  end_as(got == (ssize_t)sizeof tool_status ? tool_status : status);
}

/* ---- --features */

/*
 * Whether --pid-ns can work here, found by doing what a launch does: a child makes the namespaces,
 * its child (the new pid 1) mounts the fresh /proc. 0, or -1 with `why`.
 */
static int pid_ns_works(char *why, size_t size) {
  int report[2], status;
  pid_t child;
  ssize_t got;
  if (pipe2(report, O_CLOEXEC) != 0) {
    snprintf(why, size, "pipe: %s", strerror(errno));
    return -1;
  }
  child = fork();
  if (child < 0) {
    snprintf(why, size, "fork: %s", strerror(errno));
    return -1;
  }
  if (child == 0) {
    pid_t init;
    close(report[0]);
    if (enter_namespaces(why, size) != 0) {
      (void)!write(report[1], why, strlen(why));
      _exit(1);
    }
    init = fork();
    if (init == 0) {
      if (mount_proc(why, size) != 0) {
        (void)!write(report[1], why, strlen(why));
        _exit(1);
      }
      _exit(0);
    }
    if (init < 0) {
      snprintf(why, size, "fork pid 1: %s", strerror(errno));
      (void)!write(report[1], why, strlen(why));
      _exit(1);
    }
    while (waitpid(init, &status, 0) < 0 && errno == EINTR) {
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
  }
  close(report[1]);
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  got = read(report[0], why, size - 1);
  close(report[0]);
  why[got > 0 ? got : 0] = '\0';
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
  if (got <= 0) snprintf(why, size, "the probe ended with status %d", status);
  return -1;
}

static int features(long max_abi) {
  const char *missing_why = "unknown";
  char why[320];
  int abi = effective_abi(max_abi, &missing_why);
  if (abi == 0) fprintf(stderr, PROG ": Landlock: %s\n", missing_why);
  printf("abi %d\n", abi);
  if (pid_ns_works(why, sizeof why) == 0) printf("pid-ns yes\n");
  else printf("pid-ns no: %s\n", why);
  return fflush(stdout) == 0 ? 0 : EXIT_SETUP;
}

/* ---- main */

int main(int argc, char **argv) {
  const char *missing_why = "unknown";
  int abi, deny_tcp = 0, i, overs = 0;
  const char *tcp_rule = NULL; /* the first --tcp-connect or --tcp-bind, for its refusal */
  long max_abi = -1, expect_abi = -1;
  static struct filter filter;
  struct ll_ruleset_attr attr;
  static struct plan plan;

  memset(&plan, 0, sizeof plan);
  plan.argv = argv;
  plan.parent = getppid();
  plan.cmd = -1;
  plan.first = 1;
  if (argc >= 3 && strcmp(argv[1], "--max-abi") == 0) {
    max_abi = number("--max-abi", argv[2]);
    plan.first = 3;
  }
  if (argc == plan.first + 1 && strcmp(argv[plan.first], "--abi") == 0) {
    abi = effective_abi(max_abi, &missing_why);
    if (abi == 0) fprintf(stderr, PROG ": Landlock: %s\n", missing_why);
    printf("%d\n", abi);
    return fflush(stdout) == 0 ? 0 : EXIT_SETUP;
  }
  if (argc == plan.first + 1 && strcmp(argv[plan.first], "--features") == 0) return features(max_abi);

  /* First pass: flags, so every refusal happens before any rule is built. */
  for (i = plan.first; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) {
      plan.cmd = i + 1;
      break;
    }
    if (strcmp(a, "--ro") == 0 || strcmp(a, "--rw") == 0 || strcmp(a, "--user") == 0 ||
        strcmp(a, "--ro-fd") == 0 || strcmp(a, "--rw-fd") == 0 || strcmp(a, "--exec-fd") == 0 ||
        strcmp(a, "--expect-abi") == 0 || strcmp(a, "--seccomp-fd") == 0 || is_over(a) ||
        strcmp(a, "--tcp-connect") == 0 || strcmp(a, "--tcp-bind") == 0) {
      if (i + 1 >= argc) fail(a, "missing value");
      if (argv[i + 1][0] == '\0') fail(a, "empty value");
      if (strcmp(a, "--user") == 0) {
        if (plan.user != NULL) fail(a, "given twice");
        plan.user = argv[i + 1];
      } else if (strcmp(a, "--expect-abi") == 0) {
        expect_abi = number(a, argv[i + 1]);
      } else if (strcmp(a, "--seccomp-fd") == 0) {
        if (plan.seccomp_fd != NULL) fail(a, "given twice");
        plan.seccomp_fd = argv[i + 1];
      } else if (strcmp(a, "--ro-fd") == 0 || strcmp(a, "--rw-fd") == 0 || strcmp(a, "--exec-fd") == 0) {
        descriptor(a, argv[i + 1]);
      } else if (strcmp(a, "--tcp-connect") == 0 || strcmp(a, "--tcp-bind") == 0) {
        tcp_port(a, argv[i + 1]);
        if (tcp_rule == NULL) tcp_rule = a;
      } else if (is_over(a)) {
        if (argv[i + 1][0] != '/') fail_on(a, argv[i + 1], 0, "not an absolute path");
        overs = i;
        plan.overs = 1;
      }
      i++;
    } else if (strcmp(a, "--deny-tcp") == 0) {
      deny_tcp = 1;
    } else if (strcmp(a, "--pid-ns") == 0) {
      plan.pid_ns = 1;
    } else {
      fail(a, "unknown option");
    }
  }
  if (plan.cmd < 0) fail("usage", "missing -- before the command");
  if (plan.cmd >= argc) fail("usage", "missing command after --");
  if (overs > 0 && !plan.pid_ns) fail(argv[overs], "needs the mount namespace of --pid-ns");
  /* --deny-tcp denies every port; a port rule beside it would quietly allow one. */
  if (deny_tcp && tcp_rule != NULL) fail("--deny-tcp", "cannot be given with --tcp-connect or --tcp-bind");
#ifndef SECCOMP_ARCH_SUPPORTED
  fail("seccomp", "no filter for this architecture (x86_64 and little-endian aarch64 only)");
#endif
  if (plan.seccomp_fd == NULL) fail("--seccomp-fd", "missing: the launcher installs only the filter program it is given");
  read_filter(plan.seccomp_fd, &filter);
  plan.filter = &filter;

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
  if (tcp_rule != NULL && abi < 4) {
    char why[96];
    snprintf(why, sizeof why, "needs Landlock ABI >= 4, this kernel has ABI %d", abi);
    fail(tcp_rule, why);
  }

  memset(&attr, 0, sizeof attr);
  attr.handled_access_fs = fs_rights(abi);
  /* --deny-tcp: no port rule, every port denied; --tcp-connect/--tcp-bind: only their ports allowed. */
  if (deny_tcp || tcp_rule != NULL) attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP;
  if (abi >= 6) attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL;
  /* Older kernels accept the larger struct as long as the fields they do not know are zero. */
  plan.ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (plan.ruleset < 0) fail_errno("landlock_create_ruleset");

  /* Second pass: rules, from paths opened with the caller's rights or from descriptors, before any uid change. */
  for (i = plan.first; i < plan.cmd - 1; i++) {
    const char *a = argv[i];
    char what[64];
    if (strcmp(a, "--ro") == 0 || strcmp(a, "--rw") == 0) {
      uint64_t access = strcmp(a, "--rw") == 0 ? attr.handled_access_fs : FS_READ_RULE;
      const char *path = argv[++i];
      /* Rule paths are real (resolved by the runtime; a rule per entry around toolvisor's own paths
       * lists no link): one that is a link now was swapped, and its target is not what was meant. */
      int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
      struct stat st;
      if (fd < 0) fail_on(a, path, errno, NULL);
      if (fstat(fd, &st) != 0) fail_on(a, path, errno, NULL);
      if (S_ISLNK(st.st_mode)) fail_on(a, path, 0, "is a symbolic link (rules are made on real paths)");
      add_fd_rule(plan.ruleset, a, path, fd, access);
      note_proc_rule(&plan, fd, path, access);
      if (strcmp(a, "--rw") == 0) note_write_grant(&plan, fd, path);
      close(fd);
    } else if (strcmp(a, "--ro-fd") == 0 || strcmp(a, "--rw-fd") == 0 || strcmp(a, "--exec-fd") == 0) {
      int fd = descriptor(a, argv[++i]);
      uint64_t access = strcmp(a, "--rw-fd") == 0 ? attr.handled_access_fs
                        : strcmp(a, "--ro-fd") == 0 ? FS_READ_RULE
                                                    : FS_EXECUTE | FS_READ_FILE;
      snprintf(what, sizeof what, "%d", fd);
      add_fd_rule(plan.ruleset, a, what, fd, access);
      if (strcmp(a, "--rw-fd") == 0) note_write_grant(&plan, fd, NULL);
      if (strcmp(a, "--exec-fd") != 0) {
        note_proc_rule(&plan, fd, NULL, access);
        close(fd);
      }
    } else if (strcmp(a, "--tcp-connect") == 0 || strcmp(a, "--tcp-bind") == 0) {
      const char *port = argv[++i];
      add_port_rule(plan.ruleset, a, port, strcmp(a, "--tcp-connect") == 0 ? NET_CONNECT_TCP : NET_BIND_TCP);
    } else if (strcmp(a, "--user") == 0 || strcmp(a, "--expect-abi") == 0 || strcmp(a, "--seccomp-fd") == 0 ||
               is_over(a)) {
      i++;
    }
  }

  if (plan.user != NULL) lookup_user(plan.user, &plan.target);
  stand_in(&plan);
}
