package statestore

import (
	"bytes"
	"encoding/hex"
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/flinkgo/flinkgo/snapshot"
)

// The golden files in testdata/action-state are the action-state record
// format, version 1, for readers in any language. They were written once with
//
//	go test ./statestore/ -run TestGoldenRecords -update
//
// and must never be rewritten: a format change adds a new version (and new
// files) beside them. See testdata/action-state/README.md.
var updateGolden = flag.Bool("update", false, "write the golden files of testdata/action-state (only for a new format version)")

const goldenDir = "../testdata/action-state"

func goldenUUID(b byte) snapshot.UUID {
	var u snapshot.UUID
	for i := range u {
		u[i] = b
	}
	return u
}

// goldenRecords are self-contained on purpose: they must not change when the
// other tests' fixtures do.
func goldenRecords(t *testing.T) map[string]*Record {
	key := func(seq uint64, ev byte, action string) RecordKey {
		return RecordKey{KeyGroup: 42, KeyHash: HashKey([]byte("user-1")), Seq: seq, EventID: goldenUUID(ev), Action: action}
	}
	val := func(v any) []byte { return mustValue(t, v) }
	dig := func(v any) [32]byte { return mustDigest(t, v) }
	return map[string]*Record{
		// A finished action: two memory writes, one output event, one call.
		"v1-completed": {
			Key:    key(0, 0x11, "classify"),
			Status: StatusCompleted,
			Updates: []MemUpdate{
				{Scope: ScopeShortTerm, Path: "profile.mood", Value: "happy"},
				{Scope: ScopeSensory, Path: "tmp", Object: true, Overwrite: true},
			},
			Events: []snapshot.Event{{
				ID: goldenUUID(0x22), Type: "_output_event",
				Attrs:      map[string]any{"output": []any{"user-1", int64(3)}},
				UpstreamID: goldenUUID(0x11), UpstreamAction: "classify",
			}},
			Calls: []CallRecord{{
				CallID: "llm", ArgsDigest: dig(map[string]any{"prompt": "hi", "n": int64(1)}),
				Status: CallSucceeded, Result: val("ok"),
			}},
		},
		// An action that spans a checkpoint: one call done, a reconciled
		// call in flight.
		"v1-running-pending": {
			Key:    key(1, 0x33, "pay"),
			Status: StatusRunning,
			Calls: []CallRecord{
				{CallID: "quote", ArgsDigest: dig([]any{"EUR", int64(100)}), Status: CallSucceeded, Result: val(1.5)},
				{CallID: "charge", ArgsDigest: dig([]any{"EUR", int64(150)}), Status: CallPending},
			},
		},
		// A call that failed permanently, and one that returned nil.
		"v1-failed-and-nil": {
			Key:    key(2, 0x44, "lookup"),
			Status: StatusCompleted,
			Calls: []CallRecord{
				{CallID: "fetch", ArgsDigest: dig("https://example.invalid/"), Status: CallFailed, Error: "404 not found", ErrorKind: 1},
				{CallID: "cache", ArgsDigest: dig(nil), Status: CallSucceeded, Result: val(nil)},
			},
		},
		// Every kind of the value domain, in memory, an event and a result;
		// a delete; an event without lineage; an action name with a NUL.
		"v1-value-kinds": {
			Key:    key(math.MaxUint32+1, 0x55, "odd_name\x00_1"),
			Status: StatusCompleted,
			Updates: []MemUpdate{
				{Scope: ScopeShortTerm, Path: "all", Value: goldenKinds()},
				{Scope: ScopeShortTerm, Path: "old", Delete: true},
			},
			Events: []snapshot.Event{{ID: goldenUUID(0x66), Type: "note", Attrs: goldenKinds()}},
			Calls:  []CallRecord{{CallID: "kinds", ArgsDigest: dig(goldenKinds()), Status: CallSucceeded, Result: val(goldenKinds())}},
		},
	}
}

func goldenKinds() map[string]any {
	return map[string]any{
		"null": nil, "bool": true,
		"ints":   []any{int64(0), int64(-1), int64(200), int64(-200), int64(70000), int64(-70000), int64(math.MaxInt64), int64(math.MinInt64)},
		"float":  -0.25,
		"string": "héllo",
		"bytes":  []byte{0, 0xff},
		"list":   []any{},
		"map":    map[string]any{"k": []any{nil}},
	}
}

func readHex(t *testing.T, path string) []byte {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write the golden files once with -update)", err)
	}
	b, err := hexDecode(string(text))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}

// hexDecode decodes hex, ignoring white space.
func hexDecode(s string) ([]byte, error) {
	return hex.DecodeString(strings.Join(strings.Fields(s), ""))
}

func TestGoldenRecords(t *testing.T) {
	for name, want := range goldenRecords(t) {
		t.Run(name, func(t *testing.T) {
			keyPath := filepath.Join(goldenDir, name+".key.hex")
			valPath := filepath.Join(goldenDir, name+".value.hex")
			key := want.Key.Bytes()
			val, err := EncodeRecord(want)
			if err != nil {
				t.Fatal(err)
			}
			if *updateGolden {
				for path, b := range map[string][]byte{keyPath: key, valPath: val} {
					if err := os.WriteFile(path, []byte(hex.EncodeToString(b)+"\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				return
			}
			goldKey, goldVal := readHex(t, keyPath), readHex(t, valPath)
			got, err := DecodeRecord(goldKey, goldVal)
			if err != nil {
				t.Fatalf("decoding the golden record: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("golden record decodes to\n%+v\nwant\n%+v", got, want)
			}
			if !bytes.Equal(key, goldKey) {
				t.Errorf("key encodes to\n%x\ngolden\n%x", key, goldKey)
			}
			if !bytes.Equal(val, goldVal) {
				t.Errorf("value encodes to\n%x\ngolden\n%x", val, goldVal)
			}
			again, _ := EncodeRecord(got)
			if !bytes.Equal(again, goldVal) {
				t.Errorf("decode + encode of the golden value changes its bytes")
			}
		})
	}
}
