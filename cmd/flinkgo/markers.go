package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/flinkgo/flinkgo/snapshot"
)

// MarkerExportClass is the Java tool (java-shim, io.flinkgo.shim.tools)
// that prints the recovery markers of a savepoint or retained checkpoint,
// one JSON line per subtask: {"marker":"<base64>"}.
const MarkerExportClass = "io.flinkgo.shim.tools.MarkerExport"

// markerLine is one line of MarkerExport's output.
type markerLine struct {
	Marker string `json:"marker"`
}

// ReadMarkers reads MarkerExport's output: one JSON object per line with
// the standard base64 of one marker; blank lines are skipped. Anything
// else is an error naming the line.
func ReadMarkers(r io.Reader) ([]*snapshot.Marker, error) {
	var out []*snapshot.Marker
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 32<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		var ml markerLine
		if err := dec.Decode(&ml); err != nil {
			return nil, fmt.Errorf("markers line %d: want {\"marker\":\"<base64>\"}: %v", n, err)
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("markers line %d: content after the JSON object", n)
		}
		b, err := base64.StdEncoding.DecodeString(ml.Marker)
		if err != nil {
			return nil, fmt.Errorf("markers line %d: marker is not standard base64: %v", n, err)
		}
		m, err := snapshot.DecodeMarker(b)
		if err != nil {
			return nil, fmt.Errorf("markers line %d: %w", n, err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading markers: %w", err)
	}
	return out, nil
}

// readMarkersFile reads markers from a file, or stdin for "-".
func readMarkersFile(name string, stdin io.Reader) ([]*snapshot.Marker, error) {
	if name == "-" {
		return ReadMarkers(stdin)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadMarkers(f)
}

// exportMarkers runs MarkerExport on a savepoint or retained checkpoint
// with java -cp classpath (the shim jar and Flink with its State Processor
// API, e.g. from mvn dependency:build-classpath) and reads its output.
func exportMarkers(ctx context.Context, java, classpath, path, uid string) ([]*snapshot.Marker, error) {
	if classpath == "" {
		return nil, errors.New("--savepoint needs the Java classpath of the shim jar, Flink and flink-state-processor-api: pass --classpath or set FLINKGO_JAVA_CLASSPATH (cd java-shim && mvn dependency:build-classpath)")
	}
	cmd := exec.CommandContext(ctx, java, "-cp", classpath, MarkerExportClass, path, uid)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s %s %s: %v\n%s", java, MarkerExportClass, path, uid, err, lastLines(stderr.String(), 20))
	}
	return ReadMarkers(&stdout)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
