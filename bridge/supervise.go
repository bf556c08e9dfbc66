package bridge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"
)

// parentPollInterval is how often the process checks that the JVM lives.
const parentPollInterval = 500 * time.Millisecond

// ErrParentGone: the JVM that started this process has exited.
var ErrParentGone = errors.New("bridge: the parent process (the Flink TaskManager JVM) is gone")

// ErrTerminated: SIGTERM or SIGINT asked the process to stop.
var ErrTerminated = errors.New("bridge: terminated by signal")

// watchParent cancels ctx with ErrParentGone once pid no longer exists. It
// polls with kill(pid, 0) (PR_SET_PDEATHSIG would need golang.org/x/sys,
// and it fires on the death of the forking thread, not of the JVM). It
// returns when ctx is done.
func watchParent(ctx context.Context, cancel context.CancelCauseFunc, pid int, every time.Duration) {
	if pid <= 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if !processAlive(pid) {
				cancel(fmt.Errorf("%w (pid %d); exiting so that no orphaned agent process keeps running", ErrParentGone, pid))
				return
			}
		}
	}
}

// processAlive reports whether a process with this pid exists and is not a
// zombie (an exited process its parent has not reaped yet).
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	// Linux: /proc/<pid>/stat is "pid (comm) state ..."; comm may hold
	// spaces and parentheses, so the state follows the last ')'.
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no procfs: kill(pid, 0) is all we know
	}
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] != 'Z' && b[i+2] != 'X'
	}
	return true
}

// watchSignals cancels ctx with ErrTerminated on SIGTERM or SIGINT. The
// server then stops gracefully: outputs already produced are sent, the
// connection is closed. The returned function stops the watch.
func watchSignals(cancel context.CancelCauseFunc) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			cancel(fmt.Errorf("%w %v", ErrTerminated, s))
		case <-done:
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}

// applyMemoryLimit sets the Go soft memory limit (as GOMEMLIMIT does) when
// limit > 0 and returns the previous one.
func applyMemoryLimit(limit int64) int64 {
	if limit <= 0 {
		return debug.SetMemoryLimit(-1)
	}
	return debug.SetMemoryLimit(limit)
}
