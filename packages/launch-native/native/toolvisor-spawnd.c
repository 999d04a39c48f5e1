/*
 * toolvisor-spawnd: the fork server. The runtime starts it once (a Node child with an IPC
 * channel), while it is small, and every later launch is forked from it instead of from the
 * runtime: a fork copies the forking process's page tables, about 4 ms per 100 MB resident on a
 * VM, so a runtime inside a host of a few hundred MB paid more for the fork than for the tool.
 * This process stays a few hundred KB resident.
 *
 * It speaks Node's IPC protocol (`NODE_CHANNEL_FD`, serialization "json": one JSON value per
 * line), the only way Node can receive descriptors:
 *
 *   in:  "<base64 of a request>"            a launch (see read_request for its fields)
 *        "k ID"                              the runtime gave up on launch ID (its deadline):
 *                                            killed if still unanswered, and never answered
 *        "w <base64 of CGROUP_DIR CGROUPS MAKE WRITES>"
 *                                            the cgroups of the launch that comes next made
 *                                            (MAKE: directories; WRITES: FILE VALUE OPTIONAL
 *                                            triples, its limits) and a warm child for it in
 *                                            them (see struct warm); answered "v PID"
 *        "r <base64 of DIRS>"                these cgroups removed (a launch's, once it ended);
 *                                            answered "r FAILED", how many are still there
 *        "z PID COLUMNS ROWS"                the terminal of launch PID resized (SIGWINCH)
 *        {"cmd":"NODE_HANDLE_ACK"} ...       Node's own acknowledgements: ignored
 *   out: "s ID PID N"                        launch ID started (its exec succeeded) as PID; N of
 *                                            its descriptors follow (a `d` extra whose bytes were
 *                                            all given is not passed: nothing is left to write;
 *                                            a terminal passes 0 and 1: one relay socket twice)
 *        "e ID ERRNO WHERE"                  launch ID failed at WHERE (socketpair, open:I,
 *                                            type:I:NAME, pin:I, fork, chdir, cgroup, rlimit,
 *                                            terminal, exec, request, busy:MAX); nothing runs.
 *                                            ID 0: a request with no readable id
 *        {"cmd":"NODE_HANDLE","type":"net.Native","msg":"f ID I N"} + one descriptor
 *                                            the runtime's end of descriptor I of launch ID,
 *                                            N bytes of its payload already written
 *        "x PID CODE SIGNAL"                 PID ended (CODE -1 when killed by SIGNAL)
 *        "v PID"                             the warm child a "w" made (0: none was made; "v 0
 *                                            ERRNO mkdir:I" or "write:I": its cgroups could not
 *                                            be made, and nothing of them is left)
 *
 * A launch: descriptors 0, 1, 2 are pipes (pipe(2), as a shell gives them: `cat /dev/stdin`,
 * `> /dev/stderr` and `/proc/self/fd/N` open them again, which a socket refuses with ENXIO; the
 * runtime's ends arrive as Node `Pipe` handles), or, when the request asks for a terminal of a
 * size, the slave of a new pseudo-terminal on all three, which becomes the controlling terminal of
 * the child's session: its master stays here, relayed to a socket pair the runtime writes on 0 and
 * reads on 1 (see struct terminal). Every `p`, `d` and `x` extra is a socket pair
 * (what Node's own spawn gives a child; `d` and `x` come with bytes to give the child first), an
 * `f` extra is
 * a path referred to here by an O_PATH descriptor (see open_grant: nothing is opened, no link is
 * followed), refused when it is not a directory or a regular file, or, when a pin is given, no
 * longer that device:inode. The child gets its own session (setsid), default
 * signal dispositions and an empty signal mask, its working directory, exactly the descriptors
 * of the launch (every other one is close-on-exec) and exactly the environment of the request.
 * "s" is sent once the exec succeeded (a close-on-exec pipe tells), as Node's spawn returns; the
 * server does not wait for it: every launch in flight has its pipe in the poll loop (see struct
 * flight), so answers come in the order the execs report, not the order of the requests, and a
 * child stuck before its exec holds nothing but its own launch. Every path this process opens
 * for a launch is opened without waiting (open_grant).
 *
 * It ignores SIGINT, SIGTERM, SIGHUP and SIGQUIT (a Ctrl-C in the runtime's terminal is the
 * runtime's to handle: it stops its tools with their declared cancel) and exits when the channel
 * closes, that is when the runtime ends, however it ends; the runtime's watchdog then kills what
 * its run log still lists. Every descriptor of its own is close-on-exec: no tool inherits the
 * channel.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/close_range.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROG "toolvisor-spawnd"
/* A request holds a launch's arguments and environment (the tool's own travels inside it). */
#define MAX_LINE (64 * 1024 * 1024)
#define MAX_FDS 64
#define MAX_STRINGS (1024 * 1024)
#define MAX_LIMITS 16

static int channel = -1;

static void die(const char *what) {
  fprintf(stderr, PROG ": %s: %s\n", what, strerror(errno));
  exit(125);
}

/* ---- the channel ------------------------------------------------------------------------- */

static void write_all(const char *data, size_t length, int fd_to_pass) {
  int first = 1;
  while (length > 0) {
    struct iovec io = {(void *)data, length};
    struct msghdr message = {0};
    union {
      char buffer[CMSG_SPACE(sizeof(int))];
      struct cmsghdr align;
    } control;
    message.msg_iov = &io;
    message.msg_iovlen = 1;
    if (first && fd_to_pass >= 0) {
      memset(&control, 0, sizeof control);
      message.msg_control = control.buffer;
      message.msg_controllen = sizeof control.buffer;
      struct cmsghdr *header = CMSG_FIRSTHDR(&message);
      header->cmsg_level = SOL_SOCKET;
      header->cmsg_type = SCM_RIGHTS;
      header->cmsg_len = CMSG_LEN(sizeof(int));
      memcpy(CMSG_DATA(header), &fd_to_pass, sizeof(int));
    }
    ssize_t sent = sendmsg(channel, &message, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      /* The runtime is gone: nothing is left to serve. */
      exit(0);
    }
    first = 0;
    data += sent;
    length -= (size_t)sent;
  }
}

static void say(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *format, ...) {
  char text[160];
  va_list args;
  va_start(args, format);
  int n = vsnprintf(text + 1, sizeof text - 3, format, args);
  va_end(args);
  /* vsnprintf returns the length it would have written: clamped to what it did write, the quote
   * and the newline stay inside `text` (no message comes near the bound today). */
  if (n < 0) n = 0;
  if ((size_t)n > sizeof text - 4) n = (int)(sizeof text - 4);
  text[0] = '"';
  text[n + 1] = '"';
  text[n + 2] = '\n';
  write_all(text, (size_t)n + 3, -1);
}

static void pass_fd(unsigned long id, int index, size_t written, int fd) {
  char text[160];
  int n = snprintf(text, sizeof text,
                   "{\"cmd\":\"NODE_HANDLE\",\"type\":\"net.Native\",\"msg\":\"f %lu %d %zu\"}\n", id, index,
                   written);
  write_all(text, (size_t)n, fd);
}

