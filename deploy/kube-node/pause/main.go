//go:build linux

// Command pause is the sandbox ("pause") container of every Pod on the
// project's single-node cluster (make kube-up), and the process that holds
// that node's own network and mount namespaces. It does what Kubernetes'
// pause does: wait, reap the children that end up under it, and exit on
// SIGINT or SIGTERM. No image can be pulled here, so it is built from this
// source into an image FROM scratch, like the showcase's own.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 16)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range signals {
		if s != syscall.SIGCHLD {
			return
		}
		reap()
	}
}

// reap collects every child that has exited, so that none stays a zombie
// in a Pod whose processes share its PID namespace.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
