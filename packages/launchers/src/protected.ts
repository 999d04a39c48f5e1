/**
 * What no writable grant lets a tool change (decision 0096): the files and folders that the user's
 * own programs run later, unconfined, without the user choosing to run them. A workspace's code is
 * the agent's to edit, and the user runs it knowingly; these run on their own: git's hooks and the
 * commands its configuration names when the user commits, a shell's start-up files when a
 * terminal opens, direnv's `.envrc` on `cd`, an editor's tasks and settings when the folder opens,
 * an agent client's project configuration (its MCP servers, its hooks) when it starts there.
 * Relative to the root of each writable grant; a directory ends in `/`.
 */
export const PROTECTED_PATHS: readonly string[] = Object.freeze([
  // git: hooks run on commit, checkout, merge; the configuration names programs (core.fsmonitor,
  // core.hooksPath, core.sshCommand, aliases, filter and diff drivers); submodules keep both again.
  '.git/hooks/',
  '.git/config',
  '.git/modules/',
  '.gitconfig',
  // shells source these when a terminal, a login or an ssh session starts
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.bash_logout',
  '.profile',
  '.zshrc',
  '.zshenv',
  '.zprofile',
  '.zlogin',
  // direnv runs it on cd; npm runs what .npmrc names (script-shell, node-options)
  '.envrc',
  '.npmrc',
  // editors run tasks and the programs their settings name when the folder opens
  '.vscode/',
  '.idea/',
  // agent clients start the MCP servers and hooks of a project's configuration
  '.mcp.json',
  '.claude/',
  '.codex/',
  '.cursor/',
  // a home as a workspace: keys that let others in, and ProxyCommand in its config
  '.ssh/',
])

/** The protected paths of a runtime: the default ones, and the operator's own after them. */
export function protectedPaths(extra: readonly string[] = []): readonly string[] {
  return [...new Set([...PROTECTED_PATHS, ...extra])]
}