/* ---- requests ---------------------------------------------------------------------------- */

/* Decodes base64 in place; returns the decoded length, or -1 on a character that is not base64. */
static long unbase64(char *text, size_t length) {
  static signed char value[256];
  if (value['B'] == 0) {
    memset(value, -1, sizeof value);
    const char *alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; i++) value[(unsigned char)alphabet[i]] = (signed char)i;
  }
  size_t out = 0;
  uint32_t bits = 0;
  int count = 0;
  for (size_t i = 0; i < length; i++) {
    unsigned char c = (unsigned char)text[i];
    if (c == '=') break;
    if (value[c] < 0) return -1;
    bits = (bits << 6) | (uint32_t)value[c];
    if (++count == 4) {
      text[out++] = (char)(bits >> 16);
      text[out++] = (char)(bits >> 8);
      text[out++] = (char)bits;
      bits = 0;
      count = 0;
    }
  }
  if (count == 3) {
    text[out++] = (char)(bits >> 10);
    text[out++] = (char)(bits >> 2);
  } else if (count == 2) {
    text[out++] = (char)(bits >> 4);
  } else if (count == 1) {
    return -1;
  }
  return (long)out;
}

struct request {
  unsigned long id;
  char *cwd, *file;
  char **argv, **envp;
  int extras;
  char kind[MAX_FDS];
  char *path[MAX_FDS], *pin[MAX_FDS];
  /* What a `d` (data) or `x` (exchange) extra is to be given first. */
  char *payload[MAX_FDS];
  size_t payload_length[MAX_FDS];
  /* The v2 cgroup the child is born in (clone3 CLONE_INTO_CGROUP), "" for none; then the
   * `cgroup.procs` files it joins before anything else (the v1 hierarchies of a hybrid host). */
  char *cgroup_dir;
  char **cgroups;
  /* The resource limits the child sets before its exec. */
  int limits;
  int limit_resource[MAX_LIMITS];
  struct rlimit limit_value[MAX_LIMITS];
  /* A terminal of this size (columns, rows) instead of pipes on 0, 1 and 2; 0 0 for none. */
  unsigned short columns, rows;
};

struct cursor {
  char *at, *end;
};

/* The next NUL-terminated string, or NULL when the request ends first. */
static char *next(struct cursor *c) {
  if (c->at >= c->end) return NULL;
  char *nul = memchr(c->at, '\0', (size_t)(c->end - c->at));
  if (nul == NULL) return NULL;
  char *s = c->at;
  c->at = nul + 1;
  return s;
}

static int number(struct cursor *c, long max, long *out) {
  char *s = next(c), *end;
  if (s == NULL || *s == '\0') return -1;
  errno = 0;
  long n = strtol(s, &end, 10);
  if (errno != 0 || *end != '\0' || n < 0 || n > max) return -1;
  *out = n;
  return 0;
}

/* A list of N strings, NULL-terminated (allocated; freed by the caller). */
static char **strings(struct cursor *c) {
  long n;
  if (number(c, MAX_STRINGS, &n) != 0) return NULL;
  char **list = calloc((size_t)n + 1, sizeof *list);
  if (list == NULL) return NULL;
  for (long i = 0; i < n; i++) {
    if ((list[i] = next(c)) == NULL) {
      free(list);
      return NULL;
    }
  }
  return list;
}

/* A limit's value: a decimal number, or "inf" (RLIM_INFINITY). */
static int limit_number(struct cursor *c, rlim_t *out) {
  char *s = next(c), *end;
  if (s == NULL || *s == '\0') return -1;
  if (strcmp(s, "inf") == 0) {
    *out = RLIM_INFINITY;
    return 0;
  }
  errno = 0;
  unsigned long long n = strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0' || s[0] == '-') return -1;
  *out = (rlim_t)n;
  return 0;
}

/*
 * ID \0 CWD \0 FILE \0 ARGC \0 ARG... \0 ENVC \0 ENV... \0 EXTRAS \0, then for each extra:
 * "p" \0 (a socket pair), "d" or "x" \0 LENGTH \0 and LENGTH bytes (a socket pair given those
 * bytes first), or "f" \0 PATH \0 PIN \0 (PIN empty: not pinned); then CGROUP_DIR \0 (a v2
 * cgroup to be born in, or empty), CGROUPS \0 PATH... \0 (cgroup.procs files to join) and LIMITS \0, then for each RESOURCE \0 SOFT \0 HARD \0
 * (RLIMIT_* numbers; a value is a number or "inf"). ARGV includes argv[0].
 */
static int read_request(char *data, size_t length, struct request *r) {
  struct cursor c = {data, data + length};
  long n;
  memset(r, 0, sizeof *r);
  if (number(&c, 0x7fffffffL, &n) != 0) return -1;
  r->id = (unsigned long)n;
  if ((r->cwd = next(&c)) == NULL || (r->file = next(&c)) == NULL) return -1;
  if ((r->argv = strings(&c)) == NULL) return -1;
  if ((r->envp = strings(&c)) == NULL) return -1;
  if (number(&c, MAX_FDS - 3, &n) != 0) return -1;
  r->extras = (int)n;
  for (int i = 0; i < r->extras; i++) {
    char *kind = next(&c);
    if (kind == NULL) return -1;
    r->kind[i] = kind[0];
    if (kind[0] == 'f') {
      if ((r->path[i] = next(&c)) == NULL || (r->pin[i] = next(&c)) == NULL) return -1;
    } else if (kind[0] == 'd' || kind[0] == 'x') {
      if (number(&c, MAX_LINE, &n) != 0 || n > c.end - c.at) return -1;
      r->payload[i] = c.at;
      r->payload_length[i] = (size_t)n;
      c.at += n;
    } else if (kind[0] != 'p') {
      return -1;
    }
  }
  if ((r->cgroup_dir = next(&c)) == NULL) return -1;
  if ((r->cgroups = strings(&c)) == NULL) return -1;
  if (number(&c, MAX_LIMITS, &n) != 0) return -1;
  r->limits = (int)n;
  for (int i = 0; i < r->limits; i++) {
    long resource;
    if (number(&c, RLIM_NLIMITS - 1, &resource) != 0) return -1;
    r->limit_resource[i] = (int)resource;
    if (limit_number(&c, &r->limit_value[i].rlim_cur) != 0) return -1;
    if (limit_number(&c, &r->limit_value[i].rlim_max) != 0) return -1;
  }
  long columns, rows;
  if (number(&c, 0xffff, &columns) != 0 || number(&c, 0xffff, &rows) != 0) return -1;
  if ((columns == 0) != (rows == 0)) return -1;
  r->columns = (unsigned short)columns;
  r->rows = (unsigned short)rows;
  return c.at == c.end ? 0 : -1;
}

/* ---- a grant ----------------------------------------------------------------------------- */

/* openat2(2) (Linux 5.6), carried here: the C library's headers may predate it. */
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
struct grant_how {
  uint64_t flags, mode, resolve;
};
#define GRANT_RESOLVE_NO_MAGICLINKS 0x02
#define GRANT_RESOLVE_NO_SYMLINKS 0x04

