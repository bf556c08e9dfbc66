package bridge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/arrowio"
	"github.com/flinkgo/flinkgo/examples/orderscoring"
)

// TestBinaryEndToEnd builds cmd/orderscoring and runs it as the operator
// would: describe, then a subprocess with the environment set, through the
// whole protocol to CLOSE and exit code 0.
func TestBinaryEndToEnd(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "orderscoring")
	build := exec.Command("go", "build", "-o", bin, "./cmd/orderscoring")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/orderscoring: %v\n%s", err, out)
	}

	// describe
	out, err := exec.Command(bin, "describe").Output()
	if err != nil {
		t.Fatalf("describe: %v", err)
	}
	var m Manifest
	if err := json.Unmarshal(out, &m); err != nil || len(m.Agents) != 1 || m.Agents[0].Name != orderscoring.AgentName || len(m.Agents[0].Output) != 6 {
		t.Fatalf("describe: %v\n%s", err, out)
	}

	// Without the environment: exit 2 and a message naming the variables.
	var stderr bytes.Buffer
	cmd := exec.Command(bin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	cmd.Stderr = &stderr
	if err := cmd.Run(); exitCode(err) != ExitUsage || !strings.Contains(stderr.String(), EnvSocket) ||
		!strings.Contains(stderr.String(), "this binary is started by the flinkgo Flink operator") {
		t.Fatalf("without env: %v, stderr %q", err, stderr.String())
	}

	// As the operator starts it.
	p := startBinary(t, bin, os.Getpid())
	j := p.jvm
	opts := map[string]string{"go.memory.limit": "256m", "num-async-threads": "2"}
	j.handshake(j.defaultOpen(orderscoring.AgentName, opts), nil, nil)
	j.data(order("alice", 1, 10), order("alice", 2, 100))
	j.send(&EndInput{})
	c := j.collect(FrameEndAck)
	want := [][]any{scored("alice", 1, 1, 10, 0.5), scored("alice", 2, 2, 55, 1)}
	if !reflect.DeepEqual(c.rows, want) {
		t.Fatalf("outputs %v, want %v", c.rows, want)
	}
	j.send(&Close{})
	if code := p.exit(); code != ExitOK {
		t.Fatalf("exit code %d after CLOSE\nstderr:\n%s", code, p.stderr.String())
	}
	log := p.stderr.String()
	for _, part := range []string{"subtask=0", "memory limit set", "ready"} {
		if !strings.Contains(log, part) {
			t.Errorf("stderr log lacks %q:\n%s", part, log)
		}
	}

	// SIGTERM: graceful, exit 0.
	p = startBinary(t, bin, os.Getpid())
	p.jvm.handshake(p.jvm.defaultOpen(orderscoring.AgentName, nil), nil, nil)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.exit(); code != ExitOK {
		t.Fatalf("exit code %d after SIGTERM\nstderr:\n%s", code, p.stderr.String())
	}

	// The parent dies: the process exits by itself, non-zero.
	parent := exec.Command("sleep", "30")
	if err := parent.Start(); err != nil {
		t.Skip("no sleep binary:", err)
	}
	p = startBinary(t, bin, parent.Process.Pid)
	p.jvm.handshake(p.jvm.defaultOpen(orderscoring.AgentName, nil), nil, nil)
	_ = parent.Process.Kill()
	_ = parent.Wait()
	if code := p.exit(); code != ExitFailure || !strings.Contains(p.stderr.String(), "parent process") {
		t.Fatalf("exit code %d after the parent died\nstderr:\n%s", code, p.stderr.String())
	}
}

type binProc struct {
	cmd    *exec.Cmd
	jvm    *fakeJVM
	stderr *bytes.Buffer
	exited chan error
}

// startBinary starts bin with the operator's environment and accepts its
// connection.
func startBinary(t *testing.T, bin string, parentPID int) *binProc {
	t.Helper()
	path := testSocketPath(t)
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	token := strings.Repeat("5a", 32)
	p := &binProc{cmd: exec.Command(bin), stderr: &bytes.Buffer{}, exited: make(chan error, 1)}
	p.cmd.Env = []string{EnvSocket + "=" + path, EnvToken + "=" + token, EnvProtocol + "=1",
		EnvParentPID + "=" + strconv.Itoa(parentPID)}
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() { _ = p.cmd.Process.Kill() })
	conn, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	in, err := arrowio.NewInputBuilder(orderCols, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.Release)
	p.jvm = &fakeJVM{t: t, conn: conn, br: bufio.NewReader(conn), bw: bufio.NewWriter(conn), in: in, token: token}
	return p
}

// exit waits (10 s at most) for the process and returns its exit code.
func (p *binProc) exit() int {
	select {
	case err := <-p.exited:
		return exitCode(err)
	case <-time.After(10 * time.Second):
		return -2
	}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}
