package bridge

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestWatchParent(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep binary:", err)
	}
	pid := cmd.Process.Pid
	if !processAlive(pid) || !processAlive(os.Getpid()) {
		t.Fatal("a live process is reported dead")
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	go watchParent(ctx, cancel, pid, 20*time.Millisecond)
	time.Sleep(60 * time.Millisecond)
	if ctx.Err() != nil {
		t.Fatal("cancelled while the parent lives")
	}
	_ = cmd.Process.Kill()
	// Not reaped yet: a zombie counts as gone.
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("parent death not noticed")
	}
	if !errors.Is(context.Cause(ctx), ErrParentGone) {
		t.Fatalf("cause %v", context.Cause(ctx))
	}
	_ = cmd.Wait()
	if processAlive(pid) {
		t.Fatal("a reaped process is reported alive")
	}
}

func TestMemoryLimit(t *testing.T) {
	prev := applyMemoryLimit(1 << 40)
	defer applyMemoryLimit(prev)
	if got := applyMemoryLimit(0); got != 1<<40 {
		t.Fatalf("limit was %d", got)
	}
}