/*
 * A descriptor of `path` that opens nothing, never waits and follows no link. A tool may have
 * replaced a grant since load (whatever lies inside its write grant is its own to change), and
 * this process runs as root for every session: O_PATH does not open the object (no FIFO waits for
 * a writer, no device's open runs, no automount of it is triggered), and RESOLVE_NO_SYMLINKS
 * refuses a symlink on the way (ELOOP); one in the last component comes back as the link itself
 * (O_NOFOLLOW), which its type refuses. The runtime passes realpath'd paths only, so a link there
 * is one planted since load. What the descriptor serves needs no more than O_PATH: bwrap's
 * --bind-fd, Landlock's rules, and an exec through /proc/self/fd/N.
 */
static int open_grant(const char *path) {
  struct grant_how how = {O_PATH | O_NOFOLLOW | O_CLOEXEC, 0,
                          GRANT_RESOLVE_NO_SYMLINKS | GRANT_RESOLVE_NO_MAGICLINKS};
  int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
  /* A kernel before 5.6: a link in the last component is still refused (by its type), one on the
   * way is followed, opening nothing, and the pin refuses what it leads to. */
  if (fd < 0 && errno == ENOSYS) fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  return fd;
}

/* How "e ID 0 type:I:NAME" names what a path turned out to be, when no grant can be that. */
static const char *type_name(mode_t mode) {
  if (S_ISFIFO(mode)) return "fifo";
  if (S_ISCHR(mode)) return "chr";
  if (S_ISBLK(mode)) return "blk";
  if (S_ISSOCK(mode)) return "sock";
  if (S_ISLNK(mode)) return "link";
  return "other";
}

/* ---- terminals ------------------------------------------------------------------------------ */

/*
 * A launch's terminal, relayed: bytes from the runtime's socket go to the master (keystrokes),
 * bytes from the master go to the socket (what the program shows), each through a bounded buffer:
 * a runtime that does not read stops the reading of the master (the program then blocks on its
 * writes, as on a terminal nobody looks at), a program that does not read stops the reading of
 * the socket. The runtime's end closing is a hang-up: the master is closed, and the kernel sends
 * SIGHUP to the terminal's session. The program's end closing (no slave left open: the master
 * reads EIO) ends the relay once what it wrote is passed on and the child was waited for (only
 * then is the master closed: see `serve_terminal`).
 */
#define MAX_TERMINALS 64
#define RELAY_BYTES (16 * 1024)

struct terminal {
  pid_t pid;  /* the launch's child; 0: the slot is free */
  int master; /* -1 once closed (hung up, or the program's end closed) */
  int relay;  /* our end of the socket pair */
  int eof;    /* the master read EIO: no slave is open any more */
  int reaped; /* the launch's child was waited for */
  char in[RELAY_BYTES];
  size_t in_length;
  char out[RELAY_BYTES];
  size_t out_length;
};

static struct terminal terminals[MAX_TERMINALS];

/* Whether one more terminal can be relayed (checked before a terminal launch forks anything). */
static int terminal_slot_free(void) {
  for (int i = 0; i < MAX_TERMINALS; i++) {
    if (terminals[i].pid == 0) return 1;
  }
  return 0;
}

/* Relays `master` to `relay` for the launch whose child is `pid`; 0, or -1 when no slot is free. */
static int relay_terminal(pid_t pid, int master, int relay) {
  for (int i = 0; i < MAX_TERMINALS; i++) {
    struct terminal *t = &terminals[i];
    if (t->pid != 0) continue;
    fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
    fcntl(relay, F_SETFL, fcntl(relay, F_GETFL) | O_NONBLOCK);
    *t = (struct terminal){.pid = pid, .master = master, .relay = relay};
    return 0;
  }
  errno = EAGAIN;
  return -1;
}

static void end_terminal(struct terminal *t) {
  if (t->master >= 0) close(t->master);
  close(t->relay);
  t->pid = 0;
}

/* What to poll of a terminal: its master and its relay (events 0 when not wanted now). */
static void watch_terminal(const struct terminal *t, struct pollfd *master, struct pollfd *relay) {
  /* At its end of file the master is not polled: it would report POLLHUP on every turn. */
  *master = (struct pollfd){t->eof ? -1 : t->master, 0, 0};
  if (t->master >= 0 && t->out_length < RELAY_BYTES) master->events |= POLLIN;
  if (t->master >= 0 && t->in_length > 0) master->events |= POLLOUT;
  *relay = (struct pollfd){t->relay, 0, 0};
  if (t->in_length < RELAY_BYTES && t->master >= 0) relay->events |= POLLIN;
  if (t->out_length > 0) relay->events |= POLLOUT;
}

/* Moves what can move without waiting; ends the terminal when both sides are done. */
static void serve_terminal(struct terminal *t, short master_events, short relay_events) {
  ssize_t n;
  if (relay_events & (POLLIN | POLLHUP | POLLERR) && t->master >= 0 && t->in_length < RELAY_BYTES) {
    n = recv(t->relay, t->in + t->in_length, RELAY_BYTES - t->in_length, MSG_DONTWAIT);
    if (n > 0) t->in_length += (size_t)n;
    else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      /* The runtime hung up: so does the terminal (its session hears SIGHUP). */
      end_terminal(t);
      return;
    }
  }
  if (t->master >= 0 && t->in_length > 0) {
    n = write(t->master, t->in, t->in_length);
    if (n > 0) {
      memmove(t->in, t->in + n, t->in_length - (size_t)n);
      t->in_length -= (size_t)n;
    }
  }
  if (master_events & (POLLIN | POLLHUP | POLLERR) && t->master >= 0 && !t->eof && t->out_length < RELAY_BYTES) {
    n = read(t->master, t->out + t->out_length, RELAY_BYTES - t->out_length);
    if (n > 0) t->out_length += (size_t)n;
    else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      /* EIO: no slave is open any more; what it wrote is all here. The master stays open until
       * the child was waited for: closing it hangs the terminal up, and a program that closed its
       * descriptors on its way out (GNU tools close stdout and stderr at exit) would die of the
       * SIGHUP instead of the exit it was making. */
      t->eof = 1;
    }
  }
  if (t->out_length > 0) {
    n = send(t->relay, t->out, t->out_length, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      memmove(t->out, t->out + n, t->out_length - (size_t)n);
      t->out_length -= (size_t)n;
    } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
      t->out_length = 0; /* the runtime stopped reading: nothing more reaches it */
    }
  }
  (void)relay_events;
  if ((t->master < 0 || (t->eof && t->reaped)) && t->out_length == 0) end_terminal(t);
}

/* The child of a terminal's launch was waited for: the terminal ends once its end of file is relayed. */
static void terminal_reaped(pid_t pid) {
  for (int i = 0; i < MAX_TERMINALS; i++) {
    struct terminal *t = &terminals[i];
    if (t->pid != pid || t->reaped) continue;
    t->reaped = 1;
    if (t->eof && t->out_length == 0) end_terminal(t);
  }
}

