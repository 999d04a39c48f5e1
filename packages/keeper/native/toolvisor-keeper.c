/*
 * toolvisor-keeper: holds one kept process (issue 33, decision 0113) so that its parent is not the
 * daemon: its stdio, its exit status, and a socket a later daemon re-adopts it through. The conmon
 * shape. Outermost in the launch chain, run as toolvisor's own user, placed by the fork server in
 * the launch's cgroups like any launch:
 *
 *   toolvisor-keeper --dir DIR --secret FILE [--fds N] [--cap BYTES] [--reap-after SECONDS] [--cgroup DIR]... -- FILE [ARGS...]
 *   toolvisor-keeper --version     prints "toolvisor-keeper 1"
 *
 * DIR is the process's own directory (made by the daemon, 0700, in the state directory); FILE the
 * launch's first program (a path: no PATH search). The keeper
 *
 * 1. reads the state directory's keeper secret from FILE, no longer dies with its parent, and forks:
 *    the process its caller started exits at once, the keeper is its child (nobody waits on it);
 * 2. forks the launch: its 0, 1 and 2 are pipes to the keeper, the N descriptors after them (the
 *    launch's own: a status pipe, a sandbox's sockets) passed unchanged, its own process group
 *    (so a signal to the group reaches what it runs, never the keeper), every signal default;
 * 3. appends what the launch writes to DIR/out and DIR/err (0600), each up to BYTES (default
 *    unbounded; past it the bytes are read and dropped, and counted), feeds DIR/in's writes to its
 *    stdin through a 64 KiB buffer, and reaps it;
 * 4. listens on DIR/sock (0600) and says "ready PID KEEPER\n" on its stdout, which it then closes.
 *
 * The socket takes one client at a time, a newer one replacing the older (a daemon that came
 * back). A client of another uid is closed at once (SO_PEERCRED); one whose first line is not
 * "HELLO SECRET" too. The protocol, one text line per message (docs/decisions/0113):
 *
 *   keeper -> daemon   PID <pid> <keeper> <version>   the launch's pid, the keeper's, and this
 *                                        protocol's version (first, then the state so far:)
 *                      OUT <bytes>          DIR/out holds this many bytes of its stdout
 *                      ERR <bytes>          DIR/err, of its stderr
 *                      DROP <1|2> <bytes>   bytes of stdout (1) or stderr (2) dropped past the cap
 *                      END <1|2>            that stream closed: its file is whole
 *                      EXIT <code|-> <signal number|->   the launch was reaped
 *   daemon -> keeper   HELLO <secret>
 *                      IN <n>\n<n bytes>    to its stdin (read only while the buffer has room)
 *                      CLOSE                its stdin ends once the buffer is written
 *                      RELEASE              the daemon has the exit: DIR is removed, the keeper exits
 *
 * Output travels by the files, never the socket: a slow or absent daemon costs the keeper nothing
 * and holds the launch back in nothing (its pipes are always read), and the notices are coalesced
 * (at most one pending line of each kind), so neither side buffers without bound.
 *
 * With no client for SECONDS (default 86400), the keeper kills the launch's group and every other
 * process of the launch's cgroups (`--cgroup`: the leaves made for this launch) and, once it
 * was reaped and its streams closed, removes DIR and exits: a keeper whose daemon never comes back
 * is reaped by the bound the operator sets.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define VERSION 1
#define STDIN_BUFFER 65536
#define READ_CHUNK 65536
#define LINE_MAX_BYTES 512

static int dirfd_ = -1;
static char secret[129];
static size_t secret_len;
static unsigned long long cap = ULLONG_MAX;
static long reap_after = 86400;

static pid_t child;
static int child_status = -1; /* the wait status, once reaped */

struct stream {
  int pipe;             /* read end, -1 once closed */
  int file;             /* DIR/out or DIR/err */
  unsigned long long written, dropped;
  int told_end;
};
static struct stream streams[2] = {{-1, -1, 0, 0, 0}, {-1, -1, 0, 0, 0}};

static int stdin_pipe = -1;
static char stdin_buf[STDIN_BUFFER];
static size_t stdin_len;
static int stdin_closing;

