// Package sysinfo detects facts about the machine it runs on: the DMI vendor
// and model, the CPUs (model, sockets, cores, threads, nominal frequency),
// the total memory, the accelerators (NVIDIA GPUs through nvidia-smi, Huawei
// Ascend NPUs through npu-smi), the operating system and kernel, and whether
// it runs in a container or a virtual machine, the network interfaces
// (NICs: speed, duplex, MTU, state, driver, PCI address, NUMA node,
// addresses) and the interface traffic to an address leaves by (RouteTo),
// and the memory limits of the process (MemoryLimit: the machine's memory, the cgroup v2 and v1 limits
// of its cgroup and their ancestors, RLIMIT_AS and RLIMIT_DATA).
//
// Detection never fails: a fact that cannot be read stays zero, and a probe
// that exists but fails (a command exiting non-zero or running past its
// timeout) is recorded in Notes. Detect reads the real machine; a Detector
// with its own file system root and command runner reads fixture trees in
// tests, with the same code path.
//
// Package gbt turns these facts into the GB/T 45087 test information
// (GB-7.7.1-a, GB-7.7.1-g) and package report shows them; sysinfo itself
// imports nothing from aimeter.
package sysinfo
