/*
 * toolvisor-netns: start a launch inside a fresh network namespace that holds only `lo`, where the
 * one way out is a bridge from 127.0.0.1:PORT (inside) to toolvisor's proxy, a unix socket on the
 * host (issue 32). Outermost in the launch chain, run as toolvisor's own user (root or not):
 *
 *   toolvisor-netns --proxy SOCKETPATH --port PORT [--handoff] [--publish HOSTPORT:INNERPORT]... -- FILE [ARGS...]
 *   toolvisor-netns --version     prints "toolvisor-netns 1"
 *
 * SOCKETPATH must be an absolute path to a unix socket that exists when the launch starts (checked:
 * a launch whose proxy is not there is refused rather than started without a way out); FILE must
 * be absolute (or /proc/self/fd/N of a descriptor the caller passed).
 *
 * 1. For each --publish: a TCP listener on the host's 127.0.0.1:HOSTPORT, made first, while this
 *    process is still in the host's network namespace (a socket keeps the namespace it was made in).
 *    With --handoff, the connector is forked then too (below), so that it stays in that namespace.
 * 2. A new network namespace: unshare(CLONE_NEWNET) as root; where that is refused (EPERM: an
 *    ordinary user, or root without CAP_SYS_ADMIN) a user namespace with it, mapping only the
 *    caller's own uid and gid onto themselves, so files keep their owner and the setpriv and bwrap
 *    that follow see the same ids. `lo` is brought up now: a non-root uid loses the namespace's
 *    capabilities at the exec.
 * 3. The bridge's listeners inside: 127.0.0.1:PORT, and [::1]:PORT where IPv6 works.
 * 4. fork: the child is the bridge, the parent execs FILE (no PATH search: FILE is a path). FILE
 *    gets this process's environment, signal state and every descriptor the caller passed,
 *    unchanged: only this program's own sockets are close-on-exec.
 *
 * The bridge copies both ways: a connection to 127.0.0.1:PORT inside goes to SOCKETPATH (a
 * pathname socket: reachable from any network namespace, and resolved in the host's mount
 * namespace, which this program never leaves); a connection to a published host port goes to
 * 127.0.0.1:INNERPORT inside. Each direction moves through a pipe with splice (its capacity, 64 KiB,
 * and 1 MiB once a bulk transfer filled it where the system allows, is the direction's whole
 * buffer: memory never grows with the bytes moved), a half-close is passed
 * on (shutdown(SHUT_WR) once one side's end has been copied), and a connect that fails resets the
 * accepted connection at once. At most 512 connections are open (fewer when the descriptor limit
 * is low); one more is accepted and reset.
 *
 * --handoff: the proxy is toolvisor's own (decision 0111), and an approved HTTP CONNECT's bytes go
 * from the client to the target through the bridge alone, never through the proxy:
 *
 * - The connector, a process forked before the namespace is made and left in the host's, holds
 *   one end of a socket pair whose other end the bridge holds. Asked (struct dial_request) for a
 *   family, an address, a port and a time, it makes that one TCP connection, nonblocking, and
 *   passes the connected socket back with SCM_RIGHTS, or the errno (ETIMEDOUT when the time ran
 *   out). It connects nowhere it is not asked to, and the bridge asks only what a frame of the
 *   proxy's names. It dies with the launch as the bridge does, and when the bridge's end closes.
 * - The bridge writes HELLO, the 8 bytes "\0TVNB1\r\n", on each connection to SOCKETPATH before any
 *   of the client's: the proxy offers a handoff only on connections that start with it.
 * - It looks at the first byte the proxy sends on a connection, and at no later one: when that
 *   byte is not NUL the connection is carried as without --handoff from then on, so nothing a
 *   target sends later can pass for a frame. Until it knows, it carries the client's bytes to the
 *   proxy but not the client's end (the way to the proxy must stay open for the fence).
 * - A frame is one line, "\0TVNH1 PORT TIMEOUT_MS NONCE ADDRESS[,ADDRESS]... TAKEN LEFT\n", and
 *   LEFT bytes: NONCE 32 hex digits; each ADDRESS IPv4 or IPv6 without brackets, tried in order
 *   within TIMEOUT_MS together; TAKEN the client's bytes the proxy had read when it framed, the
 *   CONNECT head and the LEFT bytes that followed it, which are the target's. The bridge stops
 *   carrying the client's bytes to the proxy, asks the connector, and writes the fence "\0FENCE
 *   NONCE\n": what the proxy reads before it is the client's, what follows is the bridge's (the
 *   client never sees the nonce, so cannot forge it). When the bridge had sent more than TAKEN,
 *   the proxy answers the fence with "\0REST N\n" and those N bytes (else with nothing, and the
 *   bridge waits for nothing but the connector).
 * - Connected: "HTTP/1.1 200 Connection Established\r\n\r\n" to the client, the LEFT and REST bytes
 *   and then the client's to the target, and the two carried like any connection (splice, half-closes); the
 *   connection to the proxy stays open as the control channel: "\0OK\n" now, "\0BYTES IN OUT\n"
 *   with the bytes read from and written to the target so far (while they change: every 100 ms or
 *   MiB), "\0DONE IN OUT\n" at the tunnel's end, then it is closed. The proxy closing it, or
 *   sending anything on it, ends the tunnel (both sides reset).
 * - Not connected: "\0FAIL ERRNO\n", and the connection is carried again: the proxy answers the
 *   client (502 or 504, its reason, the denial recorded) and closes.
 *
 * The bridge dies with the launch: PR_SET_PDEATHSIG fires when the process that execs FILE (its
 * parent) ends (SIGTERM, on which each open tunnel tells the proxy its bytes before the bridge
 * exits; the connector gets SIGKILL), and it is in the launch's cgroup anyway. It leaves the
 * launch's process group, so
 * that a cancel signal meant for the tool (SIGINT, SIGTERM) does not cut the tool's network while
 * the tool still handles it; it keeps none of the caller's descriptors (0, 1 and 2 are /dev/null).
 * FILE sees it as a child it did not start: a program that waits for every child before it exits
 * waits for it too. PR_SET_PDEATHSIG follows the thread that forked, FILE's main thread: a FILE
 * that ends that thread early, or execs from another thread, ends the bridge with it (its network
 * is then closed, never opened).
 *
 * Fails closed: a problem before the exec prints one line "toolvisor-netns: <what>: <why>" on
 * stderr and exits 125 without running FILE. Exec failure: 127 when FILE does not exist, 126
 * otherwise (the bridge then dies with this process).
 *
 * C99 + GNU over the C library, nothing from the environment, no PATH search.
 * Build: cc -std=gnu99 -O2 -Wall -Wextra -Werror -o toolvisor-netns this.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define PROG "toolvisor-netns"
#define VERSION "1"
#define EXIT_SETUP 125

/* ---- kernel numbers, carried here: the distro headers may lag the kernel or hide them */

#ifndef __NR_close_range
#define __NR_close_range 436 /* 5.9; the same number on every architecture */
#endif
#define NETNS_SIOCGIFFLAGS 0x8913
#define NETNS_SIOCSIFFLAGS 0x8914
#define NETNS_IFF_UP 0x1
#define NETNS_F_SETPIPE_SZ 1031 /* F_LINUX_SPECIFIC_BASE + 7 */
#define NETNS_F_GETPIPE_SZ 1032 /* F_LINUX_SPECIFIC_BASE + 8 */
#define NETNS_SPLICE_F_MOVE 1
#define NETNS_SPLICE_F_NONBLOCK 2

#define MAX_PUBLISH 64
#define MAX_PAIRS 512
#define BACKLOG 511
/* Descriptors kept out of the connections' share: listeners, epoll, the reserve, some slack. */
#define SPARE_FDS (MAX_PUBLISH + 16)
/* Rounds of copying per wake-up of one connection: enough to move a few pipes' worth, few
 * enough that one fast connection does not keep the others waiting. */
#define ROUNDS 4
/* What a direction's pipe grows to once it fills (a bulk transfer): a splice moves up to this
 * much, which halves the bridge's time per byte against 64 KiB (and loopback's TCP work with it).
 * /proc/sys/fs/pipe-max-size is 1 MiB by default; an unprivileged user's pipes past
 * /proc/sys/fs/pipe-user-pages-soft stay as they are. */
#define BULK_PIPE (1 << 20)

