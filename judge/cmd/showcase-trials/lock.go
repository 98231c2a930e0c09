package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// lockFile is the lock a runner holds on its run's folder.
const lockFile = ".runner.lock"

// errLocked is what the platform's lock says when another holds it.
var errLocked = errors.New("locked")

// lockRun takes the run's folder for this runner, or says which runner
// holds it. The lock is the kernel's (flock, or LockFileEx on Windows) on
// a file in the folder: it goes with the process, however it ends, and the
// file keeps the holder's PID for the message.
func lockRun(dir string) (unlock func(), err error) {
	name := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := lock(f); err != nil {
		holder, _ := os.ReadFile(name)
		f.Close()
		if errors.Is(err, errLocked) {
			return nil, fmt.Errorf("%s is in use by another showcase-trials (%s): one runner a run at a time", dir, strings.TrimSpace(string(holder)))
		}
		return nil, fmt.Errorf("locking %s: %w", name, err)
	}
	_ = f.Truncate(0)
	_, _ = fmt.Fprintf(f, "pid %d\n", os.Getpid())
	return func() { f.Close() }, nil
}
