import { MCP_DEFAULT_LIMITS } from '@toolvisor/mcp-server'
import { z } from 'zod'
import { notifyTargetOf } from '../notify/target.js'

/**
 * Every flag of every command, in one table: what parses the command line, what `--help` prints
 * and which key of `toolvisor.json` each flag sets all come from here (decision 0080). A flag is
 * either the flag of a key (flags win over the file) or per-invocation, with the reason.
 */

/** The commands of `toolvisor` that take flags. */
export type CommandName = 'call' | 'check' | 'demo' | 'describe' | 'mcp' | 'serve'

/** How a flag's value names a path: relative to the working directory, or (in the file) to the file. */
export type PathKind = 'file' | 'address'

/** What every flag says of itself. */
export interface FlagBase {
  /** The commands that take the flag. */
  readonly commands: readonly CommandName[]
  /** The value's placeholder in `--help` (`FILE`, `N`); absent, the flag is a switch. */
  readonly arg?: string
  /** One line of help (wrapped when printed). */
  readonly help: string
  /** Repeatable: each use adds an item (to the file's items). */
  readonly multiple?: boolean
  /** The value is a path (`file`) or an address whose `unix:PATH` is one (`address`). */
  readonly path?: PathKind
  /** The one-letter alias. */
  readonly short?: string
}

/** A flag of a key this CLI owns: the key's schema is the flag's value. */
export interface SectionFlag extends FlagBase {
  /** The flag, without its dashes. */
  readonly flag: string
  /** The value's schema, in the file and on the command line alike. */
  readonly value: z.ZodType
}

/** A flag of a key a package's schema owns (`stateDir`, `bash.profile`): the schema is the package's. */
export interface KeyFlag extends FlagBase {
  readonly flag: string
  /** The key's dot path in `toolvisor.json`. */
  readonly key: string
}

/** A flag about one invocation only: it has no key, and says why. */
export interface InvocationFlag extends FlagBase {
  readonly flag: string
  /** Why it is no configuration (decision 0080). */
  readonly perInvocation: string
}

/** Every command that takes flags. */
export const COMMANDS: readonly CommandName[] = ['call', 'check', 'demo', 'describe', 'mcp', 'serve']
const ALL = COMMANDS
const SERVERS: readonly CommandName[] = ['mcp', 'serve']
const whole = (min: number) => z.number().int().min(min).max(Number.MAX_SAFE_INTEGER)
const limit = (option: keyof typeof MCP_DEFAULT_LIMITS) => `default ${MCP_DEFAULT_LIMITS[option]}`