/* Resizes the terminal of the launch whose child is `pid` ("z PID COLUMNS ROWS"): SIGWINCH follows. */
static void resize_terminal(pid_t pid, unsigned short columns, unsigned short rows) {
  for (int i = 0; i < MAX_TERMINALS; i++) {
    struct terminal *t = &terminals[i];
    if (t->pid != pid || t->master < 0 || t->reaped) continue;
    struct winsize size = {.ws_row = rows, .ws_col = columns};
    ioctl(t->master, TIOCSWINSZ, &size);
  }
}

/* ---- launches in flight ------------------------------------------------------------------ */

/*
 * A launch forked and not answered yet: its child has not reported its exec (the close-on-exec
 * report pipe is still open: the child is in chdir, in exec, or on its way there). It stays in the
 * poll loop instead of being waited for, so a child stuck on a filesystem that does not answer
 * holds its own launch and nothing else. Each holds its socket ends and a pipe: past the bound a
 * launch is refused at once ("busy"), never queued behind the stuck ones; the runtime's deadline
 * fails those, and the kill it then asks for ("k ID") frees their slots.
 */
#define MAX_IN_FLIGHT 64

struct flight {
  unsigned long id;
  pid_t pid; /* 0: the slot is free */
  int report; /* the read end of the child's report pipe; -1 once read */
  int n;
  int ours[MAX_FDS];
  size_t written[MAX_FDS];
  int abandoned; /* the runtime gave up on it (its deadline): nothing more is told of it */
  int reaped;    /* its child ended before its report was read */
  int status;
};

static struct flight flights[MAX_IN_FLIGHT];
static int in_flight;

static struct flight *flight_of(pid_t pid) {
  for (int i = 0; i < MAX_IN_FLIGHT; i++) {
    if (flights[i].pid == pid) return &flights[i];
  }
  return NULL;
}

static void tell_exit(pid_t pid, int status) {
  if (WIFEXITED(status)) say("x %d %d 0", (int)pid, WEXITSTATUS(status));
  else if (WIFSIGNALED(status)) say("x %d -1 %d", (int)pid, WTERMSIG(status));
}

/* ---- warm children ----------------------------------------------------------------------- */

/*
 * A child forked ahead ("w") into the cgroups of the launch the runtime says comes next, waiting
 * for it: a launch into exactly those cgroups is handed to it (its request and descriptors over
 * the warm child's control socket) instead of being forked then, so it does not wait for the
 * migration into a hybrid host's v1 hierarchies (a write to `cgroup.procs` takes the kernel's
 * threadgroup lock for writing: about 0.1 to 0.25 ms per hierarchy on the machine measured, the
 * largest part of a cgroup per launch). A warm child holds nothing but its control socket and runs
 * nothing of any tool until its launch comes; it ends when that socket closes, with the server
 * (its parent death signal), or when its cgroup is killed, which is how the runtime discards a
 * tree it made for a launch that did not come. A launch into other cgroups leaves it waiting.
 */
#define MAX_WARM 4

struct warm {
  pid_t pid;   /* 0: the slot is free */
  int control; /* -1: given up (killed), waiting to be reaped */
  char *data;  /* the "w" payload (owned): what dir and cgroups point into */
  char *dir;
  char **cgroups;
};

static struct warm warms[MAX_WARM];

/* ---- a launch ---------------------------------------------------------------------------- */

static void close_all(int *fds, int n) {
  for (int i = 0; i < n; i++) {
    if (fds[i] >= 0) close(fds[i]);
    fds[i] = -1;
  }
}

/*
 * Joins the launch's cgroups, "0" being the writer itself: the v2 one only when the clone could
 * not put it there (a kernel before 5.7), then each v1 hierarchy's `cgroup.procs`. 0, or the errno.
 */
static int join_cgroups(const char *cgroup_dir, char **cgroups, int born_inside) {
  if (!born_inside && cgroup_dir[0] != '\0') {
    char procs_path[4096];
    snprintf(procs_path, sizeof procs_path, "%s/cgroup.procs", cgroup_dir);
    int procs = open(procs_path, O_WRONLY | O_CLOEXEC);
    if (procs < 0 || write(procs, "0", 1) != 1) return errno;
    close(procs);
  }
  for (int i = 0; cgroups[i] != NULL; i++) {
    int procs = open(cgroups[i], O_WRONLY | O_CLOEXEC);
    if (procs < 0 || write(procs, "0", 1) != 1) return errno;
    close(procs);
  }
  return 0;
}

/*
 * In the child, after fork: never returns. Failures go to `report` as an int errno, then exit 127.
 * `joined`: -1 when it joins its cgroups here; else a warm child's account of having joined them
 * ahead (0, or the errno it failed with).
 */
static void become(struct request *r, int *theirs, int n, int report, pid_t server, int born_inside,
                   int joined) {
  sigset_t none;
  sigemptyset(&none);
  /* Every disposition back to the default, the C library's reserved real-time ones included (its
   * signal() refuses those, and an ignored one is inherited across exec): the kernel's own call,
   * with an all-zero action (SIG_DFL, no flags, no mask in any architecture's layout). */
  for (int sig = 1; sig < 65; sig++) {
    unsigned long none_action[4] = {0, 0, 0, 0};
    syscall(SYS_rt_sigaction, sig, none_action, NULL, 8);
  }
  sigprocmask(SIG_SETMASK, &none, NULL);
  setsid();
  /* Dies with the server: killed before it told the runtime this pid, the runtime could never
   * kill it (its exec keeps this; a setuid one drops it). A server gone already: nothing runs. */
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != server) _exit(127);
  /* Close-on-exec all of them, but a child that hangs before its exec would hold them until then:
   * the runtime's ends of the other launches in flight, and the channel. */
  for (int k = 0; k < MAX_IN_FLIGHT; k++) {
    if (flights[k].pid == 0) continue;
    close(flights[k].report);
    close_all(flights[k].ours, flights[k].n);
  }
  close(channel);
  for (int k = 0; k < MAX_WARM; k++) {
    if (warms[k].pid != 0 && warms[k].control >= 0) close(warms[k].control);
  }
  for (int k = 0; k < MAX_TERMINALS; k++) {
    if (terminals[k].pid == 0) continue;
    if (terminals[k].master >= 0) close(terminals[k].master);
    close(terminals[k].relay);
  }
  /* code[1]: where it failed (see stage_name): 0 descriptors or exec, 1 the working directory,
   * 2 joining a cgroup, 3 a resource limit, 4 taking the terminal. */
  int code[2] = {0, 0};
  int moved_report = fcntl(report, F_DUPFD_CLOEXEC, n + 3);
  if (moved_report >= 0) report = moved_report;
  /* Into its cgroups first, before anything of the tool runs: whatever it starts is born inside. */
  int joining = joined >= 0 ? joined : join_cgroups(r->cgroup_dir, r->cgroups, born_inside);
  if (joining != 0) {
    code[0] = joining;
    code[1] = 2;
    goto fail;
  }
  for (int i = 0; i < r->limits; i++) {
    if (setrlimit(r->limit_resource[i], &r->limit_value[i]) != 0) {
      code[0] = errno;
      code[1] = 3;
      goto fail;
    }
  }
  if (chdir(r->cwd) != 0) {
    code[0] = errno;
    code[1] = 1;
    goto fail;
  }
  /* Every descriptor first moved above the target range, then put in place: none is clobbered. */
  int moved[MAX_FDS];
  for (int i = 0; i < n; i++) {
    moved[i] = fcntl(theirs[i], F_DUPFD_CLOEXEC, n + 3);
    if (moved[i] < 0) {
      code[0] = errno;
      goto fail;
    }
  }
  for (int i = 0; i < n; i++) {
    if (dup2(moved[i], i) < 0) {
      code[0] = errno;
      goto fail;
    }
  }
  /* A terminal: the child's own session (setsid above) takes it as its controlling terminal, so
   * ^C, job control, SIGHUP at hang-up and /dev/tty all work as in a terminal emulator. */
  if (r->columns != 0 && ioctl(0, TIOCSCTTY, 0) != 0) {
    code[0] = errno;
    code[1] = 4;
    goto fail;
  }
  /* Nothing else reaches the child: every other descriptor closes at the exec (the report pipe
   * too, which is how the exec's success is told). */
  if (syscall(SYS_close_range, (unsigned)n, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = n; fd < 65536; fd++) fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  execve(r->file, r->argv, r->envp);
  code[0] = errno;
fail:
  while (write(report, code, sizeof code) < 0 && errno == EINTR) {
  }
  _exit(127);
}

