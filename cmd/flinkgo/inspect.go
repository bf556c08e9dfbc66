package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/flinkgo/flinkgo/statestore"
)

// cmdInspectRecord decodes one action-state record (key and value as hex,
// as kafka-console-consumer can print them) and prints it as JSON.
func cmdInspectRecord(args []string, out io.Writer) error {
	fs := newFlags("inspect record")
	keyHex := fs.String("key", "", "record key, hex")
	valHex := fs.String("value", "", "record value, hex (omit for a tombstone)")
	if err := parse(fs, args); err != nil {
		return err
	}
	key, err := hex.DecodeString(strings.TrimSpace(*keyHex))
	if err != nil || len(key) == 0 {
		return fmt.Errorf("inspect record: --key must be the record key in hex: %v", err)
	}
	k, err := statestore.ParseRecordKey(key)
	if err != nil {
		return fmt.Errorf("inspect record: %w", err)
	}
	if *valHex == "" {
		return printJSON(out, map[string]any{"key": k.String(), "key_group": k.KeyGroup,
			"key_sha256": hex.EncodeToString(k.KeyHash[:]), "seq": k.Seq, "action": k.Action, "tombstone": true})
	}
	val, err := hex.DecodeString(strings.TrimSpace(*valHex))
	if err != nil {
		return fmt.Errorf("inspect record: --value must be the record value in hex: %v", err)
	}
	r, err := statestore.DecodeRecord(key, val)
	if err != nil {
		return fmt.Errorf("inspect record: %w (an encrypted value starts with c1 and cannot be shown)", err)
	}
	calls := make([]map[string]any, len(r.Calls))
	for i, c := range r.Calls {
		m := map[string]any{"call_id": c.CallID, "status": c.Status, "args_sha256": hex.EncodeToString(c.ArgsDigest[:])}
		if c.Result != nil {
			v, err := statestore.DecodeValue(c.Result)
			if err != nil {
				return fmt.Errorf("inspect record: call %d result: %w", i, err)
			}
			m["result"] = v
		}
		if c.Error != "" {
			m["error"], m["error_kind"] = c.Error, c.ErrorKind
		}
		calls[i] = m
	}
	return printJSON(out, map[string]any{"key": k.String(), "key_group": k.KeyGroup,
		"key_sha256": hex.EncodeToString(k.KeyHash[:]), "seq": k.Seq, "event_id": hex.EncodeToString(k.EventID[:]),
		"action": k.Action, "status": r.Status, "updates": r.Updates, "events": len(r.Events), "calls": calls})
}

// cmdInspectSnapshot prints a summary of a key-group section (the bytes Go
// sends in SNAPSHOT) or of a recovery marker.
func cmdInspectSnapshot(args []string, stdin io.Reader, out io.Writer) error {
	if len(args) != 1 {
		return fmt.Errorf("inspect snapshot: give one file (or - for stdin)\n%s", usage)
	}
	var b []byte
	var err error
	if args[0] == "-" {
		b, err = io.ReadAll(stdin)
	} else {
		b, err = os.ReadFile(args[0])
	}
	if err != nil {
		return fmt.Errorf("inspect snapshot: %w", err)
	}
	if bytes.HasPrefix(b, []byte("FGRM")) {
		m, err := snapshot.DecodeMarker(b)
		if err != nil {
			return fmt.Errorf("inspect snapshot: %w", err)
		}
		offs := map[string]int64{}
		for p, o := range m.Offsets {
			offs[fmt.Sprint(p)] = o
		}
		return printJSON(out, map[string]any{"marker_version": m.Version, "backend": m.Backend, "topic": m.Topic,
			"topic_id": statestore.TopicIDString(m.TopicID), "checkpoint_id": m.CheckpointID, "offsets": offs})
	}
	s, err := snapshot.DecodeSection(b)
	if err != nil {
		return fmt.Errorf("inspect snapshot: neither a recovery marker nor a key-group section: %w", err)
	}
	keys := make([]map[string]any, len(s.Keys))
	for i, k := range s.Keys {
		m := map[string]any{"key_hex": hex.EncodeToString(k.Key), "next_seq": k.NextSeq,
			"short_term": len(k.ShortTerm), "queued": len(k.Queued)}
		if f := k.InFlight; f != nil {
			tasks := make([]string, len(f.Tasks))
			for j, t := range f.Tasks {
				tasks[j] = t.Action
			}
			m["in_flight"] = map[string]any{"seq": f.Input.Seq, "emitted": f.Emitted, "tasks": tasks}
		}
		keys[i] = m
	}
	return printJSON(out, map[string]any{"key_group": s.KeyGroup, "keys": keys})
}

func printJSON(out io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = out.Write(append(b, '\n'))
	return err
}