/** The sections of `toolvisor.json` this CLI owns, key by key: one line per flag. */
// biome-ignore format: one flag a line, so that adding one is adding a line
export const SECTION_FLAGS = {
  serve: {
    listen: { flag: 'listen', commands: ['serve'], arg: 'ADDR', path: 'address', value: z.string().regex(/^(unix:.+|(\[[0-9a-fA-F:]+\]|[^:/]+):\d{1,5})$/, 'expected HOST:PORT (127.0.0.1:8765) or unix:PATH'), help: '127.0.0.1:PORT (loopback; PORT 0 picks one), or unix:PATH (mode 0600)' },
    tokenFile: { flag: 'token-file', commands: ['serve'], arg: 'FILE', path: 'file', value: z.string().min(1), help: 'the bearer token (default: STATE_DIR/serve.token, made with mode 0600 if missing)' },
    allowOrigins: { flag: 'allow-origin', commands: ['serve'], arg: 'ORIGIN', multiple: true, value: z.array(z.string().regex(/^[a-z][a-z0-9+.-]*:\/\/[^/\s]+$/, 'expected an origin: scheme://host[:port], no path')), help: "a browser origin allowed to call (repeatable; the listener's own always is)" },
    allowRemote: { flag: 'allow-remote', commands: ['serve'], value: z.boolean(), help: 'listen on an address other than loopback (the token is then all that guards it)' },
    sessionTtlSeconds: { flag: 'session-ttl', commands: ['serve'], arg: 'SECONDS', value: whole(1), help: 'how long an idle session lives (default 900)' },
    uiControl: { flag: 'ui-control', commands: ['serve'], value: z.boolean(), help: 'the operator page may stop a process, end a session (each confirmed, logged) and type into a terminal task' },
    maxSessions: { flag: 'max-sessions', commands: ['serve'], arg: 'N', value: whole(1), help: 'MCP sessions at once; an initialize past it is answered 503 (default 1024)' },
    maxBodyBytes: { flag: 'max-body-bytes', commands: ['serve'], arg: 'N', value: whole(1), help: 'the largest request body; a larger one is answered 413 (default 4 MiB)' },
    headersTimeoutMs: { flag: 'headers-timeout-ms', commands: ['serve'], arg: 'N', value: whole(1), help: 'how long a client may take to send its headers (default 10000)' },
    requestTimeoutMs: { flag: 'request-timeout-ms', commands: ['serve'], arg: 'N', value: whole(1), help: 'how long a client may take to send its whole request (default 60000)' },
    workspaces: { flag: 'workspace-root', commands: ['serve'], arg: 'DIR', path: 'file', multiple: true, value: z.array(z.string().min(1)), help: "a directory a client may name as its session's workspace, or one inside it (repeatable; a bridge's --workspace, the x-toolvisor-workspace header); none: every session works in serve's own directory" },
    keepProcesses: { flag: 'keep-processes', commands: ['serve'], value: z.boolean(), help: 'every service, stream task and background bash command is held by a keeper of its own (toolvisor-keeper), so a restart of serve (SIGTERM, an upgrade, a crash) leaves it running and the next serve on the same state directory re-adopts it: same handle, session, output, readers and mail (decision 0113)' },
    keeperReapSeconds: { flag: 'keeper-reap-after', commands: ['serve'], arg: 'SECONDS', value: whole(1), help: 'with --keep-processes: how long a keeper whose daemon never comes back keeps its process before it kills it and goes (default 86400)' },
    notify: { flag: 'notify', commands: ['serve'], arg: 'unix:PATH|URL', path: 'address', value: z.string().refine((text) => notifyTargetOf(text) !== undefined, 'expected unix:PATH (a unix stream socket) or an http:// or https:// URL'), help: 'push the harness one keyed item per task (running, done, clear): JSON lines over a unix stream socket, or a JSON POST per item to an http(s) URL (decision 0051)' },
  },
  mcp: {
    session: { flag: 'session', commands: ['mcp'], arg: 'NAME', value: z.string().min(1), help: 'the session this client runs in (default a fresh mcp-<uuid>). A stable name lets the client, after a crash, see the tasks the dead server lost; with --connect, every turn with the same name shares its processes' },
    allowEmpty: { flag: 'allow-empty', commands: ['mcp'], value: z.boolean(), help: 'serve a toolbox that holds no tool (else: exit 2, as for a missing one)' },
    loadFirst: { flag: 'load-first', commands: ['mcp'], value: z.boolean(), help: 'load every tool before answering initialize (at most the describe timeout, 10 s); by default the tools are announced as they load, and a tools/list waits for them' },
    connect: { flag: 'connect', commands: ['mcp'], arg: 'ADDR', path: 'address', value: z.string().min(1), help: 'be a bridge to toolvisor serve at HOST:PORT, a URL, or unix:PATH: no process management here' },
    tokenFile: { flag: 'token-file', commands: ['mcp'], arg: 'FILE', path: 'file', value: z.string().min(1), help: "with --connect: the daemon's bearer token (default STATE_DIR/serve.token)" },
    workspace: { flag: 'workspace', commands: ['mcp'], arg: 'DIR', path: 'file', value: z.string().min(1), help: "with --connect: the session's working directory (where its bash commands run), which the daemon takes when it lies in one of its --workspace-root directories" },
  },
  limits: {
    maxMessageBytes: { flag: 'max-message-bytes', commands: ['mcp'], arg: 'N', value: whole(1), help: `the largest message the client may send (${limit('maxMessageBytes')}); a longer one is answered with an error and skipped` },
    maxQueuedBytes: { flag: 'max-queued-bytes', commands: ['mcp'], arg: 'N', value: whole(1), help: `output that may wait for a client that does not read it (${limit('maxQueuedBytes')}); progress is dropped first, then the session ends` },
    maxConcurrentCalls: { flag: 'max-concurrent-calls', commands: SERVERS, arg: 'N', value: whole(1), help: `calls of one session that run at once (${limit('maxConcurrentCalls')})` },
    maxQueuedCalls: { flag: 'max-queued-calls', commands: SERVERS, arg: 'N', value: whole(0), help: `calls that wait for a place (${limit('maxQueuedCalls')}); more are refused` },
    progressPerSecond: { flag: 'progress-per-second', commands: SERVERS, arg: 'N', value: whole(1), help: `progress notifications a second per call (${limit('progressPerSecond')}) after a burst of --progress-burst; the others are coalesced` },
    progressBurst: { flag: 'progress-burst', commands: SERVERS, arg: 'N', value: whole(1), help: `progress notifications a call may send at once (${limit('progressBurst')})` },
  },
  call: {
    session: { flag: 'session', commands: ['call'], arg: 'ID', value: z.string().min(1), help: 'the session the call belongs to (AGENT_SESSION_ID; default cli)' },
    progress: { flag: 'progress', commands: ['call'], value: z.boolean(), help: 'print each event to stderr as it arrives' },
    yieldMs: { flag: 'yield-ms', commands: ['call'], arg: 'N', value: whole(0), help: 'answer with the running placeholder after N ms (stream tools; default: wait for the end)' },
    connect: { flag: 'connect', commands: ['call'], arg: 'ADDR', path: 'address', value: z.string().min(1), help: 'call TOOL (by its model-facing name) in the toolvisor serve at HOST:PORT, a URL or unix:PATH, in the session --session names: what it starts stays there for the next call (processes, TOOL__send)' },
    tokenFile: { flag: 'token-file', commands: ['call'], arg: 'FILE', path: 'file', value: z.string().min(1), help: "with --connect: the daemon's bearer token (default STATE_DIR/serve.token)" },
    workspace: { flag: 'workspace', commands: ['call'], arg: 'DIR', path: 'file', value: z.string().min(1), help: "with --connect: the session's working directory, which the daemon takes when it lies in one of its --workspace-root directories" },
  },
} as const satisfies Record<string, Record<string, SectionFlag>>

