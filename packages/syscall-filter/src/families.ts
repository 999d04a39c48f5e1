/**
 * What a confined tool may do, family by family: every call of both syscall tables
 * (`SYSCALL_NUMBERS`) is in exactly one family (a test holds it), with the reason it gets
 * its rule. Based on Docker's default profile (moby/profiles `seccomp/default.json`, an allowlist
 * reviewed since 2016), read call by call; where this list is stricter, the family says why.
 * A number in no family (a gap, a call newer than the table) is ENOSYS.
 */

/**
 * What the filter answers for a call: `allow`; `eperm` (refused on purpose: the call exists, the
 * tool may not); `enosys` (as if the kernel lacked it, so callers fall back); `ipc` (allowed when
 * the mechanism gives the tool its own IPC namespace, else EPERM); or an argument rule, decided
 * on the call's registers (see {@link ARGUMENT_RULES}).
 */
export type Rule = 'allow' | 'eperm' | 'enosys' | 'ipc' | ArgumentRule

/** The calls whose answer depends on their arguments. */
export type ArgumentRule = 'socket' | 'socketpair' | 'clone' | 'unshare' | 'ioctl' | 'personality'

/** One reviewed family of calls. */
export interface Family {
  /** What the calls have in common, as the docs' table names it. */
  readonly name: string
  /** What the filter answers for each of them. */
  readonly rule: Rule
  /** Why they get that rule. */
  readonly why: string
  /** The calls, by the kernel's name (either architecture's table may lack some). */
  readonly calls: readonly string[]
}

const words = (text: string): readonly string[] => text.trim().split(/\s+/)

/** What each argument rule lets through (for the docs; `arguments.ts` holds the program). */
export const ARGUMENT_RULES: Readonly<Record<ArgumentRule, string>> = {
  socket:
    'AF_UNIX EPERM always; net none: every family EPERM; net host: AF_INET, AF_INET6, and AF_NETLINK with NETLINK_ROUTE, the rest EPERM; net stream: AF_INET and AF_INET6 with SOCK_STREAM (type & 0xf) and protocol 0 or IPPROTO_TCP, the rest EPERM',
  socketpair:
    'AF_UNIX with SOCK_STREAM or SOCK_SEQPACKET (type & 0xf; SOCK_NONBLOCK and SOCK_CLOEXEC above it); SOCK_DGRAM and the rest EPERM; other families as socket() under net host, else EPERM',
  clone:
    'EPERM when flags (arg 0) hold CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID or NEWNET; else allowed',
  unshare: 'EPERM when flags hold a namespace flag (the clone ones and CLONE_NEWTIME); else allowed',
  ioctl: 'EPERM for TIOCSTI and TIOCLINUX (arg 1); else allowed',
  personality:
    "allowed for Docker's values: 0 (PER_LINUX), 0x8 (UNAME26), 0x20000 (ADDR_NO_RANDOMIZE), 0x20008 and 0xffffffff (query); else EPERM",
}

