//go:build !unix

package main

// raiseFDLimit does nothing here: the system has no descriptor limit to
// raise (Windows counts sockets as handles, with no per-process soft limit).
func raiseFDLimit() {}