/* ---- the handoff's wire format (--handoff; the header comment describes the exchange) */

#define HELLO "\0TVNB1\r\n"
#define HELLO_SIZE 8
#define FRAME_PREFIX "\0TVNH1 "
#define FRAME_PREFIX_SIZE 7
#define REST_PREFIX "\0REST "
#define REST_PREFIX_SIZE 6
/* A frame line: 16 addresses of at most 45 characters each fit with room to spare. */
#define FRAME_MAX 1024
#define MAX_ADDRESSES 16
#define NONCE_SIZE 32
/* What the proxy may have read of the client's past the CONNECT head: its stream buffer, the
 * socket's, a read's worth; far less in practice (a client waits for the 200). */
#define REST_MAX (1 << 20)
static const char ESTABLISHED[] = "HTTP/1.1 200 Connection Established\r\n\r\n";
/* A tunnel tells the proxy its bytes so far when they changed and it last told them TELL_MS ago, or
 * TELL_BYTES ago: a few lines a second at most, and one a MiB in a bulk transfer. */
#define TELL_MS 100
#define TELL_BYTES (1ULL << 20)

/* ---- failing closed */

static void fail(const char *what, const char *why) __attribute__((noreturn));
static void fail(const char *what, const char *why) {
  fprintf(stderr, PROG ": %s: %s\n", what, why);
  _exit(EXIT_SETUP);
}

static void fail_errno(const char *what) __attribute__((noreturn));
static void fail_errno(const char *what) { fail(what, strerror(errno)); }

/* Fails with "<flag> <value>: <why>". */
static void fail_on(const char *flag, const char *value, const char *why) __attribute__((noreturn));
static void fail_on(const char *flag, const char *value, const char *why) {
  fprintf(stderr, PROG ": %s %s: %s\n", flag, value, why);
  _exit(EXIT_SETUP);
}

/* ---- the command line */

struct publish {
  int host_port, inner_port;
};

struct plan {
  const char *proxy;
  int port;
  int handoff;
  struct publish publish[MAX_PUBLISH];
  int publishes;
  char **command;
};

/* A port number, 1 to 65535, from `text` up to `end` (exclusive); -1 when it is not one. */
static int port_of(const char *text, const char *end) {
  long n = 0;
  const char *p;
  if (text == end || end - text > 5) return -1;
  for (p = text; p < end; p++) {
    if (*p < '0' || *p > '9') return -1;
    n = n * 10 + (*p - '0');
  }
  return n >= 1 && n <= 65535 ? (int)n : -1;
}

static void usage_error(const char *what, const char *why) __attribute__((noreturn));
static void usage_error(const char *what, const char *why) {
  fprintf(stderr,
          PROG ": %s: %s (usage: " PROG
               " --proxy SOCKETPATH --port PORT [--handoff] [--publish HOSTPORT:INNERPORT]... -- FILE [ARGS...])\n",
          what, why);
  _exit(EXIT_SETUP);
}

static void parse(int argc, char **argv, struct plan *p) {
  int i, j;
  struct sockaddr_un address;
  struct stat st;
  memset(p, 0, sizeof *p);
  p->port = -1;
  for (i = 1; i < argc; i++) {
    const char *a = argv[i], *value;
    if (strcmp(a, "--") == 0) {
      p->command = argv + i + 1;
      break;
    }
    if (strcmp(a, "--handoff") == 0) {
      if (p->handoff) fail(a, "given twice");
      p->handoff = 1;
      continue;
    }
    if (strcmp(a, "--proxy") != 0 && strcmp(a, "--port") != 0 && strcmp(a, "--publish") != 0) {
      usage_error(a, "unknown option");
    }
    if (i + 1 >= argc) usage_error(a, "missing value");
    value = argv[++i];
    if (strcmp(a, "--proxy") == 0) {
      if (p->proxy != NULL) fail(a, "given twice");
      if (value[0] != '/') fail_on(a, value, "not an absolute path");
      if (strlen(value) >= sizeof address.sun_path) {
        fail_on(a, value, "longer than 107 bytes, the most a unix socket path may have");
      }
      p->proxy = value;
    } else if (strcmp(a, "--port") == 0) {
      if (p->port >= 0) fail(a, "given twice");
      p->port = port_of(value, value + strlen(value));
      if (p->port < 0) fail_on(a, value, "expected a port number from 1 to 65535");
    } else {
      const char *colon = strchr(value, ':');
      struct publish *pub = &p->publish[p->publishes];
      if (p->publishes == MAX_PUBLISH) fail(a, "more than 64 ports");
      pub->host_port = colon ? port_of(value, colon) : -1;
      pub->inner_port = colon ? port_of(colon + 1, colon + 1 + strlen(colon + 1)) : -1;
      if (pub->host_port < 0 || pub->inner_port < 0) {
        fail_on(a, value, "expected HOSTPORT:INNERPORT, port numbers from 1 to 65535");
      }
      for (j = 0; j < p->publishes; j++) {
        if (p->publish[j].host_port == pub->host_port) fail_on(a, value, "this host port is published twice");
      }
      p->publishes++;
    }
  }
  if (p->command == NULL) usage_error("usage", "missing -- FILE");
  if (p->command[0] == NULL) usage_error("usage", "missing FILE after --");
  if (p->proxy == NULL) fail("--proxy", "missing: the path of the proxy's unix socket");
  if (p->port < 0) fail("--port", "missing: the port the proxy is reached at inside the namespace");
  for (j = 0; j < p->publishes; j++) {
    if (p->publish[j].inner_port == p->port) {
      char value[16];
      snprintf(value, sizeof value, "%d:%d", p->publish[j].host_port, p->publish[j].inner_port);
      fail_on("--publish", value, "the inner port is the proxy's (--port)");
    }
  }
  if (p->command[0][0] != '/') fail(p->command[0], "the file must be an absolute path (there is no PATH search)");
  /* Checked now, so that a launch whose proxy is not there is refused rather than left without a network. */
  if (stat(p->proxy, &st) != 0) fail_on("--proxy", p->proxy, strerror(errno));
  if (!S_ISSOCK(st.st_mode)) fail_on("--proxy", p->proxy, "not a unix socket");
}

/* ---- sockets */

/* A nonblocking, close-on-exec TCP listener on 127.0.0.1:port ([::1]:port with `six`); -1 with errno. */
static int listen_on(int port, int six) {
  int fd = socket(six ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), on = 1, err;
  if (fd < 0) return -1;
  if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0) goto failed;
  if (six) {
    struct sockaddr_in6 at;
    if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on) != 0) goto failed;
    memset(&at, 0, sizeof at);
    at.sin6_family = AF_INET6;
    at.sin6_port = htons((uint16_t)port);
    at.sin6_addr = in6addr_loopback;
    if (bind(fd, (struct sockaddr *)&at, sizeof at) != 0) goto failed;
  } else {
    struct sockaddr_in at;
    memset(&at, 0, sizeof at);
    at.sin_family = AF_INET;
    at.sin_port = htons((uint16_t)port);
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&at, sizeof at) != 0) goto failed;
  }
  if (listen(fd, BACKLOG) != 0) goto failed;
  return fd;
failed:
  err = errno;
  close(fd);
  errno = err;
  return -1;
}

static void no_delay(int fd) {
  int on = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on); /* latency only: a failure changes nothing else */
}

/* Closes `fd` so that its peer sees a reset: a connection this bridge cannot carry. */
static void reset(int fd) {
  struct linger now = { 1, 0 };
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &now, sizeof now); /* not a TCP socket: a plain close */
  close(fd);
}

static long long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ---- the namespace */

/* Writes `text` to the file at `path` (a /proc/self map); 0, or -1 with errno. */
static int write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC), err;
  ssize_t n;
  size_t length = strlen(text);
  if (fd < 0) return -1;
  n = write(fd, text, length);
  err = errno;
  close(fd);
  if (n < 0) {
    errno = err;
    return -1;
  }
  if ((size_t)n != length) {
    errno = EIO;
    return -1;
  }
  return 0;
}