/* clone3(2) (Linux 5.3; CLONE_INTO_CGROUP 5.7), carried here: the C library may not wrap it. */
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
struct spawn_clone_args {
  uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
      set_tid_size, cgroup;
};
#define SPAWN_CLONE_INTO_CGROUP 0x200000000ULL

/*
 * fork(), born in the v2 cgroup `dir` when one is given: clone3 with CLONE_INTO_CGROUP puts the
 * child there as it is created, where a write to cgroup.procs would migrate it (a migration takes
 * the kernel's threadgroup lock for writing: about 0.14 ms on the machine measured, the clone
 * nothing). A kernel without it: a plain fork, and the child joins by writing (*born_inside 0).
 * This process is single-threaded, so the raw system call leaves the C library consistent.
 */
static pid_t spawn_child(const char *dir, int *born_inside, int strict) {
  *born_inside = 0;
  if (dir[0] == '\0') return fork();
  int cgroup = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  /* strict (a warm child): none at all when its cgroup is gone already (given up on). */
  if (cgroup < 0 && strict) return -1;
  if (cgroup >= 0) {
    struct spawn_clone_args args;
    memset(&args, 0, sizeof args);
    args.flags = SPAWN_CLONE_INTO_CGROUP;
    args.exit_signal = SIGCHLD;
    args.cgroup = (uint64_t)cgroup;
    long pid = syscall(SYS_clone3, &args, sizeof args);
    int saved = errno;
    if (pid != 0) close(cgroup);
    if (pid >= 0) {
      *born_inside = 1;
      return (pid_t)pid;
    }
    errno = saved;
    if (errno != ENOSYS && errno != E2BIG && errno != EINVAL) return -1;
  }
  return fork();
}


static struct warm *warm_of(pid_t pid) {
  for (int i = 0; i < MAX_WARM; i++) {
    if (warms[i].pid == pid) return &warms[i];
  }
  return NULL;
}

static void forget_warm(struct warm *w) {
  if (w->control >= 0) close(w->control);
  free(w->data);
  free(w->cgroups);
  memset(w, 0, sizeof *w);
}

/* The warm child waiting for exactly the cgroups of `r`, if any. */
static struct warm *warm_for(const struct request *r) {
  for (int i = 0; i < MAX_WARM; i++) {
    struct warm *w = &warms[i];
    if (w->pid == 0 || w->control < 0 || strcmp(w->dir, r->cgroup_dir) != 0) continue;
    int k = 0;
    while (w->cgroups[k] != NULL && r->cgroups[k] != NULL && strcmp(w->cgroups[k], r->cgroups[k]) == 0)
      k++;
    if (w->cgroups[k] == NULL && r->cgroups[k] == NULL) return w;
  }
  return NULL;
}

