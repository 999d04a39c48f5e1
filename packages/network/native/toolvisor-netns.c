/*
 * toolvisor-netns: start a launch inside a fresh network namespace that holds only `lo`, where the
 * one way out is a bridge from 127.0.0.1:PORT (inside) to toolvisor's proxy, a unix socket on the
 * host (issue 32). Outermost in the launch chain, run as toolvisor's own user (root or not):
 *
 *   toolvisor-netns --proxy SOCKETPATH --port PORT [--publish HOSTPORT:INNERPORT]... -- FILE [ARGS...]
 *   toolvisor-netns --version     prints "toolvisor-netns 1"
 *
 * SOCKETPATH must be an absolute path to a unix socket that exists when the launch starts (checked:
 * a launch whose proxy is not there is refused rather than started without a way out); FILE must
 * be absolute (or /proc/self/fd/N of a descriptor the caller passed).
 *
 * 1. For each --publish: a TCP listener on the host's 127.0.0.1:HOSTPORT, made first, while this
 *    process is still in the host's network namespace (a socket keeps the namespace it was made in).
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
 * is the direction's whole buffer: memory never grows with the bytes moved), a half-close is passed
 * on (shutdown(SHUT_WR) once one side's end has been copied), and a connect that fails resets the
 * accepted connection at once. At most 512 connections are open (fewer when the descriptor limit
 * is low); one more is accepted and reset.
 *
 * The bridge dies with the launch: PR_SET_PDEATHSIG fires when the process that execs FILE (its
 * parent) ends, and it is in the launch's cgroup anyway. It leaves the launch's process group, so
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
               " --proxy SOCKETPATH --port PORT [--publish HOSTPORT:INNERPORT]... -- FILE [ARGS...])\n",
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

/* ---- the bridge: what epoll hands back */

enum kind { TO_PROXY, TO_INNER, SIDE };

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
};

/* A connection: fd[0] accepted, fd[1] made by the bridge; flow[i] copies fd[i] to fd[1 - i]. */
struct pair {
  struct side side[2];
  int fd[2];
  unsigned events[2]; /* what each socket is registered for in epoll; 0: not registered */
  struct flow flow[2];
  int connecting, in_use;
  struct pair *next; /* on the free list, or on the list of those closed this round */
};

static struct {
  int epoll, reserve;
  struct listener listeners[MAX_PUBLISH + 2];
  int listening;
  const char *proxy;
  struct pair pairs[MAX_PAIRS];
  struct pair *free, *closed;
} bridge;

/* Closes `fd` so that its peer sees a reset: a connection this bridge cannot carry. */
static void reset(int fd) {
  struct linger now = { 1, 0 };
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &now, sizeof now); /* not a TCP socket: a plain close */
  close(fd);
}

/* Closing removes the sockets from epoll. The slot is reused only after this round's events, some
 * of which may still point at it. */
static void close_pair(struct pair *p, int broken) {
  int i;
  for (i = 0; i < 2; i++) {
    if (broken) reset(p->fd[i]);
    else close(p->fd[i]);
    if (p->flow[i].pipe[0] >= 0) close(p->flow[i].pipe[0]), close(p->flow[i].pipe[1]);
  }
  p->in_use = 0;
  p->next = bridge.closed;
  bridge.closed = p;
}

/* Registers socket `i` of `p` for `events` in epoll (none: out of it), when that changed. */
static int want(struct pair *p, int i, unsigned events) {
  struct epoll_event e;
  int op;
  if (p->events[i] == events) return 0;
  op = p->events[i] == 0 ? EPOLL_CTL_ADD : events == 0 ? EPOLL_CTL_DEL : EPOLL_CTL_MOD;
  e.events = events;
  e.data.ptr = &p->side[i];
  if (epoll_ctl(bridge.epoll, op, p->fd[i], &e) != 0) return -1;
  p->events[i] = events;
  return 0;
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
    unsigned events = (!out->ended && !out->full ? EPOLLIN : 0) | (in->held > 0 ? EPOLLOUT : 0);
    if (want(p, i, events) != 0) return -1;
  }
  return 0;
}