static int listener = -1;
static int client = -1;
static int client_authed;
static char rbuf[LINE_MAX_BYTES];
static size_t rlen;
static unsigned long long payload_left; /* bytes of an IN still to come */
static int released;
static struct timespec alone_since;
static int exit_told;

/* What the client has not been sent yet: rebuilt from the state, so never more than a few lines. */
static int dirty_out, dirty_err, dirty_drop[2];
static char wbuf[1024];
static size_t wlen;

static void die(const char *what) {
  fprintf(stderr, "toolvisor-keeper: %s: %s\n", what, strerror(errno));
  exit(125);
}

static long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

static void nonblock(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

static void read_secret(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) die(path);
  ssize_t n = read(fd, secret, sizeof secret - 1);
  close(fd);
  if (n <= 0) {
    errno = EINVAL;
    die("the secret is empty");
  }
  while (n > 0 && (secret[n - 1] == '\n' || secret[n - 1] == ' ')) n--;
  secret[n] = 0;
  secret_len = (size_t)n;
}

static int same_secret(const char *given, size_t length) {
  if (length != secret_len) return 0;
  unsigned char diff = 0;
  for (size_t i = 0; i < length; i++) diff |= (unsigned char)(given[i] ^ secret[i]);
  return diff == 0;
}

static void drop_client(void) {
  if (client >= 0) close(client);
  client = -1;
  client_authed = 0;
  rlen = 0;
  payload_left = 0;
  wlen = 0;
  clock_gettime(CLOCK_MONOTONIC, &alone_since);
}

/* Appends the pending notices to wbuf (room for each is always there: they are few and short). */
static void compose(void) {
  if (!client_authed) return;
  char line[96];
  int n;
#define PUT(...)                                                              \
  do {                                                                        \
    n = snprintf(line, sizeof line, __VA_ARGS__);                             \
    if (wlen + (size_t)n > sizeof wbuf) return;                               \
    memcpy(wbuf + wlen, line, (size_t)n);                                     \
    wlen += (size_t)n;                                                        \
  } while (0)
  if (dirty_out) { PUT("OUT %llu\n", streams[0].written); dirty_out = 0; }
  if (dirty_err) { PUT("ERR %llu\n", streams[1].written); dirty_err = 0; }
  for (int s = 0; s < 2; s++)
    if (dirty_drop[s]) { PUT("DROP %d %llu\n", s + 1, streams[s].dropped); dirty_drop[s] = 0; }
  for (int s = 0; s < 2; s++)
    if (streams[s].pipe < 0 && !streams[s].told_end) { PUT("END %d\n", s + 1); streams[s].told_end = 1; }
  if (child_status >= 0 && !exit_told) {
    if (WIFEXITED(child_status)) PUT("EXIT %d -\n", WEXITSTATUS(child_status));
    else PUT("EXIT - %d\n", WTERMSIG(child_status));
    exit_told = 1;
  }
#undef PUT
}

static void flush_client(void) {
  compose();
  while (client >= 0 && wlen > 0) {
    ssize_t n = send(client, wbuf, wlen, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) return;
      drop_client();
      return;
    }
    memmove(wbuf, wbuf + n, wlen - (size_t)n);
    wlen -= (size_t)n;
    compose();
  }
}

static void welcome(void) {
  client_authed = 1;
  int n = snprintf(wbuf, sizeof wbuf, "PID %d %d %d\n", (int)child, (int)getpid(), VERSION);
  wlen = (size_t)n;
  dirty_out = dirty_err = 1;
  dirty_drop[0] = streams[0].dropped > 0;
  dirty_drop[1] = streams[1].dropped > 0;
  streams[0].told_end = streams[1].told_end = 0;
  exit_told = 0;
  flush_client();
}