/* In the warm child: joins its cgroups, waits for its launch, becomes it. Never returns. */
static void wait_warm(int control, const char *dir, char **cgroups, int born_inside, pid_t server) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != server) _exit(0);
  /* Nothing of the server's stays: its control socket alone, on 3. */
  if (control != 3 && dup3(control, 3, O_CLOEXEC) < 0) _exit(0);
  control = 3;
  if (syscall(SYS_close_range, 4U, ~0U, 0U) != 0) {
    for (int fd = 4; fd < 65536; fd++) close(fd);
  }
  memset(flights, 0, sizeof flights);
  in_flight = 0;
  channel = -1;
  memset(warms, 0, sizeof warms);
  memset(terminals, 0, sizeof terminals);
  int joined = join_cgroups(dir, cgroups, born_inside);
  /* The launch: its descriptor count and request length, the report pipe and its descriptors. */
  uint64_t header[2];
  union {
    char buffer[CMSG_SPACE(sizeof(int) * (MAX_FDS + 1))];
    struct cmsghdr align;
  } passed;
  struct iovec io = {header, sizeof header};
  struct msghdr message = {0};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  message.msg_control = passed.buffer;
  message.msg_controllen = sizeof passed.buffer;
  ssize_t got;
  do got = recvmsg(control, &message, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  while (got < 0 && errno == EINTR);
  struct cmsghdr *rights = got == (ssize_t)sizeof header ? CMSG_FIRSTHDR(&message) : NULL;
  if (rights == NULL || rights->cmsg_type != SCM_RIGHTS || header[0] > MAX_FDS ||
      rights->cmsg_len != CMSG_LEN(sizeof(int) * (header[0] + 1)) || header[1] > MAX_LINE)
    _exit(0);
  int fds[MAX_FDS + 1];
  memcpy(fds, CMSG_DATA(rights), sizeof(int) * (header[0] + 1));
  size_t length = (size_t)header[1], have = 0;
  char *data = malloc(length + 1);
  int code[2] = {ENOMEM, 0};
  struct request r;
  memset(&r, 0, sizeof r);
  while (data != NULL && have < length) {
    ssize_t n = read(control, data + have, length - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(0);
    have += (size_t)n;
  }
  /* The server read this very request: it cannot fail here but for memory. */
  if (data == NULL || read_request(data, length, &r) != 0 || r.extras + 3 != (int)header[0]) {
    while (write(fds[0], code, sizeof code) < 0 && errno == EINTR) {
    }
    _exit(127);
  }
  close(control);
  become(&r, fds + 1, (int)header[0], fds[0], server, born_inside, joined);
}

/*
 * Makes the cgroups of a tree made ahead, here rather than in the runtime: its mkdirs and limit
 * writes (the largest part of a cgroup per launch after the migrations) then cost the runtime's
 * event loop nothing, and run while that loop waits. `make`: the directories, in order; `writes`:
 * FILE VALUE OPTIONAL triples (an optional one may be refused: a file the host does not have).
 * 0, or the errno with `where` set ("mkdir:I", "write:I"); a failure removes what was made.
 */
static int make_tree(char **make, char **writes, char *where, size_t room) {
  int made = 0, failed = 0;
  for (; make[made] != NULL; made++) {
    if (mkdir(make[made], 0755) != 0) {
      failed = errno;
      snprintf(where, room, "mkdir:%d", made);
      break;
    }
  }
  for (int i = 0; failed == 0 && writes[i] != NULL; i += 3) {
    int fd = open(writes[i], O_WRONLY | O_CLOEXEC);
    size_t n = strlen(writes[i + 1]);
    int ok = fd >= 0 && write(fd, writes[i + 1], n) == (ssize_t)n;
    int error = errno;
    if (fd >= 0) close(fd);
    if (!ok && strcmp(writes[i + 2], "1") != 0) {
      failed = error;
      snprintf(where, room, "write:%d", i / 3);
    }
  }
  if (failed != 0) {
    while (made-- > 0) rmdir(make[made]);
  }
  return failed;
}

/* "r": removes the cgroups of `payload` (N, DIRS); answered "r FAILED", those still there. */
static void remove_trees(char *payload, size_t length) {
  struct cursor c = {payload, payload + length};
  char **dirs = strings(&c);
  if (dirs == NULL || c.at != c.end) {
    free(dirs);
    say("r -1");
    return;
  }
  int failed = 0;
  for (int i = 0; dirs[i] != NULL; i++) {
    if (rmdir(dirs[i]) != 0 && errno != ENOENT) failed++;
  }
  free(dirs);
  say("r %d", failed);
}

/* Forks the warm child `w` describes into a free slot: its pid, or 0 when none was made. */
static pid_t warm_child(struct warm *described) {
  struct warm w = *described;
  struct warm *slot = warm_of(0);
  if (slot == NULL) return 0;
  struct request wanted = {.cgroup_dir = w.dir, .cgroups = w.cgroups};
  int pair[2];
  if (warm_for(&wanted) != NULL || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return 0;
  /* A warm child that does not read is given up on, and the launch forked as usual. */
  struct timeval patience = {1, 0};
  setsockopt(pair[0], SOL_SOCKET, SO_SNDTIMEO, &patience, sizeof patience);
  pid_t server = getpid();
  int born_inside = 0;
  pid_t pid = spawn_child(w.dir, &born_inside, 1);
  if (pid == 0) wait_warm(pair[1], w.dir, w.cgroups, born_inside, server);
  close(pair[1]);
  if (pid < 0) {
    close(pair[0]);
    return 0;
  }
  w.pid = pid;
  w.control = pair[0];
  *slot = w;
  return pid;
}

/*
 * "w": the cgroups of the `w` payload made (MAKE, WRITES) and a warm child for them (CGROUP_DIR,
 * CGROUPS), unless one waits: answered "v PID", or "v 0" when none was made (so that the runtime,
 * giving the tree up, knows what to kill before it removes the tree), or "v 0 ERRNO WHERE" when
 * the cgroups could not be made.
 */
static void warm_up(const char *payload, size_t length) {
  char *data = malloc(length + 1);
  if (data == NULL) {
    say("v 0");
    return;
  }
  memcpy(data, payload, length);
  struct cursor c = {data, data + length};
  struct warm w = {0, -1, data, next(&c), NULL};
  char **make = NULL, **writes = NULL;
  int readable = w.dir != NULL && (w.cgroups = strings(&c)) != NULL;
  /* Without MAKE and WRITES: cgroups made already. */
  if (readable && c.at != c.end) {
    readable = (make = strings(&c)) != NULL && (writes = strings(&c)) != NULL && c.at == c.end;
    size_t n = 0;
    while (readable && writes[n] != NULL) n++;
    readable = readable && n % 3 == 0;
  }
  char where[32];
  int failed = readable && make != NULL ? make_tree(make, writes, where, sizeof where) : 0;
  free(make);
  free(writes);
  pid_t pid = readable && failed == 0 ? warm_child(&w) : 0;
  if (pid <= 0) {
    free(w.cgroups);
    free(data);
  }
  if (failed != 0) say("v 0 %d %s", failed, where);
  else say("v %d", (int)pid);
}

/*
 * Hands launch `data` (its request) to warm child `w`, with its report pipe and descriptors: its
 * pid, or -1 when it could not take it (it is killed then, and reaped without a word).
 */
static pid_t hand_over(struct warm *w, const char *data, size_t length, int report, int *theirs, int n) {
  uint64_t header[2] = {(uint64_t)n, (uint64_t)length};
  union {
    char buffer[CMSG_SPACE(sizeof(int) * (MAX_FDS + 1))];
    struct cmsghdr align;
  } passed;
  memset(&passed, 0, sizeof passed);
  struct iovec io = {header, sizeof header};
  struct msghdr message = {0};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  message.msg_control = passed.buffer;
  message.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)(n + 1));
  struct cmsghdr *rights = CMSG_FIRSTHDR(&message);
  rights->cmsg_level = SOL_SOCKET;
  rights->cmsg_type = SCM_RIGHTS;
  rights->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)(n + 1));
  int *fds = (int *)CMSG_DATA(rights);
  fds[0] = report;
  memcpy(fds + 1, theirs, sizeof(int) * (size_t)n);
  ssize_t sent;
  do sent = sendmsg(w->control, &message, MSG_NOSIGNAL);
  while (sent < 0 && errno == EINTR);
  size_t done = 0;
  while (sent == (ssize_t)sizeof header && done < length) {
    ssize_t more = send(w->control, data + done, length - done, MSG_NOSIGNAL);
    if (more < 0 && errno == EINTR) continue;
    if (more <= 0) sent = -1;
    else done += (size_t)more;
  }
  pid_t pid = w->pid;
  if (sent == (ssize_t)sizeof header) {
    /* A flight now, reaped as one. */
    forget_warm(w);
    return pid;
  }
  kill(pid, SIGKILL);
  close(w->control);
  w->control = -1;
  return -1;
}

/*
 * A pseudo-terminal of the request's size: its `master`, and its `slave` for the child, opened
 * without becoming this server's controlling terminal. Both are close-on-exec. 0, or -1 with errno.
 */
static int open_terminal(const struct request *r, int *master, int *slave) {
  char name[128];
  *master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (*master < 0) return -1;
  if (grantpt(*master) != 0 || unlockpt(*master) != 0 || ptsname_r(*master, name, sizeof name) != 0)
    return -1;
  *slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (*slave < 0) return -1;
  struct winsize size = {.ws_row = r->rows, .ws_col = r->columns};
  return ioctl(*master, TIOCSWINSZ, &size);
}