/* Moves what it can of flow `i`: 1 when something moved, 0 when nothing could, -1 on an error. */
static int move(struct pair *p, int i) {
  struct flow *f = &p->flow[i];
  int from = p->fd[i], to = p->fd[1 - i], moved = 0;
  ssize_t n;
  if (!f->ended && !f->full) {
    n = splice(from, NULL, f->pipe[1], NULL, f->capacity - f->held, NETNS_SPLICE_F_MOVE | NETNS_SPLICE_F_NONBLOCK);
    if (n > 0) {
      f->held += (size_t)n;
      f->full = f->held >= f->capacity;
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
  /* Passed on at once: the socket is waited on for writing only while it is full. */
  if (f->held > 0) {
    n = splice(f->pipe[0], NULL, to, NULL, f->held, NETNS_SPLICE_F_MOVE | NETNS_SPLICE_F_NONBLOCK);
    if (n > 0) {
      f->held -= (size_t)n;
      f->full = 0;
      moved = 1;
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      return -1;
    }
  }
  if (f->ended && f->held == 0 && !f->shut) {
    shutdown(to, SHUT_WR); /* fails only when `to` is gone, which its own flow finds */
    f->shut = 1;
    moved = 1;
  }
  return moved;
}

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
  for (round = 0; round < ROUNDS; round++) {
    int moved = 0;
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
  if (update_interest(p) != 0) close_pair(p, 1);
}

static void no_delay(int fd) {
  int on = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on); /* latency only: a failure changes nothing else */
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
    /* A unix connect does not wait: it is made, or refused (EAGAIN is a full backlog: refused too). */
    if (connect(fd, (struct sockaddr *)&at, sizeof at) == 0) return fd;
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
  memset(p, 0, sizeof *p);
  p->in_use = 1;
  p->fd[0] = accepted;
  p->fd[1] = onward;
  for (i = 0; i < 2; i++) {
    p->side[i].kind = SIDE;
    p->side[i].pair = p;
    p->flow[i].pipe[0] = p->flow[i].pipe[1] = -1;
  }
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

/* As many connections as the descriptor limit allows (six descriptors each: two sockets, two pipes). */
static int connection_limit(void) {
  struct rlimit limit;
  long n;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 16;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max; /* the bridge's own: FILE keeps the limit it was given */
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) getrlimit(RLIMIT_NOFILE, &limit);
  }
  n = limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > INT_MAX ? INT_MAX : (long)limit.rlim_cur;
  n = (n - SPARE_FDS) / 6;
  return n > MAX_PAIRS ? MAX_PAIRS : n < 1 ? 1 : (int)n;
}

static void run_bridge(pid_t parent) __attribute__((noreturn));
static void run_bridge(pid_t parent) {
  int keep[MAX_PUBLISH + 3], kept = 0, i, limit, null;
  struct epoll_event events[64];
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) _exit(EXIT_SETUP);
  if (getppid() != parent) _exit(0); /* the launch ended before PR_SET_PDEATHSIG was set */
  setpgid(0, 0);
  signal(SIGPIPE, SIG_IGN); /* a write to a connection whose peer left is EPIPE, handled */
  keep[kept++] = bridge.epoll;
  for (i = 0; i < bridge.listening; i++) keep[kept++] = bridge.listeners[i].fd;
  qsort(keep, (size_t)kept, sizeof keep[0], ascending);
  keep_only(keep, kept);
  /* 0, 1 and 2 on /dev/null: nothing of the caller's (a pipe toolvisor waits on) is held here. */
  null = open("/dev/null", O_RDWR);
  if (null >= 0) {
    while (null >= 0 && null < 2) null = dup(null);
    if (null > 2) close(null);
  }
  bridge.reserve = open("/dev/null", O_RDONLY | O_CLOEXEC);
  limit = connection_limit();
  for (i = limit - 1; i >= 0; i--) {
    bridge.pairs[i].next = bridge.free;
    bridge.free = &bridge.pairs[i];
  }
  for (;;) {
    int n = epoll_wait(bridge.epoll, events, 64, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      _exit(EXIT_SETUP);
    }
    for (i = 0; i < n; i++) {
      enum kind *kind = events[i].data.ptr;
      if (*kind == SIDE) pump(((struct side *)kind)->pair);
      else accept_on((struct listener *)kind);
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

  /* On the host, before the namespace: a socket stays in the namespace it was made in. */
  for (i = 0; i < plan.publishes; i++) {
    published[i] = listen_on(plan.publish[i].host_port, 0);
    if (published[i] < 0) {
      char what[96];
      snprintf(what, sizeof what, "cannot publish port %d on the host's 127.0.0.1", plan.publish[i].host_port);
      fail_errno(what);
    }
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

  self = getpid();
  bridge_pid = fork();
  if (bridge_pid < 0) fail_errno("fork the bridge");
  if (bridge_pid == 0) run_bridge(self);

  /* FILE gets what the caller passed and nothing of this program's (close-on-exec all the same). */
  for (i = 0; i < bridge.listening; i++) close(bridge.listeners[i].fd);
  close(bridge.epoll);
  execve(plan.command[0], plan.command, environ);
  {
    int err = errno;
    fprintf(stderr, PROG ": exec %s: %s\n", plan.command[0], strerror(err));
    return err == ENOENT ? 127 : 126;
  }
}