static void pump_output(int s) {
  struct stream *st = &streams[s];
  static char chunk[READ_CHUNK];
  for (int rounds = 0; rounds < 16 && st->pipe >= 0; rounds++) {
    ssize_t n = read(st->pipe, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return;
      n = 0; /* an error ends the stream like its end */
    }
    if (n == 0) {
      close(st->pipe);
      st->pipe = -1;
      return;
    }
    size_t keep = (size_t)n;
    if (st->written + keep > cap) keep = cap > st->written ? (size_t)(cap - st->written) : 0;
    size_t done = 0;
    while (done < keep) {
      ssize_t w = write(st->file, chunk + done, keep - done);
      if (w < 0) {
        if (errno == EINTR) continue;
        break; /* disk full or the like: the rest of this read is dropped, and counted */
      }
      done += (size_t)w;
    }
    st->written += done;
    if (done < (size_t)n) {
      st->dropped += (size_t)n - done;
      dirty_drop[s] = 1;
    }
    if (done > 0) {
      if (s == 0) dirty_out = 1;
      else dirty_err = 1;
    }
  }
}

static void pump_stdin(void) {
  while (stdin_pipe >= 0 && stdin_len > 0) {
    ssize_t n = write(stdin_pipe, stdin_buf, stdin_len);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return;
      /* It closed its stdin: what is written to it is dropped, as a pipe would. */
      close(stdin_pipe);
      stdin_pipe = -1;
      stdin_len = 0;
      return;
    }
    memmove(stdin_buf, stdin_buf + n, stdin_len - (size_t)n);
    stdin_len -= (size_t)n;
  }
  if (stdin_pipe >= 0 && stdin_closing && stdin_len == 0) {
    close(stdin_pipe);
    stdin_pipe = -1;
  }
}

static void handle_line(char *line) {
  if (!client_authed) {
    if (strncmp(line, "HELLO ", 6) == 0 && same_secret(line + 6, strlen(line + 6))) welcome();
    else drop_client();
    return;
  }
  if (strncmp(line, "IN ", 3) == 0) {
    char *end;
    unsigned long long n = strtoull(line + 3, &end, 10);
    if (*end != 0) drop_client();
    else payload_left = n;
  } else if (strcmp(line, "CLOSE") == 0) {
    stdin_closing = 1;
  } else if (strcmp(line, "RELEASE") == 0) {
    released = 1;
  } else {
    drop_client(); /* a client that speaks something else is not ours */
  }
}

/* Consumes rbuf: an IN payload into the stdin buffer while it has room, else whole lines. */
static void parse(void) {
  size_t at = 0;
  while (at < rlen && client >= 0) {
    if (payload_left > 0) {
      size_t room = sizeof stdin_buf - stdin_len;
      size_t take = rlen - at;
      if (take > payload_left) take = (size_t)payload_left;
      if (take > room) take = room;
      if (take == 0) break;
      if (stdin_pipe >= 0) {
        memcpy(stdin_buf + stdin_len, rbuf + at, take);
        stdin_len += take;
      }
      at += take;
      payload_left -= take;
      continue;
    }
    char *newline = memchr(rbuf + at, '\n', rlen - at);
    if (newline == NULL) {
      if (rlen - at >= sizeof rbuf - 1) drop_client(); /* a line longer than any message */
      break;
    }
    *newline = 0;
    handle_line(rbuf + at);
    at = (size_t)(newline - rbuf) + 1;
  }
  if (client < 0) return;
  memmove(rbuf, rbuf + at, rlen - at);
  rlen -= at;
}

static void read_client(void) {
  ssize_t n = recv(client, rbuf + rlen, sizeof rbuf - rlen, MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {
    drop_client();
    return;
  }
  rlen += (size_t)n;
  parse();
}

static void accept_client(void) {
  int fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0) return;
  struct ucred cred;
  socklen_t length = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0 || cred.uid != getuid()) {
    close(fd);
    return;
  }
  /* A newer daemon replaces the older: what it did not take is told again. */
  drop_client();
  client = fd;
}

static void reap(void) {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    if (pid != child) continue;
    /* What it wrote before it ended is in the files (and told) before its exit is. */
    pump_output(0);
    pump_output(1);
    child_status = status;
  }
}

static void remove_dir(void) {
  static const char *const names[] = {"sock", "out", "err", "kept.json"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) unlinkat(dirfd_, names[i], 0);
}

/* The launch's cgroups (`--cgroup DIR`, each a leaf made for this launch alone): what the launch
 * started that left its process group (a daemonized child, a sandbox helper) is killed there. */