static void launch(struct request *r, const char *data, size_t length) {
  if (in_flight == MAX_IN_FLIGHT) {
    say("e %lu %d busy:%d", r->id, EAGAIN, MAX_IN_FLIGHT);
    return;
  }
  int n = 3 + r->extras;
  int ours[MAX_FDS], theirs[MAX_FDS];
  /* A terminal's master and our end of its relay, kept here once the launch is forked. */
  int master = -1, relay = -1;
  size_t written[MAX_FDS];
  for (int i = 0; i < n; i++) {
    ours[i] = theirs[i] = -1;
    written[i] = 0;
  }
  for (int i = 0; i < n; i++) {
    if (i >= 3 && r->kind[i - 3] == 'f') {
      const char *path = r->path[i - 3], *pin = r->pin[i - 3];
      struct stat st;
      theirs[i] = open_grant(path);
      if (theirs[i] < 0 || fstat(theirs[i], &st) != 0) {
        say("e %lu %d open:%d", r->id, errno, i - 3);
        goto done;
      }
      /* Only what a grant can be: anything else was put there since load (a FIFO, a device). */
      if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
        say("e %lu 0 type:%d:%s", r->id, i - 3, type_name(st.st_mode));
        goto done;
      }
      if (pin[0] != '\0') {
        char identity[64];
        snprintf(identity, sizeof identity, "%llu:%llu", (unsigned long long)st.st_dev,
                 (unsigned long long)st.st_ino);
        if (strcmp(identity, pin) != 0) {
          say("e %lu 0 pin:%d", r->id, i - 3);
          goto done;
        }
      }
      continue;
    }
    int pair[2];
    if (i == 0 && r->columns != 0) {
      /* A terminal: its slave on 0, 1 and 2 of the child; the master stays here, relayed to a
       * socket pair whose end the runtime gets as 0 (written) and 1 (read); nothing on 2 (the
       * terminal carries the child's stderr too). Node cannot be handed a terminal's master: its
       * channel takes a character device for a file and aborts. */
      if (!terminal_slot_free()) {
        say("e %lu %d terminal", r->id, EAGAIN);
        goto done;
      }
      if (open_terminal(r, &master, &theirs[0]) != 0 ||
          socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
        say("e %lu %d terminal", r->id, errno);
        goto done;
      }
      relay = pair[0];
      ours[0] = pair[1];
      ours[1] = fcntl(pair[1], F_DUPFD_CLOEXEC, 0);
      theirs[1] = fcntl(theirs[0], F_DUPFD_CLOEXEC, 0);
      theirs[2] = fcntl(theirs[0], F_DUPFD_CLOEXEC, 0);
      if (ours[1] < 0 || theirs[1] < 0 || theirs[2] < 0) {
        say("e %lu %d terminal", r->id, errno);
        goto done;
      }
      i = 2;
      continue;
    }
    if (i < 3) {
      /* A pipe: the child reads 0 and writes 1 and 2. */
      if (pipe2(pair, O_CLOEXEC) != 0) {
        say("e %lu %d pipe", r->id, errno);
        goto done;
      }
      ours[i] = pair[i == 0 ? 1 : 0];
      theirs[i] = pair[i == 0 ? 0 : 1];
      continue;
    }
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
      say("e %lu %d socketpair", r->id, errno);
      goto done;
    }
    ours[i] = pair[0];
    theirs[i] = pair[1];
    /* Given first, what fits without waiting: the final exec stage finds its environment there
     * as it starts, instead of after a turn of the runtime's loop. The runtime writes the rest. */
    char *payload = i >= 3 ? r->payload[i - 3] : NULL;
    size_t length = i >= 3 ? r->payload_length[i - 3] : 0;
    while (written[i] < length) {
      ssize_t sent = send(ours[i], payload + written[i], length - written[i], MSG_DONTWAIT | MSG_NOSIGNAL);
      if (sent <= 0) break;
      written[i] += (size_t)sent;
    }
    /* All of it given: the child's end of file is told here too (the runtime writes nothing). A
     * data extra is then done with: our end closes (what was sent stays for the child to read),
     * and the runtime is not handed a descriptor it would only close, one message less a launch. */
    if (payload != NULL && written[i] == length) {
      shutdown(ours[i], SHUT_WR);
      if (r->kind[i - 3] == 'd') {
        close(ours[i]);
        ours[i] = -1;
      }
    }
  }
  int report[2];
  if (pipe2(report, O_CLOEXEC | O_NONBLOCK) != 0) {
    say("e %lu %d socketpair", r->id, errno);
    goto done;
  }
  pid_t server = getpid();
  int born_inside = 0;
  struct warm *warm = warm_for(r);
  pid_t pid = warm != NULL ? hand_over(warm, data, length, report[1], theirs, n) : -1;
  if (pid < 0) {
    pid = spawn_child(r->cgroup_dir, &born_inside, 0);
    if (pid == 0) become(r, theirs, n, report[1], server, born_inside, -1);
  }
  int fork_errno = errno;
  close(report[1]);
  close_all(theirs, n);
  if (pid < 0) {
    close(report[0]);
    say("e %lu %d fork", r->id, fork_errno);
    goto done;
  }
  /* Relayed from now on; a launch that fails its exec ends its terminal as any program does. */
  if (master >= 0 && relay_terminal(pid, master, relay) == 0) master = relay = -1;
  /* Answered when its report comes (settle): the loop goes on serving meanwhile. */
  struct flight *f = flight_of(0);
  memset(f, 0, sizeof *f);
  f->id = r->id;
  f->pid = pid;
  f->report = report[0];
  f->n = n;
  for (int i = 0; i < n; i++) {
    f->ours[i] = ours[i];
    f->written[i] = written[i];
    ours[i] = -1;
  }
  in_flight++;
done:
  close_all(ours, n);
  close_all(theirs, n);
  if (master >= 0) close(master);
  if (relay >= 0) close(relay);
}

static void free_flight(struct flight *f) {
  f->pid = 0;
  in_flight--;
}

/*
 * Launch f's report can be read: its child failed before or at its exec (an errno on the pipe:
 * "e"), or the pipe closed at a successful exec ("s", then its descriptors). A child that also
 * ended already is told ended after that ("x"). The slot of a child that started frees at once (its
 * end is the reaper's to tell); the one of a failed or abandoned child waits for its reaping, so
 * that its end is told to nobody.
 */
static void settle(struct flight *f) {
  int code[2] = {0, 0};
  ssize_t got;
  do got = read(f->report, code, sizeof code);
  while (got < 0 && errno == EINTR);
  if (got < 0 && errno == EAGAIN && !f->reaped) return;
  if (got < 0) got = 0; /* an error on our own pipe: only its end tells anything, as for EOF */
  close(f->report);
  f->report = -1;
  int started = got == 0 && !f->abandoned;
  static const char *stages[] = {"exec", "chdir", "cgroup", "rlimit", "terminal"};
  const char *stage = code[1] >= 0 && code[1] < 5 ? stages[code[1]] : "exec";
  if (got > 0 && !f->abandoned) say("e %lu %d %s", f->id, code[0], stage);
  if (started) {
    int passed = 0;
    for (int i = 0; i < f->n; i++) passed += f->ours[i] >= 0;
    say("s %lu %d %d", f->id, (int)f->pid, passed);
    for (int i = 0; i < f->n; i++) {
      if (f->ours[i] >= 0) pass_fd(f->id, i, f->written[i], f->ours[i]);
    }
    if (f->reaped) tell_exit(f->pid, f->status);
  }
  close_all(f->ours, f->n);
  if (started || f->reaped) free_flight(f);
}

