package bridge

import (
	"fmt"
	"log/slog"
	"os"
	"runtime/pprof"
)

// startCPUProfile starts the CPU profile that option go.cpuprofile asks
// for, written to "<path>.<subtask>"; the returned function stops it and
// closes the file. It is a diagnostic: when the file cannot be created, or
// another profile runs in this process, it logs a warning and profiles
// nothing. path "" does nothing.
func startCPUProfile(path string, subtask int, lg *slog.Logger) (stop func()) {
	if path == "" {
		return func() {}
	}
	name := fmt.Sprintf("%s.%d", path, subtask)
	f, err := os.Create(name)
	if err != nil {
		lg.Warn("no CPU profile", "option", OptCPUProfile, "err", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		lg.Warn("no CPU profile", "option", OptCPUProfile, "file", name, "err", err)
		return func() {}
	}
	lg.Info("writing a CPU profile", "file", name)
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			lg.Warn("CPU profile incomplete", "file", name, "err", err)
		}
	}
}
