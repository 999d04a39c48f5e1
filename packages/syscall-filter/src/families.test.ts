import { describe, expect, it } from 'vitest'
import { ARGUMENT_RULES, SYSCALL_FAMILIES } from './families.js'
import { SYSCALL_NUMBERS } from './numbers.js'

const everyCall = SYSCALL_FAMILIES.flatMap((family) => family.calls)
const ruleOf = (call: string) => SYSCALL_FAMILIES.find((family) => family.calls.includes(call))?.rule

describe('the reviewed families', () => {
  it('hold every call of both syscall tables exactly once, and nothing else', () => {
    const named = new Set([...SYSCALL_NUMBERS.x86_64.keys(), ...SYSCALL_NUMBERS.aarch64.keys()])
    const twice = everyCall.filter((call, i) => everyCall.indexOf(call) !== i)
    expect(twice).toEqual([])
    expect([...named].filter((call) => !everyCall.includes(call))).toEqual([])
    expect(everyCall.filter((call) => !named.has(call))).toEqual([])
  })

  it('each says why, and each argument rule is described', () => {
    for (const family of SYSCALL_FAMILIES) expect(family.why.length, family.name).toBeGreaterThan(30)
    for (const family of SYSCALL_FAMILIES) {
      if (!['allow', 'eperm', 'enosys', 'ipc'].includes(family.rule)) {
        expect(ARGUMENT_RULES[family.rule as keyof typeof ARGUMENT_RULES], family.name).toBeDefined()
      }
    }
  })

  it('answer the calls of the issue as it asks (F3, F11 and the families listed there)', () => {
    expect(ruleOf('socketpair')).toBe('socketpair')
    expect(ruleOf('socket')).toBe('socket')
    expect([ruleOf('clone'), ruleOf('unshare'), ruleOf('clone3'), ruleOf('setns')]).toEqual([
      'clone',
      'unshare',
      'enosys',
      'eperm',
    ])
    const refused =
      `mount umount2 pivot_root move_mount open_tree fsopen fsconfig fsmount fspick mount_setattr
      add_key request_key keyctl bpf perf_event_open userfaultfd ptrace process_vm_readv process_vm_writev
      kexec_load kexec_file_load init_module finit_module delete_module reboot swapon swapoff acct quotactl
      lookup_dcookie name_to_handle_at open_by_handle_at iopl ioperm syslog`.split(/\s+/)
    expect(refused.filter((call) => ruleOf(call) !== 'eperm')).toEqual([])
    expect(['io_uring_setup', 'io_uring_enter', 'io_uring_register'].map(ruleOf)).toEqual([
      'enosys',
      'enosys',
      'enosys',
    ])
    const sysv = 'shmget shmat shmctl shmdt semget semop semtimedop semctl msgget msgsnd msgrcv msgctl'.split(
      ' ',
    )
    expect(sysv.filter((call) => ruleOf(call) !== 'ipc')).toEqual([])
    expect([ruleOf('ioctl'), ruleOf('personality')]).toEqual(['ioctl', 'personality'])
  })
})