/* "k ID": the runtime gave up on launch ID (its deadline passed): its child is killed, unanswered. */
static void abandon(unsigned long id) {
  for (int i = 0; i < MAX_IN_FLIGHT; i++) {
    struct flight *f = &flights[i];
    if (f->pid == 0 || f->id != id || f->report < 0) continue;
    f->abandoned = 1;
    /* Its own session (setsid) once it got that far; the pid itself in any case. */
    kill(-f->pid, SIGKILL);
    kill(f->pid, SIGKILL);
  }
}

static void handle_line(char *line, size_t length) {
  /* Node's own messages (acknowledgements of the descriptors we passed) are objects. */
  if (length < 2 || line[0] != '"' || line[length - 1] != '"') return;
  /* Not base64 (a space): a kill of a launch in flight. */
  if (length > 4 && line[1] == 'k' && line[2] == ' ') {
    char *end;
    line[length - 1] = '\0';
    unsigned long id = strtoul(line + 3, &end, 10);
    if (*end == '\0') abandon(id);
    return;
  }
  if (length > 4 && line[1] == 'z' && line[2] == ' ') {
    /* "z PID COLUMNS ROWS": the terminal of that launch resized. */
    line[length - 1] = '\0';
    int pid = 0, columns = 0, rows = 0;
    if (sscanf(line + 3, "%d %d %d", &pid, &columns, &rows) == 3 && pid > 0 && columns > 0 &&
        columns <= 0xffff && rows > 0 && rows <= 0xffff)
      resize_terminal((pid_t)pid, (unsigned short)columns, (unsigned short)rows);
    return;
  }
  if (length > 4 && (line[1] == 'w' || line[1] == 'r') && line[2] == ' ') {
    long decoded = unbase64(line + 3, length - 4);
    if (decoded < 0) say(line[1] == 'w' ? "v 0" : "r -1");
    else if (line[1] == 'w') warm_up(line + 3, (size_t)decoded);
    else remove_trees(line + 3, (size_t)decoded);
    return;
  }
  /* Set before anything can fail: every path below frees what it holds. */
  struct request r;
  memset(&r, 0, sizeof r);
  long decoded = unbase64(line + 1, length - 2);
  if (decoded < 0) {
    /* Not base64: no id to answer with (0); the runtime stops trusting a server it cannot follow. */
    say("e 0 %d request", EINVAL);
  } else if (read_request(line + 1, (size_t)decoded, &r) != 0) {
    /* Its id, when that much could be read (else 0), fails that launch alone. */
    say("e %lu %d request", r.id, EINVAL);
  } else {
    launch(&r, line + 1, (size_t)decoded);
  }
  free(r.argv);
  free(r.envp);
  free(r.cgroups);
}

static void reap(void) {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    terminal_reaped(pid);
    struct flight *f = flight_of(pid);
    struct warm *w = f == NULL ? warm_of(pid) : NULL;
    if (w != NULL) {
      /* A warm child that never became a launch: nobody was told of it. */
      forget_warm(w);
      continue;
    }
    if (f == NULL) {
      tell_exit(pid, status);
      continue;
    }
    /* Ended before its report was read: the report is whole now (its writer is gone). */
    f->reaped = 1;
    f->status = status;
    if (f->report >= 0) settle(f);
    else free_flight(f);
  }
}

int main(void) {
  const char *fd = getenv("NODE_CHANNEL_FD");
  if (fd == NULL) {
    fprintf(stderr, PROG ": run by @toolvisor/process-runtime only (NODE_CHANNEL_FD is not set)\n");
    return 2;
  }
  channel = atoi(fd);
  if (fcntl(channel, F_SETFD, FD_CLOEXEC) != 0) die("the channel");
  /* Whatever the runtime's own parent left open (Node's spawn passes it on) goes: only the
   * standard descriptors and the channel stay. */
  if ((channel > 3 && syscall(SYS_close_range, 3U, (unsigned)channel - 1, 0U) != 0) ||
      syscall(SYS_close_range, (unsigned)channel + 1, ~0U, 0U) != 0) {
    for (int other = 3; other < 65536; other++) {
      if (other != channel) close(other);
    }
  }
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);
  sigset_t child;
  sigemptyset(&child);
  sigaddset(&child, SIGCHLD);
  sigprocmask(SIG_BLOCK, &child, NULL);
  int children = signalfd(-1, &child, SFD_CLOEXEC | SFD_NONBLOCK);
  if (children < 0) die("signalfd");

  size_t capacity = 64 * 1024, used = 0;
  char *buffer = malloc(capacity);
  if (buffer == NULL) die("malloc");
  for (;;) {
    /* The channel, the children's ends, and the report of every launch in flight. */
    struct pollfd watch[2 + MAX_IN_FLIGHT + 2 * MAX_TERMINALS] = {{channel, POLLIN, 0}, {children, POLLIN, 0}};
    struct flight *of[2 + MAX_IN_FLIGHT] = {NULL, NULL};
    nfds_t count = 2;
    for (int i = 0; i < MAX_IN_FLIGHT; i++) {
      if (flights[i].pid == 0 || flights[i].report < 0) continue;
      watch[count] = (struct pollfd){flights[i].report, POLLIN, 0};
      of[count++] = &flights[i];
    }
    /* Then the terminals, two entries each: their master and their relay. */
    nfds_t relays = count;
    struct terminal *relayed[MAX_TERMINALS];
    int served = 0;
    for (int i = 0; i < MAX_TERMINALS; i++) {
      if (terminals[i].pid == 0) continue;
      watch_terminal(&terminals[i], &watch[count], &watch[count + 1]);
      count += 2;
      relayed[served++] = &terminals[i];
    }
    if (poll(watch, count, -1) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    for (int i = 0; i < served; i++) {
      short master_events = watch[relays + 2 * i].revents, relay_events = watch[relays + 2 * i + 1].revents;
      if (master_events || relay_events) serve_terminal(relayed[i], master_events, relay_events);
    }
    /* Reports first: a child that started and ended meanwhile is told started before ended. */
    for (nfds_t i = 2; i < relays; i++) {
      if (watch[i].revents && of[i]->pid != 0 && of[i]->report == watch[i].fd) settle(of[i]);
    }
    if (watch[1].revents) {
      struct signalfd_siginfo info;
      while (read(children, &info, sizeof info) > 0) {
      }
      reap();
    }
    if (!watch[0].revents) continue;
    if (used == capacity) {
      if (capacity >= MAX_LINE) {
        /* A line longer than any request: the runtime fails the launch that sent it. */
        say("e 0 %d request", E2BIG);
        used = 0;
      } else {
        capacity *= 2;
        char *bigger = realloc(buffer, capacity);
        if (bigger == NULL) die("realloc");
        buffer = bigger;
      }
    }
    ssize_t got = read(channel, buffer + used, capacity - used);
    if (got == 0) return 0;
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return 0;
    }
    used += (size_t)got;
    size_t start = 0;
    for (;;) {
      char *newline = memchr(buffer + start, '\n', used - start);
      if (newline == NULL) break;
      size_t end = (size_t)(newline - buffer);
      handle_line(buffer + start, end - start);
      start = end + 1;
    }
    memmove(buffer, buffer + start, used - start);
    used -= start;
  }
}
