/**
 * What places each launch in its cgroups before its exec (decision 0097; a `Spawner`'s `placement`,
 * `@toolvisor/launch-native`'s fork server): `Containment` has it make the trees of the launches to
 * come, and remove ended ones, off the runtime's event loop.
 */
export interface CgroupPlacement {
  warm(plan: WarmPlan): Promise<WarmAnswer>
  /** How many of `dirs` are still there; undefined when it could not be asked. */
  remove(dirs: readonly string[]): Promise<number | undefined>
}

/** A tree of cgroups made ahead, and the warm child waiting there for the launch that joins it. */
export interface WarmPlan {
  /** The v2 cgroup the warm child is born in (clone3 CLONE_INTO_CGROUP), when there is one. */
  readonly bornIn: string | undefined
  /** The `cgroup.procs` files it joins (the v1 hierarchies). */
  readonly procsFiles: readonly string[]
  /** The directories made first, in order. */
  readonly make: readonly string[]
  /** The limit files written in them: file, value, and whether the host may lack the file. */
  readonly writes: readonly (readonly [file: string, value: string, optional?: boolean])[]
}

/** What a warm request was answered with (`made` false and no `problem`: the placement is gone). */
export interface WarmAnswer {
  readonly made: boolean
  /** The warm child waiting in the tree; undefined: none (the launch joins its cgroups itself). */
  readonly pid: number | undefined
  /** Why the tree could not be made (nothing of it is left). */
  readonly problem?: string
}