/** The flags of keys the packages' schemas own (the top-level runtime keys, the bash section). */
// biome-ignore format: one flag a line
export const KEY_FLAGS: readonly KeyFlag[] = [
  { flag: 'toolbox', key: 'toolboxes', commands: ALL, arg: 'DIR', multiple: true, path: 'file', help: 'a directory of tools (repeatable)' },
  { flag: 'state-dir', key: 'stateDir', commands: ALL, arg: 'DIR', path: 'file', help: 'where run records, spill files, the mail journal and the token go (default ~/.local/state/toolvisor)' },
  { flag: 'envdir-root', key: 'envdirRoot', commands: ALL, arg: 'DIR', path: 'file', help: 'where runtime.envdir subdirectories are found' },
  { flag: 'envdir-permissions', key: 'envdirPermissions', commands: ALL, arg: 'refuse|warn', help: 'an envdir root that group or others may read or write: refuse it at start (default), or warn on stderr and use it' },
  { flag: 'sandbox', key: 'sandbox', commands: ALL, arg: 'MECHANISM', help: 'bwrap, landlock or auto: how runtime.sandbox declarations are enforced' },
  { flag: 'sandbox-user', key: 'sandboxUser', commands: ALL, arg: 'NAME', help: 'who sandboxed tools run as when toolvisor is root (default nobody)' },
  { flag: 'run-as', key: 'runAs', commands: ALL, arg: 'MECHANISM', help: 'setpriv or runuser: how runtime.run_as is honoured' },
  { flag: 'protect', key: 'protectedPaths', commands: ALL, arg: 'PATH', multiple: true, help: 'a path kept read-only inside every writable grant, beside the defaults (relative to the grant; a directory ends in /; repeatable)' },
  { flag: 'run-as-allow', key: 'runAsAllow', commands: ALL, arg: 'USER', multiple: true, help: 'a user a tool may name in its runtime.run_as (repeatable); * is any user but root, which only its own name allows; none by default' },
  { flag: 'backend', key: 'backends', commands: ALL, arg: 'CAP=NAME', multiple: true, help: 'move backend NAME of capability CAP first (repeatable)' },
  { flag: 'mail-bytes', key: 'mailBytes', commands: SERVERS, arg: 'N', help: `the most bytes of the session's mail folded into each tool result (default ${MCP_DEFAULT_LIMITS.mailBytes}); 0 never folds, the model reads it with processes {"command":"wait"}` },
  { flag: 'bash', key: 'bash.enabled', commands: SERVERS, help: "serve the bash tools too (bash, bash_output, bash_kill), running commands as toolvisor's user in its working directory" },
  { flag: 'bash-profile', key: 'bash.profile', commands: SERVERS, arg: 'NAME', help: 'dsh (default), hyperhive (run, status, kill, send), toolnexus (bash, bash_output, kill_shell, write_stdin) or codex (exec_command, write_stdin): whose words the bash tools speak; implies --bash' },
  { flag: 'bash-sandbox', key: 'bash.sandbox', commands: SERVERS, arg: 'MODE', help: "read-only, workspace-write or danger-full-access: the bash commands' standing sandbox mode, run by --sandbox MECHANISM (refused at start-up when it cannot honour it); a command may ask the user for more once; implies --bash" },
]

/** The flags that are about one invocation, and why each has no key (decision 0080). */
// biome-ignore format: one flag a line
export const INVOCATION_FLAGS: readonly InvocationFlag[] = [
  { flag: 'config', commands: ALL, arg: 'FILE', help: 'read toolvisor.json (flags override it)', perInvocation: 'it names the file; a file cannot name itself' },
  { flag: 'command', commands: ['call'], arg: 'NAME', help: 'the sub-command to run, for a tool with commands', perInvocation: "it picks a sub-command of the TOOL on the same line; it means nothing without it" },
  { flag: 'probe', commands: ['check'], help: 'run every probe now, ignoring cached results', perInvocation: "it asks for a fresh measurement now; how long results are kept is the file's checkTtlMs" },
  { flag: 'reap', commands: ['check'], help: "with --probe: end every kept process no serve holds (its keeper and what it runs, SIGKILL); the next start reports each lost to its session", perInvocation: 'it acts once, on what it finds now' },
  { flag: 'json', commands: ['check', 'describe'], help: 'print one JSON document instead of text', perInvocation: 'the output format is the caller of this run’s choice: a script parses what it asked for' },
  { flag: 'help', commands: ALL, short: 'h', help: 'this help', perInvocation: 'it prints help and runs nothing' },
]
