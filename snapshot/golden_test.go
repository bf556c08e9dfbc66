package snapshot

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

var update = flag.Bool("update", false, "write the golden files in testdata/snapshot that do not exist yet (existing files are never rewritten)")

const goldenDir = "../testdata/snapshot"

// goldenSections are the expected contents of the released section golden
// files. INVARIANT: never change an entry or its fixture; a new format
// version gets new files (and new entries) beside these.
var goldenSections = map[string]func() *Section{
	"section-v1-empty.bin":      func() *Section { return &Section{KeyGroup: 0} },
	"section-v1-tiny.bin":       tinySection,
	"section-v1-small.bin":      smallSection,
	"section-v1-values.bin":     valuesSection,
	"section-v1-compressed.bin": func() *Section { return counterSection(127, 1000, 200) },
}

var goldenMarkers = map[string]func() *Marker{
	"marker-v1-kafka.bin": kafkaMarker,
	"marker-v1-none.bin":  noneMarker,
}

// TestGolden decodes every golden file, compares it with its fixture and
// re-encodes it to the identical bytes. With -update it writes the files
// that are missing; it refuses to overwrite one.
func TestGolden(t *testing.T) {
	check := func(name string, encode func() ([]byte, error), decodeCompare func(b []byte) error, bodyOf func([]byte) []byte) {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(goldenDir, name)
			want, err := encode()
			if err != nil {
				t.Fatalf("encode fixture: %v", err)
			}
			golden, err := os.ReadFile(path)
			if errors.Is(err, os.ErrNotExist) && *update {
				if err := os.MkdirAll(goldenDir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, want, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("wrote %s (%d bytes)", path, len(want))
				return
			}
			if err != nil {
				t.Fatalf("%v (run once with -update to create a missing golden file)", err)
			}
			if err := decodeCompare(golden); err != nil {
				t.Fatalf("decoding %s: %v", path, err)
			}
			if !bytes.Equal(golden, want) {
				if bodyOf != nil && !bytes.Equal(bodyOf(golden), bodyOf(want)) {
					t.Fatalf("%s: the encoder now writes a different body for the same state: the format changed; restore the old encoding or add a new format version with new golden files beside these (never rewrite them)", path)
				}
				t.Fatalf("%s: re-encoding gives different bytes (%d, golden %d). If only the zstd stream differs, the zstd library changed its output; the format is intact, but determinism across builds is lost", path, len(want), len(golden))
			}
		})
	}
	for name, fixture := range goldenSections {
		check(name, func() ([]byte, error) { return EncodeSection(fixture()) }, func(b []byte) error {
			got, err := DecodeSection(b)
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(got, fixture()) {
				return errors.New("decoded section differs from its fixture")
			}
			return nil
		}, body)
	}
	for name, fixture := range goldenMarkers {
		check(name, func() ([]byte, error) { return EncodeMarker(fixture()) }, func(b []byte) error {
			got, err := DecodeMarker(b)
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(got, fixture()) {
				return errors.New("decoded marker differs from its fixture")
			}
			return nil
		}, nil)
	}
}
