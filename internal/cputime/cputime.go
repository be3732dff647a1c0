// Package cputime reads the CPU time the process has used, for the
// benchmarks' cpu-ns/op figures and the load generator's own cost: on a
// machine shared with other work, CPU time per request moves far less
// than wall-clock time per request, which counts the time other processes
// hold the cores. A leaf package: it imports nothing of the module.
package cputime