static void enter_namespace(void) {
  uid_t uid = geteuid();
  gid_t gid = getegid();
  char map[64];
  if (unshare(CLONE_NEWNET) == 0) return;
  if (errno != EPERM) fail_errno("unshare(CLONE_NEWNET)");
  if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) {
    if (errno == ENOSPC || errno == EPERM || errno == EUSERS) {
      char why[256];
      snprintf(why, sizeof why, "%s (a user namespace is needed for a network namespace without root: /proc/sys/user/max_user_namespaces, or a sandbox that forbids them)",
               strerror(errno));
      fail("unshare(CLONE_NEWUSER|CLONE_NEWNET)", why);
    }
    fail_errno("unshare(CLONE_NEWUSER|CLONE_NEWNET)");
  }
  /* setgroups first: an unprivileged gid map is refused while setgroups is allowed. */
  if (write_file("/proc/self/setgroups", "deny") != 0) fail_errno("write /proc/self/setgroups");
  snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
  if (write_file("/proc/self/uid_map", map) != 0) fail_errno("write /proc/self/uid_map");
  snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
  if (write_file("/proc/self/gid_map", map) != 0) fail_errno("write /proc/self/gid_map");
}

static void loopback_up(void) {
  struct ifreq request;
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail_errno("bring lo up: socket");
  memset(&request, 0, sizeof request);
  memcpy(request.ifr_name, "lo", 3);
  if (ioctl(fd, NETNS_SIOCGIFFLAGS, &request) != 0) fail_errno("bring lo up: SIOCGIFFLAGS");
  request.ifr_flags |= NETNS_IFF_UP;
  if (ioctl(fd, NETNS_SIOCSIFFLAGS, &request) != 0) fail_errno("bring lo up: SIOCSIFFLAGS");
  close(fd);
}

/* ---- what the bridge and the connector do first: keep only their own descriptors, die with the launch */

static int kept(const int *keep, int n, int fd) {
  int i;
  for (i = 0; i < n; i++)
    if (keep[i] == fd) return 1;
  return 0;
}

/*
 * Closes every descriptor but the `n` sorted ones of `keep`: close_range over the gaps (5.9), else
 * those /proc/self/fd lists, else each one below the descriptor limit.
 */
static void keep_only(const int *keep, int n) {
  unsigned from = 0;
  int i;
  DIR *listing;
  struct dirent *entry;
  for (i = 0; i <= n; i++) {
    unsigned to = i < n ? (unsigned)keep[i] : ~0U;
    if (to > from && syscall(__NR_close_range, from, to - 1, 0U) != 0) break;
    if (i < n) from = (unsigned)keep[i] + 1;
  }
  if (i > n) return;
  listing = opendir("/proc/self/fd");
  if (listing == NULL) {
    long fd, limit = sysconf(_SC_OPEN_MAX);
    for (fd = 0; fd < (limit > 0 ? limit : 65536); fd++)
      if (!kept(keep, n, (int)fd)) close((int)fd);
    return;
  }
  while ((entry = readdir(listing)) != NULL) {
    char *end;
    long fd = strtol(entry->d_name, &end, 10);
    if (end != entry->d_name && *end == '\0' && fd != dirfd(listing) && !kept(keep, n, (int)fd)) close((int)fd);
  }
  closedir(listing);
}