/** The reviewed families, in the order the docs show them. */
export const SYSCALL_FAMILIES: readonly Family[] = [
  {
    name: 'files',
    rule: 'allow',
    why: 'paths and descriptors: what the mount namespace (bwrap) or the Landlock rules already decide; device nodes need CAP_MKNOD, which no tool holds',
    calls: words(`
      read write readv writev pread64 pwrite64 preadv pwritev preadv2 pwritev2 open openat openat2
      creat close close_range dup dup2 dup3 lseek fcntl flock fsync fdatasync sync syncfs sync_file_range
      fallocate fadvise64 readahead truncate ftruncate stat fstat lstat newfstatat statx statfs fstatfs
      access faccessat faccessat2 getdents getdents64 getcwd chdir fchdir rename renameat renameat2
      mkdir mkdirat rmdir link linkat unlink unlinkat symlink symlinkat readlink readlinkat chmod fchmod
      fchmodat fchmodat2 chown fchown lchown fchownat umask utime utimes utimensat futimesat mknod
      mknodat copy_file_range sendfile splice tee vmsplice cachestat setxattr lsetxattr fsetxattr
      getxattr lgetxattr fgetxattr listxattr llistxattr flistxattr removexattr lremovexattr fremovexattr
      setxattrat getxattrat listxattrat removexattrat inotify_init inotify_init1 inotify_add_watch
      inotify_rm_watch fanotify_mark`),
  },
  {
    name: 'memory',
    rule: 'allow',
    why: "the process's own address space (mlock is bounded by RLIMIT_MEMLOCK)",
    calls: words(`
      brk mmap munmap mremap mprotect msync mincore madvise mlock mlock2 munlock mlockall munlockall
      remap_file_pages membarrier memfd_create memfd_secret pkey_mprotect pkey_alloc pkey_free mseal
      map_shadow_stack process_mrelease`),
  },
  {
    name: 'processes, threads and signals',
    rule: 'allow',
    why: 'its own children, threads and waits; signals reach only what the pid namespace (bwrap) or Landlock signal scoping (ABI 6) lets them',
    calls: words(`
      fork vfork execve execveat exit exit_group wait4 waitid kill tkill tgkill getpid getppid gettid
      getpgid setpgid getpgrp getsid setsid set_tid_address prctl arch_prctl restart_syscall rseq
      pidfd_open pidfd_send_signal futex futex_waitv futex_wake futex_wait futex_requeue set_robust_list
      get_robust_list rt_sigaction rt_sigprocmask rt_sigreturn rt_sigpending rt_sigtimedwait
      rt_sigqueueinfo rt_tgsigqueueinfo rt_sigsuspend sigaltstack pause signalfd signalfd4 uretprobe
      uprobe`),
  },
  {
    name: 'identity and limits',
    rule: 'allow',
    why: 'without a capability these only read, keep or drop ids, priorities and limits; no_new_privs keeps exec from granting any',
    calls: words(`
      getuid geteuid getgid getegid getresuid getresgid getgroups setuid setgid setreuid setregid
      setresuid setresgid setgroups setfsuid setfsgid capget capset sched_yield sched_setparam
      sched_getparam sched_setscheduler sched_getscheduler sched_get_priority_max sched_get_priority_min
      sched_rr_get_interval sched_setaffinity sched_getaffinity sched_setattr sched_getattr getpriority
      setpriority ioprio_get ioprio_set getrlimit setrlimit prlimit64 getrusage times getcpu sysinfo
      uname getrandom`),
  },
  {
    name: 'time',
    rule: 'allow',
    why: 'reading clocks and timers; adjtimex and clock_adjtime only read without CAP_SYS_TIME',
    calls: words(`
      nanosleep clock_nanosleep clock_gettime clock_getres gettimeofday time alarm getitimer setitimer
      timer_create timer_settime timer_gettime timer_getoverrun timer_delete timerfd_create
      timerfd_settime timerfd_gettime adjtimex clock_adjtime`),
  },
  {
    name: 'waiting on descriptors',
    rule: 'allow',
    why: 'poll, select, epoll, eventfd, pipes and Linux AIO act on descriptors the process holds',
    calls: words(`
      poll ppoll select pselect6 epoll_create epoll_create1 epoll_ctl epoll_wait epoll_pwait epoll_pwait2
      eventfd eventfd2 pipe pipe2 io_setup io_destroy io_submit io_cancel io_getevents io_pgetevents`),
  },
  {
    name: 'self-restriction',
    rule: 'allow',
    why: 'a tool may narrow itself further (its own seccomp filter, its own Landlock domain), never widen',
    calls: words('seccomp landlock_create_ruleset landlock_add_rule landlock_restrict_self'),
  },
  {
    name: 'sockets held',
    rule: 'allow',
    why: 'act on sockets the process already holds; which sockets it can have is decided by socket and socketpair',
    calls: words(`
      connect accept accept4 bind listen shutdown getsockname getpeername getsockopt setsockopt sendto
      recvfrom sendmsg recvmsg sendmmsg recvmmsg`),
  },
  {
    name: 'socket',
    rule: 'socket',
    why: 'a unix socket reaches by path or abstract name past the grants (and the host abstract namespace under net host); net none is a second wall behind the network namespace; netlink beyond NETLINK_ROUTE (netfilter, generic, audit) configures the host and is kernel attack surface; net stream keeps only TCP, the one protocol Landlock port rules confine to a proxy (UDP and DNS, SCTP and MPTCP streams, raw sockets pass them)',
    calls: ['socket'],
  },
  {
    name: 'socketpair',
    rule: 'socketpair',
    why: 'a stream or seqpacket pair is stuck to its peer (EISCONN; seqpacket ignores an address); a datagram pair reaches any named datagram socket with sendto or connect (F3); the pairs a launch is given are made by the fork server, not by the tool',
    calls: ['socketpair'],
  },
  {
    name: 'ioctl',
    rule: 'ioctl',
    why: 'TIOCSTI types into the terminal a tool may share with its caller; TIOCLINUX reaches the console',
    calls: ['ioctl'],
  },
  {
    name: 'personality',
    rule: 'personality',
    why: 'READ_IMPLIES_EXEC and the foreign execution domains weaken the next exec; the rest is what Docker allows',
    calls: ['personality'],
  },
  {
    name: 'clone',
    rule: 'clone',
    why: 'a new user namespace gives back every capability inside it, nf_tables netlink included (F11); bwrap adds --disable-userns, Landlock had nothing',
    calls: ['clone'],
  },
  {
    name: 'unshare',
    rule: 'unshare',
    why: 'the same namespaces as clone, plus the time namespace; unsharing files, fs or SysV undo lists stays',
    calls: ['unshare'],
  },
  {
    name: 'clone3',
    rule: 'enosys',
    why: 'its flags sit behind a pointer seccomp cannot read; ENOSYS makes glibc (threads, posix_spawn) fall back to clone',
    calls: ['clone3'],
  },
  {
    name: 'namespaces and mounts',
    rule: 'eperm',
    why: "the mount tree and the namespaces are the mechanism's; statmount and listmount would show the host layout that Landlock rules leave unreadable",
    calls: words(`
      setns mount umount2 pivot_root chroot move_mount open_tree open_tree_attr fsopen fsconfig fsmount
      fspick mount_setattr statmount listmount quotactl quotactl_fd`),
  },
  {
    name: 'SysV IPC and POSIX message queues',
    rule: 'ipc',
    why: "allowed in bwrap's own IPC namespace; under Landlock they are the host's, keyed by guessable ids and names and shared with every process of the same user",
    calls: words(`
      shmget shmat shmctl shmdt semget semop semtimedop semctl msgget msgsnd msgrcv msgctl mq_open
      mq_unlink mq_timedsend mq_timedreceive mq_notify mq_getsetattr`),
  },
  {
    name: 'keyrings',
    rule: 'eperm',
    why: "the kernel keyrings are not namespaced: root's and other sessions' keys",
    calls: words('add_key request_key keyctl'),
  },
  {
    name: 'kernel programs and tracing',
    rule: 'eperm',
    why: 'bpf and perf_event_open program and observe the kernel; userfaultfd stalls kernel copies at will, the usual way to win an exploit race',
    calls: words('bpf perf_event_open userfaultfd'),
  },
  {
    name: 'other processes',
    rule: 'eperm',
    why: "another process's memory, descriptors or state: other tools run as the same sandbox user",
    calls: words('ptrace process_vm_readv process_vm_writev kcmp pidfd_getfd process_madvise'),
  },
  {
    name: 'NUMA placement',
    rule: 'eperm',
    why: "migrate_pages and move_pages act on other processes' pages; Docker grants the family only with CAP_SYS_NICE, and libnuma reads EPERM as no NUMA",
    calls: words('mbind set_mempolicy get_mempolicy set_mempolicy_home_node migrate_pages move_pages'),
  },
  {
    name: 'the machine',
    rule: 'eperm',
    why: "the host's kernel, clock, names, console, log and swap; each needs a capability no tool holds, and refusing them first keeps their code out of reach",
    calls: words(`
      reboot kexec_load kexec_file_load init_module finit_module delete_module swapon swapoff acct
      syslog settimeofday clock_settime sethostname setdomainname vhangup lookup_dcookie fanotify_init
      iopl ioperm modify_ldt`),
  },
  {
    name: 'file handles',
    rule: 'eperm',
    why: 'open_by_handle_at opens any file of a filesystem by handle, past every path rule (the Shocker escape)',
    calls: words('name_to_handle_at open_by_handle_at'),
  },
  {
    name: 'io_uring',
    rule: 'enosys',
    why: "it opens and connects sockets without socket(2) and is the kernel's busiest source of privilege escalations; ENOSYS so libuv, tokio and liburing fall back",
    calls: words('io_uring_setup io_uring_enter io_uring_register'),
  },
  {
    name: 'not reviewed yet',
    rule: 'enosys',
    why: "newer than Docker's review (LSM attributes 6.8, file_getattr 6.17); callers fall back to /proc/self/attr and the FS_IOC_FSGETXATTR ioctl",
    calls: words('lsm_get_self_attr lsm_set_self_attr lsm_list_modules file_getattr file_setattr'),
  },
  {
    name: 'obsolete',
    rule: 'enosys',
    why: 'not implemented on 64-bit kernels, or long replaced (ustat, sysfs): ENOSYS is what the kernel itself answers',
    calls: words(`
      uselib _sysctl create_module get_kernel_syms query_module nfsservctl getpmsg putpmsg afs_syscall
      tuxcall security set_thread_area get_thread_area epoll_ctl_old epoll_wait_old vserver ustat sysfs`),
  },
]
