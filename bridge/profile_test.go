package bridge

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCPUProfileOption(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu")
	s, err := parseSettings(&Open{Agent: "a", Options: map[string]string{OptCPUProfile: path}})
	if err != nil || s.cpuProfile != path {
		t.Fatalf("parseSettings: %v, %+v", err, s)
	}
	_, err = parseSettings(&Open{Agent: "a", Options: map[string]string{OptCPUProfile: "cpu.pprof"}})
	if err == nil || !strings.Contains(err.Error(), OptCPUProfile) || !strings.Contains(err.Error(), "absolute") {
		t.Fatalf("relative path: %v", err)
	}

	lg := slog.New(slog.DiscardHandler)
	stop := startCPUProfile(path, 3, lg)
	stop()
	if fi, err := os.Stat(path + ".3"); err != nil || fi.Size() == 0 {
		t.Fatalf("profile file: %v, %v", fi, err)
	}
	// A directory that does not exist: a warning, no profile, no failure.
	startCPUProfile(filepath.Join(path, "missing", "cpu"), 0, lg)()
	startCPUProfile("", 0, lg)()
}

func TestCPUProfileOptionIsInTheManifest(t *testing.T) {
	for _, o := range Options() {
		if o.Name == OptCPUProfile {
			return
		}
	}
	t.Fatalf("%s missing from Options()", OptCPUProfile)
}
