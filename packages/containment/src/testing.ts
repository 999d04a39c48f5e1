// What tests of containment need: a box (a cgroup with a small pids.max and memory limit) to run
// anything that could exhaust the host in, and a forker.
export { box, boxesHere, type CgroupBox, forker } from './internal/box.js'
