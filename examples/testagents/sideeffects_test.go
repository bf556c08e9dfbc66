package testagents

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/operator"
	"github.com/flinkgo/flinkgo/statestore"
)

// sideCore runs the sideeffects agent on a core with store, tasks on
// goroutines.
type sideCore struct {
	t       *testing.T
	c       *operator.Core
	results chan *operator.Result
	running int
	out     [][]any
}

func newSideCore(t *testing.T, store statestore.ActionStore) *sideCore {
	cfg := operator.DefaultConfig()
	cfg.Seed = 11
	c, err := operator.NewCore(SideEffects(), cfg, store)
	if err != nil {
		t.Fatal(err)
	}
	return &sideCore{t: t, c: c, results: make(chan *operator.Result, 8)}
}

func (s *sideCore) step() {
	for s.c.HasReady() {
		rd := s.c.Ready()
		if rd.Err != nil {
			s.t.Fatalf("core failed: %v", rd.Err)
		}
		for _, e := range rd.Emits {
			if e.Kind == operator.EmitOutput {
				s.out = append(s.out, append([]any(nil), e.Values...))
			}
		}
		for _, tk := range rd.Tasks {
			s.running++
			go func(tk *operator.Task) { s.results <- tk.Run() }(tk)
		}
	}
}

func (s *sideCore) input(id int64, customer, mode, log string) {
	row := operator.FieldsRow{{Name: "id", Value: id}, {Name: "customer", Value: customer}, {Name: "mode", Value: mode}, {Name: "log", Value: log}}
	if err := s.c.Input(1, []byte(customer), id, true, row); err != nil {
		s.t.Fatal(err)
	}
	s.step()
}

// until completes tasks until want outputs arrived.
func (s *sideCore) until(want int) {
	s.drive(func() bool { return len(s.out) >= want }, "outputs")
}

// drive completes tasks until done holds (10 s at most).
func (s *sideCore) drive(done func() bool, what string) {
	s.t.Helper()
	end := time.After(10 * time.Second)
	for !done() {
		select {
		case r := <-s.results:
			s.running--
			s.c.Complete(r)
			s.step()
		case <-time.After(10 * time.Millisecond):
		case <-end:
			s.t.Fatalf("waiting for %s: %d outputs %v", what, len(s.out), s.out)
		}
	}
}

func readLines(t *testing.T, name string) []string {
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func hasLine(name, line string) bool {
	b, _ := os.ReadFile(name)
	return strings.Contains(string(b), line+"\n")
}

// TestSideEffectsReplayAndReconcile: after a crash, the same inputs (same
// key, same sequence numbers) replay completed actions from the store
// without running their bodies, re-run the unfinished action with its
// recorded durable call, and run the reconciler of the call that was in
// flight.
func TestSideEffectsReplayAndReconcile(t *testing.T) {
	log := filepath.Join(t.TempDir(), "effects.log")
	store := statestore.NewMemory()
	s1 := newSideCore(t, store)
	s1.input(1, "a", ModePlain, log)
	s1.until(1)
	s1.input(2, "a", ModeHang, log)
	s1.drive(func() bool { return hasLine(log, "charge 2") }, "charge 2")
	// The process dies here (the hung call keeps its goroutine until the
	// release file appears, as a killed process would never return).
	defer os.WriteFile(log+".release", nil, 0o644)
	store.SimulateCrash(false)

	s2 := newSideCore(t, store)
	s2.input(1, "a", ModePlain, log)
	s2.input(2, "a", ModeHang, log)
	s2.until(2)
	want := [][]any{{int64(1), "a", int64(1), int64(10), "charged"}, {int64(2), "a", int64(2), int64(20), "reconciled"}}
	if !reflect.DeepEqual(s2.out, want) {
		t.Fatalf("outputs after the crash %v, want %v", s2.out, want)
	}
	wantLines := []string{
		"first 1", "second 1", "call1 1", "charge 1", // first run, complete
		"first 2", "second 2", "call1 2", "charge 2", // first run, hung in charge
		"second 2", "reconcile 2", // after the crash: only the unfinished action, its call1 replayed
	}
	if got := readLines(t, log); !reflect.DeepEqual(got, wantLines) {
		t.Fatalf("side effects\n got %q\nwant %q", got, wantLines)
	}
}