static const char *cgroups[4];
static int ncgroups;

/* Kills every process of the launch's cgroups but the keeper, a few rounds (a fork racing the
 * read of cgroup.procs is found by the next). Without --cgroup nothing is read: the keeper never
 * kills by a cgroup it was not told is the launch's own. */
static void kill_cgroup_peers(void) {
  for (int round = 0; round < 8; round++) {
    int found = 0;
    for (int i = 0; i < ncgroups; i++) {
      char path[PATH_MAX];
      if ((size_t)snprintf(path, sizeof path, "%s/cgroup.procs", cgroups[i]) >= sizeof path) continue;
      FILE *procs = fopen(path, "re");
      if (procs == NULL) continue;
      long pid;
      while (fscanf(procs, "%ld", &pid) == 1) {
        if (pid <= 0 || pid == (long)getpid()) continue;
        kill((pid_t)pid, SIGKILL);
        found = 1;
      }
      fclose(procs);
    }
    if (!found) return;
    struct timespec pause = {0, 5 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
}

static int parse_args(int argc, char **argv, const char **dir, const char **secret_file, int *fds) {
  int i = 1;
  for (; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) return i + 1;
    if (i + 1 >= argc) break;
    if (strcmp(argv[i], "--dir") == 0) *dir = argv[++i];
    else if (strcmp(argv[i], "--secret") == 0) *secret_file = argv[++i];
    else if (strcmp(argv[i], "--fds") == 0) *fds = atoi(argv[++i]);
    else if (strcmp(argv[i], "--cap") == 0) cap = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--reap-after") == 0) reap_after = atol(argv[++i]);
    else if (strcmp(argv[i], "--cgroup") == 0 && ncgroups < 4) cgroups[ncgroups++] = argv[++i];
    else break;
  }
  fprintf(stderr, "usage: toolvisor-keeper --dir DIR --secret FILE [--fds N] [--cap BYTES] [--reap-after SECONDS] [--cgroup DIR]... -- FILE [ARGS...]\n");
  exit(2);
}

static void start_child(char **argv, int fds) {
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) die("pipe");
  child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    for (int fd = 3 + fds; fd < 1024; fd++) close(fd);
    setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    for (int sig = 1; sig < 65; sig++) {
      unsigned long none_action[4] = {0, 0, 0, 0};
      syscall(SYS_rt_sigaction, sig, none_action, NULL, 8);
    }
    sigprocmask(SIG_SETMASK, &none, NULL);
    execv(argv[0], argv);
    dprintf(2, "toolvisor-keeper: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  setpgid(child, child);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  for (int fd = 3; fd < 3 + fds; fd++) close(fd);
  stdin_pipe = in[1];
  streams[0].pipe = out[0];
  streams[1].pipe = err[0];
  nonblock(stdin_pipe);
  nonblock(out[0]);
  nonblock(err[0]);
}

static void open_files(const char *dir) {
  dirfd_ = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (dirfd_ < 0) die(dir);
  const char *names[2] = {"out", "err"};
  for (int s = 0; s < 2; s++) {
    streams[s].file = openat(dirfd_, names[s], O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (streams[s].file < 0) die(names[s]);
  }
  struct sockaddr_un address = {.sun_family = AF_UNIX};
  if ((size_t)snprintf(address.sun_path, sizeof address.sun_path, "%s/sock", dir) >= sizeof address.sun_path) {
    errno = ENAMETOOLONG;
    die("the socket's path");
  }
  listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listener < 0) die("socket");
  mode_t before = umask(0177);
  if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0) die(address.sun_path);
  umask(before);
  if (listen(listener, 4) != 0) die("listen");
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--version") == 0) {
    printf("toolvisor-keeper %d\n", VERSION);
    return 0;
  }
  const char *dir = NULL, *secret_file = NULL;
  int fds = 0;
  int first = parse_args(argc, argv, &dir, &secret_file, &fds);
  if (dir == NULL || secret_file == NULL || first >= argc || fds < 0 || fds > 64 || argv[first][0] != '/') {
    fprintf(stderr, "toolvisor-keeper: --dir, --secret and an absolute FILE are needed\n");
    return 2;
  }
  /* Its parent (the fork server) ending must not end it: that is what it is for. */
  prctl(PR_SET_PDEATHSIG, 0);
  signal(SIGPIPE, SIG_IGN);
  signal(SIGINT, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  read_secret(secret_file);
  /* The conmon shape: the process the fork server started ends here, its child is the keeper.
   * Nothing of the daemon then waits on the keeper (the fork server has no child left to reap and
   * can end with the daemon), and the keeper is init's once the daemon is gone. */
  pid_t keeper = fork();
  if (keeper < 0) die("fork");
  if (keeper > 0) _exit(0);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, NULL);
  start_child(argv + first, fds);
  int sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sigfd < 0) die("signalfd");
  open_files(dir);
  clock_gettime(CLOCK_MONOTONIC, &alone_since);
  printf("ready %d %d\n", (int)child, (int)getpid());
  fflush(stdout);
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0) {
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    close(null);
  }
  int killed = 0;
  long killed_at = 0;
  for (;;) {
    reap();
    int done = child_status >= 0 && streams[0].pipe < 0 && streams[1].pipe < 0;
    if (done && released) break;
    flush_client();
    struct pollfd p[6];
    int n = 0;
    p[n++] = (struct pollfd){sigfd, POLLIN, 0};
    p[n++] = (struct pollfd){listener, POLLIN, 0};
    int at_out = -1, at_err = -1, at_in = -1, at_client = -1;
    if (streams[0].pipe >= 0) at_out = n, p[n++] = (struct pollfd){streams[0].pipe, POLLIN, 0};
    if (streams[1].pipe >= 0) at_err = n, p[n++] = (struct pollfd){streams[1].pipe, POLLIN, 0};
    if (stdin_pipe >= 0 && stdin_len > 0) at_in = n, p[n++] = (struct pollfd){stdin_pipe, POLLOUT, 0};
    if (client >= 0 && rlen > 0) parse(); /* what waited for room in the stdin buffer */
    if (client >= 0) {
      short events = 0;
      if (rlen < sizeof rbuf && (payload_left == 0 || stdin_len < sizeof stdin_buf)) events |= POLLIN;
      if (wlen > 0) events |= POLLOUT;
      at_client = n, p[n++] = (struct pollfd){client, events, 0};
    }
    int timeout = -1;
    if (client < 0 || !client_authed) {
      long left = reap_after * 1000L - (now_ms() - (alone_since.tv_sec * 1000L + alone_since.tv_nsec / 1000000L));
      if (left <= 0) {
        /* No daemon for the whole bound: the launch is ended, and the keeper with it once it is. */
        if (!killed) {
          if (child_status < 0) {
            kill(-child, SIGKILL);
            kill(child, SIGKILL);
          }
          kill_cgroup_peers();
        }
        if (!killed) killed_at = now_ms();
        killed = 1;
        /* Done, or what it left behind still holds its pipes 5 s after: the keeper goes. */
        if (done || now_ms() - killed_at > 5000) break;
        timeout = 100;
      } else {
        timeout = left > INT_MAX ? INT_MAX : (int)left;
      }
    }
    if (poll(p, (nfds_t)n, timeout) < 0 && errno != EINTR) die("poll");
    if (p[0].revents) {
      struct signalfd_siginfo info;
      while (read(sigfd, &info, sizeof info) > 0) {
      }
    }
    if (p[1].revents & POLLIN) accept_client();
    if (at_out >= 0 && p[at_out].revents) pump_output(0);
    if (at_err >= 0 && p[at_err].revents) pump_output(1);
    if (at_in >= 0 && p[at_in].revents) pump_stdin();
    if (at_client >= 0 && client >= 0) {
      if (p[at_client].revents & (POLLIN | POLLHUP | POLLERR)) read_client();
      if (client >= 0 && stdin_len > 0) pump_stdin();
      if (client >= 0 && (p[at_client].revents & POLLOUT)) flush_client();
    }
    if (stdin_closing) pump_stdin();
  }
  remove_dir();
  close(dirfd_);
  rmdir(dir);
  return 0;
}