static int ascending(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/*
 * A helper process's start: it gets `death` when the process that execs FILE (`parent`) ends, and
 * exits at once when that one is gone already; it leaves the launch's process group (so that a
 * cancel signal meant for the tool does not cut the tool's network while the tool still handles
 * it), keeps only the `n` descriptors of `keep` (sorted here), and has 0, 1 and 2 on /dev/null:
 * nothing of the caller's (a pipe toolvisor waits on) is held by it.
 */
static void detach(pid_t parent, int death, int *keep, int n) {
  int null;
  if (prctl(PR_SET_PDEATHSIG, death, 0, 0, 0) != 0) _exit(EXIT_SETUP);
  if (getppid() != parent) _exit(0); /* the launch ended before PR_SET_PDEATHSIG was set */
  setpgid(0, 0);
  signal(SIGPIPE, SIG_IGN); /* a write to a connection whose peer left is EPIPE, handled */
  qsort(keep, (size_t)n, sizeof keep[0], ascending);
  keep_only(keep, n);
  null = open("/dev/null", O_RDWR);
  if (null >= 0) {
    while (null >= 0 && null < 2) null = dup(null);
    if (null > 2) close(null);
  }
}

/* ---- the connector (--handoff): TCP connections in the host's network namespace, on request */

/* What the bridge asks: a connection to `address` (`family` AF_INET or AF_INET6) at `port`,
 * within `timeout_ms`; `pair` and `generation` come back with the answer, to whom it is for. */
struct dial_request {
  uint32_t pair, generation;
  uint16_t family, port;
  uint32_t timeout_ms;
  unsigned char address[16];
};

/* The answer: `error` 0 and the connected socket attached (SCM_RIGHTS), or the errno. */
struct dial_answer {
  uint32_t pair, generation;
  int32_t error;
};

/* A connect under way: its socket (-1: the slot is free), what was asked, and until when. */
struct dialing {
  int fd;
  struct dial_request request;
  long long deadline;
};

static struct {
  int channel, epoll;
  struct dialing dialing[MAX_PAIRS];
} connector;

/* Answers `request` with `error`, or with `fd` (connected, then closed here); ends the connector
 * when the bridge is gone, and with it the launch's network. */
static void answer(const struct dial_request *request, int error, int fd) {
  struct dial_answer said;
  struct iovec part;
  struct msghdr message;
  union {
    struct cmsghdr header;
    char space[CMSG_SPACE(sizeof(int))];
  } control;
  memset(&said, 0, sizeof said);
  said.pair = request->pair;
  said.generation = request->generation;
  said.error = error;
  part.iov_base = &said;
  part.iov_len = sizeof said;
  memset(&message, 0, sizeof message);
  message.msg_iov = &part;
  message.msg_iovlen = 1;
  if (fd >= 0) {
    struct cmsghdr *c;
    memset(&control, 0, sizeof control);
    message.msg_control = control.space;
    message.msg_controllen = sizeof control.space;
    c = CMSG_FIRSTHDR(&message);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  /* Blocking: the bridge reads its answers as they come, and holds at most one request a pair. */
  while (sendmsg(connector.channel, &message, MSG_NOSIGNAL) < 0) {
    if (errno != EINTR) _exit(0);
  }
  if (fd >= 0) close(fd);
}

/* Starts the connection `request` asks for: answered at once when it is made or refused, else
 * waited for in epoll. */
static void dial(const struct dial_request *request) {
  struct sockaddr_storage at;
  socklen_t size;
  struct dialing *slot = NULL;
  struct epoll_event e;
  int fd, i;
  memset(&at, 0, sizeof at);
  if (request->port == 0) return answer(request, EINVAL, -1);
  if (request->family == AF_INET) {
    struct sockaddr_in *four = (struct sockaddr_in *)&at;
    four->sin_family = AF_INET;
    four->sin_port = htons(request->port);
    memcpy(&four->sin_addr, request->address, 4);
    size = sizeof *four;
  } else if (request->family == AF_INET6) {
    struct sockaddr_in6 *six = (struct sockaddr_in6 *)&at;
    six->sin6_family = AF_INET6;
    six->sin6_port = htons(request->port);
    memcpy(&six->sin6_addr, request->address, 16);
    size = sizeof *six;
  } else {
    return answer(request, EAFNOSUPPORT, -1);
  }
  for (i = 0; i < MAX_PAIRS && slot == NULL; i++)
    if (connector.dialing[i].fd < 0) slot = &connector.dialing[i];
  if (slot == NULL) return answer(request, ENOBUFS, -1);
  fd = socket(request->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return answer(request, errno, -1);
  if (connect(fd, (struct sockaddr *)&at, size) == 0) return answer(request, 0, fd);
  if (errno != EINPROGRESS) {
    int err = errno;
    close(fd);
    return answer(request, err, -1);
  }
  e.events = EPOLLOUT;
  e.data.ptr = slot;
  if (epoll_ctl(connector.epoll, EPOLL_CTL_ADD, fd, &e) != 0) {
    int err = errno;
    close(fd);
    return answer(request, err, -1);
  }
  slot->fd = fd;
  slot->request = *request;
  slot->deadline = now_ms() + (request->timeout_ms > 0 ? request->timeout_ms : 1);
}

/* A connect under way that epoll says is done: made, or refused. */
static void dialed(struct dialing *slot) {
  int err = 0;
  socklen_t size = sizeof err;
  struct sockaddr_storage peer;
  socklen_t peer_size = sizeof peer;
  if (getsockopt(slot->fd, SOL_SOCKET, SO_ERROR, &err, &size) != 0) err = errno;
  if (err == 0 && getpeername(slot->fd, (struct sockaddr *)&peer, &peer_size) != 0) {
    if (errno == ENOTCONN) return; /* not done after all */
    err = errno;
  }
  epoll_ctl(connector.epoll, EPOLL_CTL_DEL, slot->fd, NULL);
  if (err == 0) {
    answer(&slot->request, 0, slot->fd);
  } else {
    close(slot->fd);
    answer(&slot->request, err, -1);
  }
  slot->fd = -1;
}

/* Takes every request waiting on the channel; ends the connector when the bridge is gone. */
static void take_requests(void) {
  for (;;) {
    struct dial_request request;
    ssize_t n = recv(connector.channel, &request, sizeof request, MSG_DONTWAIT);
    if (n == 0) _exit(0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return;
      _exit(0);
    }
    if (n == (ssize_t)sizeof request) dial(&request); /* anything else is not a request of the bridge's */
  }
}

static void run_connector(int channel, pid_t parent) __attribute__((noreturn));
static void run_connector(int channel, pid_t parent) {
  struct epoll_event e, events[64];
  int i;
  detach(parent, SIGKILL, &channel, 1);
  prctl(PR_SET_NAME, "netns-connector", 0, 0, 0); /* told apart from the bridge in ps and /proc */
  connector.channel = channel;
  connector.epoll = epoll_create1(EPOLL_CLOEXEC);
  if (connector.epoll < 0) _exit(EXIT_SETUP);
  for (i = 0; i < MAX_PAIRS; i++) connector.dialing[i].fd = -1;
  e.events = EPOLLIN;
  e.data.ptr = NULL;
  if (epoll_ctl(connector.epoll, EPOLL_CTL_ADD, channel, &e) != 0) _exit(EXIT_SETUP);
  for (;;) {
    long long now = now_ms(), next = -1;
    int n;
    for (i = 0; i < MAX_PAIRS; i++) {
      struct dialing *slot = &connector.dialing[i];
      if (slot->fd < 0) continue;
      if (slot->deadline <= now) {
        close(slot->fd); /* and out of epoll */
        slot->fd = -1;
        answer(&slot->request, ETIMEDOUT, -1);
      } else if (next < 0 || slot->deadline < next) {
        next = slot->deadline;
      }
    }
    n = epoll_wait(connector.epoll, events, 64, next < 0 ? -1 : (int)(next - now));
    if (n < 0) {
      if (errno == EINTR) continue;
      _exit(EXIT_SETUP);
    }
    for (i = 0; i < n; i++) {
      if (events[i].data.ptr == NULL) take_requests();
      else if (((struct dialing *)events[i].data.ptr)->fd >= 0) dialed(events[i].data.ptr);
    }
  }
}

/* ---- the bridge: what epoll hands back */

enum kind { TO_PROXY, TO_INNER, SIDE, CONNECTOR };

/* A listener: connections accepted on it go to the proxy (inside) or to an inner port (published). */
struct listener {
  enum kind kind;
  int fd;
  int inner_port;
};

struct pair;

/* One socket of a connection: epoll's data points here. */
struct side {
  enum kind kind;
  struct pair *pair;
};

/* One direction of a connection: bytes read from `from` wait in the pipe until `to` takes them. */
struct flow {
  int pipe[2];
  size_t held, capacity;
  int ended; /* `from` read to its end */
  int full;  /* the pipe takes no more until `to` takes some */
  int shut;  /* the end was passed on: shutdown(to, SHUT_WR) */
  int grown; /* it filled once, and its pipe was asked to grow */
  unsigned long long taken, given; /* bytes read from `from`, written to `to` */
};

/*
 * How far a connection to the proxy is, with --handoff; every other connection is CARRIED from
 * its start. Only WATCHED looks at a byte the proxy sent, and only at the first one.
 */
enum stage {
  CARRIED, /* bytes both ways, none looked at */
  WATCHED, /* the client's bytes (not its end) go to the proxy; the proxy's first byte is awaited */
  FRAMED,  /* it was NUL: the frame is being read */
  HANDED,  /* the fence goes out, the REST bytes come in, the connector dials */
  TUNNEL,  /* fd[1] is the target's socket, ctl the control channel to the proxy */
};

/* A handoff under way, from its frame until the REST bytes have gone to the target. */
struct handoff {
  char line[FRAME_MAX]; /* the frame line, then the REST line */
  size_t line_size;
  char nonce[NONCE_SIZE + 1];
  int port, count, next; /* the addresses, and the next to try */
  struct {
    uint16_t family;
    unsigned char address[16];
  } addresses[MAX_ADDRESSES];
  long long deadline;
  int asking; /* a request is out to the connector */
  int target; /* the connected socket, until the tunnel takes it; -1 */
  int failed, error; /* every address tried; the last errno */
  char fence[8 + NONCE_SIZE];
  size_t fence_size, fence_sent;
  int framed;        /* the frame line was read; its LEFT bytes are being read */
  size_t left, late; /* the client's bytes the frame carries; those the proxy had not read then */
  int rest_known;    /* the REST line was read (only when `late`) */
  char *rest;        /* LEFT bytes, then REST bytes: all for the target, before any other */
  size_t rest_size, rest_got, rest_sent;
};

/* A connection: fd[0] accepted, fd[1] made by the bridge; flow[i] copies fd[i] to fd[1 - i]. */
struct pair {
  struct side side[3]; /* side[2]: the control channel */
  int fd[2], ctl;
  unsigned events[3]; /* what each socket is registered for in epoll; 0: not registered */
  struct flow flow[2];
  int connecting, in_use;
  enum stage stage;
  struct handoff *handoff;
  unsigned long long told_in, told_out; /* the bytes the proxy was told of, in a tunnel */
  long long told_at;
  int told_ends; /* which directions had ended when it was told (bit i: flow[i]) */
  uint32_t generation; /* changes at each reuse: a late answer of the connector's is for no one */
  struct pair *next;   /* on the free list, or on the list of those closed this round */
};

static struct {
  int epoll, reserve, connector, handoff;
  long long tell_at; /* when some tunnel's bytes are to be told next; 0: none is waiting */
  struct listener listeners[MAX_PUBLISH + 2];
  int listening;
  const char *proxy;
  struct pair pairs[MAX_PAIRS];
  struct pair *free, *closed;
} bridge;

static enum kind connector_kind = CONNECTOR;

/* Which directions of a connection have ended (bit i: flow[i] read its source to the end). */
static int ends(const struct pair *p) { return (p->flow[0].ended ? 1 : 0) | (p->flow[1].ended ? 2 : 0); }

/*
 * Tells the proxy a tunnel's bytes (read from the target, written to it): "\0BYTES IN OUT\n" so
 * far, "\0DONE IN OUT\n" at its end. 0, or -1 when the line could not go whole (a proxy that
 * stopped reading its control channel: the tunnel is then ended).
 */
static int tell(struct pair *p, const char *what) {
  char line[64];
  int n = snprintf(line, sizeof line, "%c%s %llu %llu\n", 0, what, p->flow[1].taken, p->flow[0].given);
  if (n <= 0 || (size_t)n >= sizeof line) return -1;
  p->told_in = p->flow[1].taken;
  p->told_out = p->flow[0].given;
  p->told_at = now_ms();
  p->told_ends = ends(p);
  return send(p->ctl, line, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) == n ? 0 : -1;
}

/* Whether a tunnel moved bytes the proxy was not told of yet. */
static int untold(const struct pair *p) {
  return p->stage == TUNNEL && (p->flow[1].taken != p->told_in || p->flow[0].given != p->told_out);
}

/* A tunnel's bytes so far, told now if they were not told for TELL_MS or TELL_BYTES, or a
 * direction ended since (a tool that closed its socket is about to end, its launch with it), else
 * when TELL_MS is over: the proxy's accounts stay live, and hold what a tool got (all but the last
 * TELL_MS or TELL_BYTES) even when its launch is killed at once, the bridge with it, before the
 * tunnel's end could be told. */
static int tell_soon(struct pair *p, long long now) {
  if (!untold(p)) return 0;
  if (now - p->told_at >= TELL_MS || ends(p) != p->told_ends ||
      (p->flow[1].taken - p->told_in) + (p->flow[0].given - p->told_out) >= TELL_BYTES)
    return tell(p, "BYTES");
  if (bridge.tell_at == 0 || p->told_at + TELL_MS < bridge.tell_at) bridge.tell_at = p->told_at + TELL_MS;
  return 0;
}

static void pump(struct pair *p);

static void free_handoff(struct pair *p) {
  struct handoff *h = p->handoff;
  if (h == NULL) return;
  if (h->target >= 0) reset(h->target);
  free(h->rest);
  free(h);
  p->handoff = NULL;
}

/* Closing removes the sockets from epoll. The slot is reused only after this round's events, some
 * of which may still point at it. A tunnel tells the proxy its bytes first. */
static void close_pair(struct pair *p, int broken) {
  int i;
  if (p->stage == TUNNEL) {
    /* Fails only when the proxy closed the channel first: then nobody waits for the count. */
    tell(p, "DONE");
    close(p->ctl);
    p->ctl = -1;
  }
  for (i = 0; i < 2; i++) {
    if (broken) reset(p->fd[i]);
    else close(p->fd[i]);
    if (p->flow[i].pipe[0] >= 0) close(p->flow[i].pipe[0]), close(p->flow[i].pipe[1]);
  }
  free_handoff(p);
  p->in_use = 0;
  p->next = bridge.closed;
  bridge.closed = p;
}

/* Registers socket `i` of `p` (2: the control channel) for `events` in epoll (none: out of it),
 * when that changed. */
static int want(struct pair *p, int i, unsigned events) {
  struct epoll_event e;
  int op;
  if (p->events[i] == events) return 0;
  op = p->events[i] == 0 ? EPOLL_CTL_ADD : events == 0 ? EPOLL_CTL_DEL : EPOLL_CTL_MOD;
  e.events = events;
  e.data.ptr = &p->side[i];
  if (epoll_ctl(bridge.epoll, op, i < 2 ? p->fd[i] : p->ctl, &e) != 0) return -1;
  p->events[i] = events;
  return 0;
}

/* Whether flow `i` may read from its socket now. */
static int may_take(const struct pair *p, int i) {
  if (p->stage == CARRIED || p->stage == TUNNEL) return 1;
  return p->stage == WATCHED && i == 0;
}

/* Whether flow `i` may write to its socket now: in a tunnel, the client's bytes wait for the REST
 * bytes (which came before them) to reach the target. */
static int may_give(const struct pair *p, int i) {
  if (p->stage == CARRIED) return 1;
  if (p->stage == TUNNEL) return i == 1 || p->handoff == NULL;
  return p->stage == WATCHED && i == 0;
}

/*
 * Level-triggered interest, only in what can make progress: a socket that is waited on for
 * nothing is out of epoll, so a hang-up it reports cannot wake the loop again and again.
 */
static int update_interest(struct pair *p) {
  int i;
  if (p->connecting) return want(p, 0, 0) != 0 || want(p, 1, EPOLLOUT) != 0 ? -1 : 0;
  for (i = 0; i < 2; i++) {
    const struct flow *out = &p->flow[i], *in = &p->flow[1 - i];
    unsigned events = (may_take(p, i) && !out->ended && !out->full ? EPOLLIN : 0) |
                      (may_give(p, 1 - i) && in->held > 0 ? EPOLLOUT : 0);
    if (i == 1) {
      /* The proxy's socket while a handoff may come or goes on: its first byte, the frame, the
       * REST bytes, its end; the fence to write. The target's, for the REST bytes to write. */
      if (p->stage == WATCHED || p->stage == FRAMED || p->stage == HANDED) events |= EPOLLIN;
      if (p->stage == HANDED && p->handoff->fence_sent < p->handoff->fence_size) events |= EPOLLOUT;
      if (p->stage == TUNNEL && p->handoff != NULL) events |= EPOLLOUT;
    }
    if (want(p, i, events) != 0) return -1;
  }
  return p->stage == TUNNEL ? want(p, 2, EPOLLIN) : 0;
}

/* A pipe that filled grows, once, where the system allows: it stays as it was otherwise. */
static void grow(struct flow *f) {
  int capacity = fcntl(f->pipe[1], NETNS_F_SETPIPE_SZ, BULK_PIPE);
  f->grown = 1;
  if (capacity > 0 && (size_t)capacity > f->capacity) {
    f->capacity = (size_t)capacity;
    f->full = 0;
  }
}

/* Moves what it can of flow `i`: 1 when something moved, 0 when nothing could, -1 on an error. */
static int move(struct pair *p, int i) {
  struct flow *f = &p->flow[i];
  int from = p->fd[i], to = p->fd[1 - i], moved = 0;
  ssize_t n;
  if (!f->ended && !f->full && may_take(p, i)) {
    n = splice(from, NULL, f->pipe[1], NULL, f->capacity - f->held, NETNS_SPLICE_F_MOVE | NETNS_SPLICE_F_NONBLOCK);
    if (n > 0) {
      f->held += (size_t)n;
      f->taken += (unsigned long long)n;
      f->full = f->held >= f->capacity;
      if (f->full && !f->grown) grow(f);
      moved = 1;
    } else if (n == 0) {
      f->ended = 1;
      moved = 1;
    } else if (errno == EAGAIN) {
      /* With bytes held (`to` was full) the pipe may be out of slots before it is out of bytes:
       * reading waits until `to` took some, instead of waking up for a read that cannot happen. */
      if (f->held > 0) f->full = 1;
    } else if (errno != EINTR) {
      return -1;
    }
  }
  if (!may_give(p, i)) return moved;
  /* Passed on at once: the socket is waited on for writing only while it is full. */
  if (f->held > 0) {
    n = splice(f->pipe[0], NULL, to, NULL, f->held, NETNS_SPLICE_F_MOVE | NETNS_SPLICE_F_NONBLOCK);
    if (n > 0) {
      f->held -= (size_t)n;
      f->given += (unsigned long long)n;
      f->full = 0;
      moved = 1;
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      return -1;
    }
  }
  /* Not while WATCHED: the proxy may still need the way there open, for the fence. */
  if (f->ended && f->held == 0 && !f->shut && p->stage != WATCHED) {
    shutdown(to, SHUT_WR); /* fails only when `to` is gone, which its own flow finds */
    f->shut = 1;
    moved = 1;
  }
  return moved;
}

/* ---- the handoff's stages, each run as far as it can go: 0 (waiting, or moved on), -1 broken */

/*
 * Reads one line ending in '\n' from `fd` into `line` (holding `*size` bytes of it already, `cap`
 * at most), never a byte past it: 1 when it is complete, 0 to wait, -1 on an end, an error, or a
 * line too long.
 */
static int read_line(int fd, char *line, size_t cap, size_t *size) {
  ssize_t n = recv(fd, line + *size, cap - *size, MSG_PEEK | MSG_DONTWAIT), taken;
  char *end;
  size_t take;
  if (n == 0) return -1;
  if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
  end = memchr(line + *size, '\n', (size_t)n);
  take = end != NULL ? (size_t)(end - (line + *size)) + 1 : (size_t)n;
  taken = recv(fd, line + *size, take, MSG_DONTWAIT);
  if (taken != (ssize_t)take) return -1;
  *size += take;
  if (end != NULL) return 1;
  return *size >= cap ? -1 : 0;
}

/* The proxy's first byte: NUL starts a frame; anything else, or its end, and the connection is
 * carried from now on, never looked at again. */
static int watch(struct pair *p) {
  char first;
  ssize_t n = recv(p->fd[1], &first, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
  if (n == 0 || first != '\0') {
    p->stage = CARRIED;
    return 0;
  }
  p->handoff = calloc(1, sizeof *p->handoff);
  if (p->handoff == NULL) return -1;
  p->handoff->target = -1;
  p->stage = FRAMED;
  return 0;
}

/* The next field of `*s` up to a space (or the end of the line), NUL-terminated; NULL when none. */
static char *field(char **s) {
  char *start = *s, *space;
  if (*start == '\0') return NULL;
  space = strchr(start, ' ');
  if (space != NULL) {
    *space = '\0';
    *s = space + 1;
  } else {
    *s = start + strlen(start);
  }
  return start;
}

/* A whole decimal number of at most `max`, or -1. */
static long long number(const char *text, long long max) {
  char *end;
  unsigned long long n;
  if (text == NULL || text[0] < '0' || text[0] > '9') return -1;
  errno = 0;
  n = strtoull(text, &end, 10);
  return *end != '\0' || errno != 0 || n > (unsigned long long)max ? -1 : (long long)n;
}

/*
 * The frame's fields, from its line (ending in '\n'), and what follows from them: the client's
 * bytes the proxy read past the CONNECT head (LEFT, which the frame carries) and those this bridge
 * sent that the proxy had not read then (late: they come back as REST). 0, or -1 when it is not a
 * frame, or its count of the client's bytes cannot be.
 */
static int parse_frame(struct pair *p) {
  struct handoff *h = p->handoff;
  char *s = h->line + FRAME_PREFIX_SIZE, *nonce, *addresses, *next;
  long long port, timeout, taken, left;
  if (h->line_size <= FRAME_PREFIX_SIZE || memcmp(h->line, FRAME_PREFIX, FRAME_PREFIX_SIZE) != 0) return -1;
  h->line[h->line_size - 1] = '\0';
  port = number(field(&s), 65535);
  timeout = number(field(&s), 3600000);
  nonce = field(&s);
  addresses = field(&s);
  taken = number(field(&s), LLONG_MAX);
  left = number(field(&s), REST_MAX);
  if (port < 1 || timeout < 1 || nonce == NULL || addresses == NULL || taken < 0 || left < 0 || *s != '\0') return -1;
  if (strlen(nonce) != NONCE_SIZE || strspn(nonce, "0123456789abcdef") != NONCE_SIZE) return -1;
  /* The proxy cannot have read more than was sent to it, nor carry back more than it read. */
  if ((unsigned long long)taken > p->flow[0].given || left > taken) return -1;
  memcpy(h->nonce, nonce, NONCE_SIZE + 1);
  h->port = (int)port;
  h->deadline = now_ms() + timeout;
  h->left = (size_t)left;
  if (p->flow[0].given - (unsigned long long)taken > REST_MAX) return -1;
  h->late = (size_t)(p->flow[0].given - (unsigned long long)taken);
  for (h->count = 0; addresses != NULL; addresses = next) {
    next = strchr(addresses, ',');
    if (next != NULL) *next++ = '\0';
    if (h->count == MAX_ADDRESSES) return -1;
    if (inet_pton(AF_INET, addresses, h->addresses[h->count].address) == 1) h->addresses[h->count].family = AF_INET;
    else if (inet_pton(AF_INET6, addresses, h->addresses[h->count].address) == 1) h->addresses[h->count].family = AF_INET6;
    else return -1;
    h->count++;
  }
  h->rest_size = h->left + h->late;
  if (h->rest_size > 0 && (h->rest = malloc(h->rest_size)) == NULL) return -1;
  return 0;
}

/* Reads the REST buffer up to its byte `upto`: 1 when there, 0 to wait, -1 on an end or an error. */
static int read_rest_bytes(struct pair *p, size_t upto) {
  struct handoff *h = p->handoff;
  while (h->rest_got < upto) {
    ssize_t n = recv(p->fd[1], h->rest + h->rest_got, upto - h->rest_got, MSG_DONTWAIT);
    if (n == 0) return -1;
    if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
    h->rest_got += (size_t)n;
  }
  return 1;
}

/* Asks the connector for the next address; when none is left, or the time ran out, the handoff
 * failed (with the last attempt's errno, or ETIMEDOUT). */
static void ask(struct pair *p) {
  struct handoff *h = p->handoff;
  struct dial_request request;
  long long left = h->deadline - now_ms();
  if (left <= 0) h->error = ETIMEDOUT;
  if (left <= 0 || h->next >= h->count || bridge.connector < 0) {
    if (bridge.connector < 0 && h->error == 0) h->error = EPIPE;
    h->failed = 1;
    return;
  }
  memset(&request, 0, sizeof request);
  request.pair = (uint32_t)(p - bridge.pairs);
  request.generation = p->generation;
  request.family = h->addresses[h->next].family;
  request.port = (uint16_t)h->port;
  request.timeout_ms = (uint32_t)left;
  memcpy(request.address, h->addresses[h->next].address, 16);
  h->next++;
  if (send(bridge.connector, &request, sizeof request, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof request) {
    h->error = errno;
    h->failed = 1;
    return;
  }
  h->asking = 1;
}

/* The frame, read whole with its LEFT bytes: the fence made, the first address asked for. */
static int read_frame(struct pair *p) {
  struct handoff *h = p->handoff;
  int r;
  if (!h->framed) {
    r = read_line(p->fd[1], h->line, FRAME_MAX, &h->line_size);
    if (r <= 0) return r;
    if (parse_frame(p) != 0) return -1;
    h->framed = 1;
  }
  r = read_rest_bytes(p, h->left);
  if (r <= 0) return r;
  h->fence[0] = '\0';
  memcpy(h->fence + 1, "FENCE ", 6);
  memcpy(h->fence + 7, h->nonce, NONCE_SIZE);
  h->fence[7 + NONCE_SIZE] = '\n';
  h->fence_size = 8 + NONCE_SIZE;
  h->line_size = 0;
  p->stage = HANDED;
  ask(p);
  return 0;
}

/* The REST line and its bytes, when client bytes were late: 1 when all are read, 0 to wait, -1 broken. */
static int read_rest(struct pair *p) {
  struct handoff *h = p->handoff;
  if (h->late == 0) return 1;
  if (!h->rest_known) {
    char *end;
    unsigned long long size;
    int r = read_line(p->fd[1], h->line, 64, &h->line_size);
    if (r <= 0) return r;
    if (h->line_size <= REST_PREFIX_SIZE || memcmp(h->line, REST_PREFIX, REST_PREFIX_SIZE) != 0) return -1;
    size = strtoull(h->line + REST_PREFIX_SIZE, &end, 10);
    /* Exactly the bytes the proxy had not read when it framed: what this bridge knows it sent. */
    if (end == h->line + REST_PREFIX_SIZE || *end != '\n' || size != h->late) return -1;
    h->rest_known = 1;
  }
  return read_rest_bytes(p, h->rest_size);
}

/* Connected: the 200 to the client, the socket to the proxy becomes the control channel. */
static int open_tunnel(struct pair *p) {
  struct handoff *h = p->handoff;
  const ssize_t size = (ssize_t)sizeof ESTABLISHED - 1;
  /* Nothing was ever written to the client: its socket takes these few bytes at once. */
  if (send(p->fd[0], ESTABLISHED, (size_t)size, MSG_DONTWAIT | MSG_NOSIGNAL) != size) return -1;
  if (want(p, 1, 0) != 0) return -1;
  p->ctl = p->fd[1];
  p->fd[1] = h->target;
  h->target = -1;
  p->stage = TUNNEL;
  /* Counted from here: what the target gets and sends. */
  p->flow[0].given = 0;
  p->flow[1].taken = 0;
  if (send(p->ctl, "\0OK\n", 4, MSG_DONTWAIT | MSG_NOSIGNAL) != 4) return -1;
  if (h->rest_size == 0) free_handoff(p);
  return 0;
}

/* Every address failed: the proxy is told, and answers the client on the connection, carried again. */
static int refuse(struct pair *p) {
  char line[32];
  int n = snprintf(line, sizeof line, "%cFAIL %d\n", 0, p->handoff->error);
  if (n <= 0 || (size_t)n >= sizeof line) return -1;
  if (send(p->fd[1], line, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) != n) return -1;
  free_handoff(p);
  p->stage = CARRIED;
  return 0;
}

static int hand(struct pair *p) {
  struct handoff *h = p->handoff;
  char extra;
  ssize_t n;
  int r;
  /* The fence first: it may wait behind client bytes the proxy has not read yet. */
  if (h->fence_sent < h->fence_size) {
    n = send(p->fd[1], h->fence + h->fence_sent, h->fence_size - h->fence_sent, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
    h->fence_sent += (size_t)n;
    if (h->fence_sent < h->fence_size) return 0;
  }
  r = read_rest(p);
  if (r <= 0) return r;
  /* The proxy sends nothing more: an end is the gate closing, a byte a proxy that is not ours. */
  n = recv(p->fd[1], &extra, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n >= 0 || (errno != EAGAIN && errno != EINTR)) return -1;
  if (h->target >= 0) return open_tunnel(p);
  if (h->failed) return refuse(p);
  return 0;
}

/* The handoff's stages, as far as they go now. */
static int advance(struct pair *p) {
  for (;;) {
    enum stage was = p->stage;
    int r;
    if (p->stage == WATCHED) r = watch(p);
    else if (p->stage == FRAMED) r = read_frame(p);
    else if (p->stage == HANDED) r = hand(p);
    else return 0;
    if (r < 0) return -1;
    if (p->stage == was) return 0;
  }
}

/* The REST bytes to the target, before any of the client's. */
static int write_rest(struct pair *p) {
  struct handoff *h = p->handoff;
  while (h->rest_sent < h->rest_size) {
    ssize_t n = send(p->fd[1], h->rest + h->rest_sent, h->rest_size - h->rest_sent, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
    h->rest_sent += (size_t)n;
    p->flow[0].given += (unsigned long long)n;
  }
  free_handoff(p);
  return 0;
}

/* The control channel woke up: the proxy closed it (the gate closed) or sent what it never sends. */
static void control(struct pair *p) {
  char c;
  if (!p->in_use || p->stage != TUNNEL) return;
  if (recv(p->ctl, &c, 1, MSG_PEEK | MSG_DONTWAIT) < 0 && (errno == EAGAIN || errno == EINTR)) return;
  close_pair(p, 1);
}

/* Takes the connector's answers, each to the connection that asked (a late one to nobody). */
static void take_answers(void) {
  for (;;) {
    struct dial_answer said;
    struct iovec part;
    struct msghdr message;
    union {
      struct cmsghdr header;
      char space[CMSG_SPACE(sizeof(int))];
    } space;
    struct cmsghdr *c;
    struct pair *p;
    int fd = -1, i;
    ssize_t n;
    part.iov_base = &said;
    part.iov_len = sizeof said;
    memset(&message, 0, sizeof message);
    message.msg_iov = &part;
    message.msg_iovlen = 1;
    message.msg_control = space.space;
    message.msg_controllen = sizeof space.space;
    n = recvmsg(bridge.connector, &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) {
      /* The connector is gone: no handoff can be served any more; those waiting fail. */
      close(bridge.connector);
      bridge.connector = -1;
      for (i = 0; i < MAX_PAIRS; i++) {
        p = &bridge.pairs[i];
        if (!p->in_use || p->stage != HANDED || !p->handoff->asking) continue;
        p->handoff->asking = 0;
        p->handoff->error = EPIPE;
        p->handoff->failed = 1;
        pump(p);
      }
      return;
    }
    for (c = CMSG_FIRSTHDR(&message); c != NULL; c = CMSG_NXTHDR(&message, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) memcpy(&fd, CMSG_DATA(c), sizeof fd);
    p = n == (ssize_t)sizeof said && said.pair < MAX_PAIRS ? &bridge.pairs[said.pair] : NULL;
    if (p == NULL || !p->in_use || p->generation != said.generation || p->stage != HANDED || !p->handoff->asking) {
      if (fd >= 0) close(fd);
      continue;
    }
    p->handoff->asking = 0;
    if (said.error == 0 && fd >= 0) {
      no_delay(fd);
      p->handoff->target = fd;
    } else {
      if (fd >= 0) close(fd);
      /* Made, but this bridge is out of descriptors to hold it (MSG_CTRUNC). */
      p->handoff->error = said.error != 0 ? said.error : EMFILE;
      ask(p);
    }
    pump(p);
  }
}

/* ---- the bridge: connections */

/* Whether the connect of fd[1] finished: 1 connected, 0 not yet, -1 failed. */
static int connected(struct pair *p) {
  int err = 0;
  socklen_t size = sizeof err;
  struct sockaddr_storage peer;
  socklen_t peer_size = sizeof peer;
  if (getsockopt(p->fd[1], SOL_SOCKET, SO_ERROR, &err, &size) != 0 || err != 0) return -1;
  if (getpeername(p->fd[1], (struct sockaddr *)&peer, &peer_size) == 0) return 1;
  return errno == ENOTCONN ? 0 : -1;
}

/* The pipes the flows go through, once both sockets are connected; -1 when they cannot be made. */
static int start_flows(struct pair *p) {
  int i;
  for (i = 0; i < 2; i++) {
    struct flow *f = &p->flow[i];
    int capacity;
    if (pipe2(f->pipe, O_NONBLOCK | O_CLOEXEC) != 0) return -1;
    capacity = fcntl(f->pipe[0], NETNS_F_GETPIPE_SZ);
    f->capacity = capacity > 0 ? (size_t)capacity : 4096;
  }
  p->connecting = 0;
  return 0;
}

/* Runs a connection as far as it can go now, then closes it or waits for what it needs next. */
static void pump(struct pair *p) {
  int round, i;
  if (!p->in_use) return;
  if (p->connecting) {
    int state = connected(p);
    if (state == 0) return;
    if (state < 0 || start_flows(p) != 0) {
      close_pair(p, 1);
      return;
    }
  }
  if (advance(p) != 0) {
    close_pair(p, 1);
    return;
  }
  for (round = 0; round < ROUNDS; round++) {
    int moved = 0;
    if (p->stage == TUNNEL && p->handoff != NULL && write_rest(p) != 0) {
      close_pair(p, 1);
      return;
    }
    for (i = 0; i < 2; i++) {
      int r = move(p, i);
      if (r < 0) {
        close_pair(p, 1);
        return;
      }
      moved |= r;
    }
    if (p->flow[0].shut && p->flow[1].shut) {
      close_pair(p, 0);
      return;
    }
    if (!moved) break;
  }
  if (p->stage == TUNNEL && tell_soon(p, now_ms()) != 0) {
    close_pair(p, 1);
    return;
  }
  if (update_interest(p) != 0) close_pair(p, 1);
}

/* The bridge's own socket for a connection accepted on `l`, connecting; -1 when it cannot. */
static int connect_onward(const struct listener *l, int *connecting) {
  int fd;
  *connecting = 0;
  if (l->kind == TO_PROXY) {
    struct sockaddr_un at;
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    memset(&at, 0, sizeof at);
    at.sun_family = AF_UNIX;
    memcpy(at.sun_path, bridge.proxy, strlen(bridge.proxy) + 1);
    /* A unix connect does not wait: it is made, or refused (EAGAIN is a full backlog: refused too).
     * The hello goes first, into a socket that holds nothing yet. */
    if (connect(fd, (struct sockaddr *)&at, sizeof at) == 0 &&
        (!bridge.handoff || send(fd, HELLO, HELLO_SIZE, MSG_DONTWAIT | MSG_NOSIGNAL) == HELLO_SIZE))
      return fd;
  } else {
    struct sockaddr_in at;
    fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    no_delay(fd);
    memset(&at, 0, sizeof at);
    at.sin_family = AF_INET;
    at.sin_port = htons((uint16_t)l->inner_port);
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&at, sizeof at) == 0) return fd;
    if (errno == EINPROGRESS) {
      *connecting = 1;
      return fd;
    }
  }
  close(fd);
  return -1;
}

static void open_pair(const struct listener *l, int accepted) {
  struct pair *p = bridge.free;
  int connecting, i, onward;
  uint32_t generation;
  /* Over the limit: accepted and reset, so the client is told now rather than left in the backlog. */
  if (p == NULL) {
    reset(accepted);
    return;
  }
  no_delay(accepted);
  onward = connect_onward(l, &connecting);
  if (onward < 0) {
    reset(accepted);
    return;
  }
  bridge.free = p->next;
  generation = p->generation;
  memset(p, 0, sizeof *p);
  p->generation = generation + 1;
  p->in_use = 1;
  p->fd[0] = accepted;
  p->fd[1] = onward;
  p->ctl = -1;
  p->stage = l->kind == TO_PROXY && bridge.handoff ? WATCHED : CARRIED;
  for (i = 0; i < 3; i++) {
    p->side[i].kind = SIDE;
    p->side[i].pair = p;
  }
  for (i = 0; i < 2; i++) p->flow[i].pipe[0] = p->flow[i].pipe[1] = -1;
  p->connecting = 1;
  if (!connecting && start_flows(p) != 0) {
    close_pair(p, 1);
    return;
  }
  if (connecting) {
    if (update_interest(p) != 0) close_pair(p, 1);
    return;
  }
  pump(p);
}

/* Accepts what waits on `l` (a bounded number per wake-up; the listener is level-triggered). */
static void accept_on(const struct listener *l) {
  int i;
  for (i = 0; i < 16; i++) {
    int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      open_pair(l, fd);
      continue;
    }
    if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) continue;
    if ((errno == EMFILE || errno == ENFILE) && bridge.reserve >= 0) {
      /* Out of descriptors: the spare one makes room to accept and reset, so the loop does not
       * wake up for the same waiting connection forever. */
      close(bridge.reserve);
      fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
      if (fd >= 0) reset(fd);
      bridge.reserve = open("/dev/null", O_RDONLY | O_CLOEXEC);
      continue;
    }
    return; /* EAGAIN: nothing more waits */
  }
}

/* As many connections as the descriptor limit allows: six descriptors each (two sockets, two
 * pipes), seven with --handoff (a tunnel holds the control channel too). */
static int connection_limit(void) {
  struct rlimit limit;
  long n;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 16;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max; /* the bridge's own: FILE keeps the limit it was given */
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) getrlimit(RLIMIT_NOFILE, &limit);
  }
  n = limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > INT_MAX ? INT_MAX : (long)limit.rlim_cur;
  n = (n - SPARE_FDS) / (bridge.handoff ? 7 : 6);
  return n > MAX_PAIRS ? MAX_PAIRS : n < 1 ? 1 : (int)n;
}

static volatile sig_atomic_t launch_ended;

static void on_launch_end(int signal) {
  (void)signal;
  launch_ended = 1;
}

/* The launch ended: each tunnel tells the proxy its bytes (what the tool got before it went), then
 * the bridge goes too. */
static void end_bridge(void) __attribute__((noreturn));
static void end_bridge(void) {
  int i;
  for (i = 0; i < MAX_PAIRS; i++)
    if (bridge.pairs[i].in_use && bridge.pairs[i].stage == TUNNEL) close_pair(&bridge.pairs[i], 1);
  _exit(0);
}

static void run_bridge(pid_t parent) __attribute__((noreturn));
static void run_bridge(pid_t parent) {
  int keep[MAX_PUBLISH + 4], kept = 0, i, limit;
  struct epoll_event events[64];
  struct sigaction ending;
  sigset_t blocked, waiting;
  /* The parent's death is SIGTERM here (SIGKILL for the connector, which has nothing to tell),
   * taken only while epoll waits: nothing is cut off half way. */
  memset(&ending, 0, sizeof ending);
  ending.sa_handler = on_launch_end;
  sigemptyset(&ending.sa_mask);
  sigaction(SIGTERM, &ending, NULL);
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGTERM);
  sigprocmask(SIG_BLOCK, &blocked, &waiting);
  sigdelset(&waiting, SIGTERM);
  keep[kept++] = bridge.epoll;
  for (i = 0; i < bridge.listening; i++) keep[kept++] = bridge.listeners[i].fd;
  if (bridge.connector >= 0) keep[kept++] = bridge.connector;
  detach(parent, SIGTERM, keep, kept);
  bridge.reserve = open("/dev/null", O_RDONLY | O_CLOEXEC);
  limit = connection_limit();
  for (i = limit - 1; i >= 0; i--) {
    bridge.pairs[i].next = bridge.free;
    bridge.free = &bridge.pairs[i];
  }
  for (;;) {
    long long now = now_ms();
    int n = epoll_pwait(bridge.epoll, events, 64, bridge.tell_at == 0 ? -1 : bridge.tell_at > now ? (int)(bridge.tell_at - now) : 0, &waiting);
    if (launch_ended) end_bridge();
    if (n < 0) {
      if (errno == EINTR) continue;
      _exit(EXIT_SETUP);
    }
    for (i = 0; i < n; i++) {
      enum kind *kind = events[i].data.ptr;
      if (*kind == SIDE) {
        struct side *side = (struct side *)kind;
        if (side == &side->pair->side[2]) control(side->pair);
        else pump(side->pair);
      } else if (*kind == CONNECTOR) {
        if (bridge.connector >= 0) take_answers();
      } else {
        accept_on((struct listener *)kind);
      }
    }
    now = now_ms();
    if (bridge.tell_at != 0 && now >= bridge.tell_at) {
      bridge.tell_at = 0;
      for (i = 0; i < MAX_PAIRS; i++) {
        struct pair *p = &bridge.pairs[i];
        if (p->in_use && tell_soon(p, now) != 0) close_pair(p, 1);
      }
    }
    while (bridge.closed != NULL) {
      struct pair *p = bridge.closed;
      bridge.closed = p->next;
      p->next = bridge.free;
      bridge.free = p;
    }
  }
}

/* ---- main */

static void add_listener(enum kind kind, int fd, int inner_port) {
  struct listener *l = &bridge.listeners[bridge.listening++];
  struct epoll_event e;
  l->kind = kind;
  l->fd = fd;
  l->inner_port = inner_port;
  e.events = EPOLLIN;
  e.data.ptr = l;
  if (epoll_ctl(bridge.epoll, EPOLL_CTL_ADD, fd, &e) != 0) fail_errno("epoll_ctl");
}

int main(int argc, char **argv) {
  static struct plan plan;
  int published[MAX_PUBLISH], i, fd;
  pid_t self, bridge_pid;
  extern char **environ;

  if (argc == 2 && strcmp(argv[1], "--version") == 0) {
    printf(PROG " " VERSION "\n");
    return fflush(stdout) == 0 ? 0 : EXIT_SETUP;
  }
  parse(argc, argv, &plan);
  bridge.proxy = plan.proxy;
  bridge.handoff = plan.handoff;
  bridge.connector = -1;
  self = getpid();

  /* On the host, before the namespace: a socket stays in the namespace it was made in. */
  for (i = 0; i < plan.publishes; i++) {
    published[i] = listen_on(plan.publish[i].host_port, 0);
    if (published[i] < 0) {
      char what[96];
      snprintf(what, sizeof what, "cannot publish port %d on the host's 127.0.0.1", plan.publish[i].host_port);
      fail_errno(what);
    }
  }
  /* So does a process: the connector makes its connections from here. */
  if (plan.handoff) {
    int ends[2];
    pid_t connector_pid;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) != 0) fail_errno("socketpair for the connector");
    connector_pid = fork();
    if (connector_pid < 0) fail_errno("fork the connector");
    if (connector_pid == 0) run_connector(ends[1], self);
    close(ends[1]);
    bridge.connector = ends[0];
  }

  enter_namespace();
  loopback_up();

  bridge.epoll = epoll_create1(EPOLL_CLOEXEC);
  if (bridge.epoll < 0) fail_errno("epoll_create1");
  fd = listen_on(plan.port, 0);
  if (fd < 0) {
    char what[96];
    snprintf(what, sizeof what, "listen on 127.0.0.1:%d in the namespace", plan.port);
    fail_errno(what);
  }
  add_listener(TO_PROXY, fd, 0);
  /* IPv6 may be off in this kernel or this namespace: the IPv4 address is the one announced. */
  fd = listen_on(plan.port, 1);
  if (fd >= 0) add_listener(TO_PROXY, fd, 0);
  for (i = 0; i < plan.publishes; i++) add_listener(TO_INNER, published[i], plan.publish[i].inner_port);
  if (bridge.connector >= 0) {
    struct epoll_event e;
    e.events = EPOLLIN;
    e.data.ptr = &connector_kind;
    if (epoll_ctl(bridge.epoll, EPOLL_CTL_ADD, bridge.connector, &e) != 0) fail_errno("epoll_ctl");
  }

  bridge_pid = fork();
  if (bridge_pid < 0) fail_errno("fork the bridge");
  if (bridge_pid == 0) run_bridge(self);

  /* FILE gets what the caller passed and nothing of this program's (close-on-exec all the same). */
  for (i = 0; i < bridge.listening; i++) close(bridge.listeners[i].fd);
  close(bridge.epoll);
  if (bridge.connector >= 0) close(bridge.connector);
  execve(plan.command[0], plan.command, environ);
  {
    int err = errno;
    fprintf(stderr, PROG ": exec %s: %s\n", plan.command[0], strerror(err));
    return err == ENOENT ? 127 : 126;
  }
}
