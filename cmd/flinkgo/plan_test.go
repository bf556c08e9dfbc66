package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/flinkgo/flinkgo/statestore"
)

var testTopicID = snapshot.UUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

func kafkaMarker(cp int64, offsets map[int32]int64) *snapshot.Marker {
	return &snapshot.Marker{Version: snapshot.MarkerVersion, Backend: "kafka", Topic: "agent-state",
		TopicID: testTopicID, CheckpointID: cp, Offsets: offsets}
}

func TestMakePlanMinimumPerPartition(t *testing.T) {
	p, err := MakePlan([]*snapshot.Marker{
		kafkaMarker(7, map[int32]int64{0: 120, 1: 40, 2: 9}),
		kafkaMarker(7, map[int32]int64{0: 100, 3: 12}),
	}, testTopicID, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"version":1,"id":"` + p.ID + `","topic":"agent-state","topic_id":"AQIDBAUGBwgJCgsMDQ4PEA","partitions":4,"checkpoint_id":7,"offsets":{"0":100,"1":40,"2":9,"3":12}}` + "\n"
	if got := string(p.Encode()); got != want {
		t.Fatalf("plan\n%s\nwant\n%s", got, want)
	}
	back, err := DecodePlan(p.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Encode(), p.Encode()) {
		t.Fatal("round trip changed the plan")
	}
	// Equal content, equal id; the markers' order does not matter.
	p2, _ := MakePlan([]*snapshot.Marker{
		kafkaMarker(7, map[int32]int64{0: 100, 3: 12}),
		kafkaMarker(7, map[int32]int64{0: 120, 1: 40, 2: 9}),
	}, testTopicID, 4)
	if p2.ID != p.ID || len(p.ID) != 64 {
		t.Fatalf("ids %s and %s", p.ID, p2.ID)
	}
	// Another partition count or boundary: another id.
	p3, _ := MakePlan([]*snapshot.Marker{kafkaMarker(7, map[int32]int64{0: 100, 1: 40, 2: 9, 3: 12})}, testTopicID, 5)
	if p3.ID == p.ID {
		t.Fatal("a plan for 5 partitions has the id of a plan for 4")
	}
}

func TestMakePlanRefuses(t *testing.T) {
	other := snapshot.UUID{9}
	none := &snapshot.Marker{Backend: "none"}
	legacy := kafkaMarker(7, map[int32]int64{0: 1})
	legacy.TopicID = snapshot.UUID{}
	otherTopic := kafkaMarker(7, map[int32]int64{0: 1})
	otherTopic.Topic = "x"
	for name, tc := range map[string]struct {
		ms   []*snapshot.Marker
		id   snapshot.UUID
		want string
	}{
		"none":            {nil, testTopicID, "no markers"},
		"backend":         {[]*snapshot.Marker{none}, testTopicID, `backend "none"`},
		"legacy":          {[]*snapshot.Marker{legacy}, testTopicID, "legacy"},
		"mixed topics":    {[]*snapshot.Marker{kafkaMarker(7, map[int32]int64{0: 1}), otherTopic}, testTopicID, "one job's"},
		"mixed cps":       {[]*snapshot.Marker{kafkaMarker(7, map[int32]int64{0: 1}), kafkaMarker(8, map[int32]int64{0: 1})}, testTopicID, "checkpoint 8"},
		"partition":       {[]*snapshot.Marker{kafkaMarker(7, map[int32]int64{4: 1})}, testTopicID, "partition 4"},
		"recreated topic": {[]*snapshot.Marker{kafkaMarker(7, map[int32]int64{0: 1})}, other, "recreated"},
	} {
		_, err := MakePlan(tc.ms, tc.id, 4)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", name, err, tc.want)
		}
	}
}

func validPlan(t testing.TB) *Plan {
	p, err := MakePlan([]*snapshot.Marker{kafkaMarker(3, map[int32]int64{0: 100, 2: 7})}, testTopicID, 3)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDecodePlanStrict(t *testing.T) {
	good := string(validPlan(t).Encode())
	body := strings.TrimSuffix(good, "\n")
	id := validPlan(t).ID
	for name, tc := range map[string]struct{ in, want string }{
		"unknown field":      {strings.Replace(body, `{"version":1,`, `{"version":1,"extra":1,`, 1), "unknown field"},
		"trailing content":   {good + "{}", "content after"},
		"trailing garbage":   {body + " x", "content after"},
		"partition 007":      {strings.Replace(body, `"2":7`, `"002":7`, 1), "canonical form"},
		"partition +2":       {strings.Replace(body, `"2":7`, `"+2":7`, 1), "canonical form"},
		"unsorted":           {strings.Replace(body, `"0":100,"2":7`, `"2":7,"0":100`, 1), "canonical form"},
		"duplicate":          {strings.Replace(body, `"0":100,"2":7`, `"0":100,"0":100,"2":7`, 1), "canonical form"},
		"spaces":             {strings.Replace(body, `"version":1`, `"version": 1`, 1), "canonical form"},
		"member order":       {strings.Replace(body, `"version":1,"id":"`+id+`"`, `"id":"`+id+`","version":1`, 1), "canonical form"},
		"edited boundary":    {strings.Replace(body, `"0":100`, `"0":101`, 1), "does not match"},
		"missing member":     {strings.Replace(body, `"checkpoint_id":3,`, ``, 1), "missing"},
		"partition too high": {strings.Replace(body, `"2":7`, `"3":7`, 1), "partition 3"},
		"negative offset":    {strings.Replace(body, `"2":7`, `"2":-7`, 1), "offset -7"},
		"version 2":          {strings.Replace(body, `"version":1`, `"version":2`, 1), "version 2"},
		"bad topic id":       {strings.Replace(body, `AQIDBAUGBwgJCgsMDQ4PEA`, `AAAAAAAAAAAAAAAAAAAAAA`, 1), "topic_id"},
		"not json":           {"plan", "not a plan"},
		"empty":              {"", "not a plan"},
	} {
		_, err := DecodePlan([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", name, err, tc.want)
		}
	}
	if _, err := DecodePlan([]byte(body)); err != nil {
		t.Errorf("without the trailing newline: %v", err)
	}
}

func TestReadMarkers(t *testing.T) {
	b1, _ := snapshot.EncodeMarker(kafkaMarker(3, map[int32]int64{0: 5}))
	b2, _ := snapshot.EncodeMarker(kafkaMarker(3, map[int32]int64{1: 6}))
	in := fmt.Sprintf("{\"marker\":%q}\n\n{\"marker\":%q}\n", base64.StdEncoding.EncodeToString(b1), base64.StdEncoding.EncodeToString(b2))
	ms, err := ReadMarkers(strings.NewReader(in))
	if err != nil || len(ms) != 2 || ms[1].Offsets[1] != 6 || statestore.TopicIDString(ms[0].TopicID) != "AQIDBAUGBwgJCgsMDQ4PEA" {
		t.Fatalf("ReadMarkers: %v %+v", err, ms)
	}
	for _, bad := range []string{`{"marker":"!!"}`, `{"marker":"AAAA"}`, `{"m":""}`, `{"marker":""} x`, `[1]`} {
		if _, err := ReadMarkers(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%s: error %v, want one naming line 1", bad, err)
		}
	}
}

// FuzzDecodePlan: DecodePlan never panics, and what it accepts is exactly
// the canonical encoding of what it returns.
func FuzzDecodePlan(f *testing.F) {
	good := validPlan(f).Encode()
	f.Add(good)
	f.Add(bytes.TrimSuffix(good, []byte("\n")))
	f.Add([]byte(`{"version":1,"id":"x","topic":"t","topic_id":"AQIDBAUGBwgJCgsMDQ4PEA","partitions":1,"checkpoint_id":0,"offsets":{"0":0}}`))
	f.Add([]byte(`{"offsets":{"007":1}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodePlan(b)
		if err != nil {
			return
		}
		if enc := p.Encode(); !bytes.Equal(bytes.TrimSuffix(b, []byte("\n")), bytes.TrimSuffix(enc, []byte("\n"))) {
			t.Fatalf("accepted %q, which is not the canonical %q", b, enc)
		}
		if p.ID != p.digest() {
			t.Fatalf("accepted a plan whose id does not match its content: %q", b)
		}
	})
}

// TestExportMarkersRunsJava: --savepoint runs java -cp CP MarkerExport PATH
// UID and reads its stdout; a failure shows its stderr.
func TestExportMarkersRunsJava(t *testing.T) {
	b, _ := snapshot.EncodeMarker(kafkaMarker(3, map[int32]int64{0: 5}))
	dir := t.TempDir()
	java := filepath.Join(dir, "java")
	script := fmt.Sprintf("#!/bin/sh\n[ \"$1 $2 $3 $4 $5\" = \"-cp the-cp %s /sp agent\" ] || { echo \"bad args: $*\" >&2; exit 1; }\necho '{\"marker\":\"%s\"}'\n",
		MarkerExportClass, base64.StdEncoding.EncodeToString(b))
	if err := os.WriteFile(java, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ms, err := exportMarkers(context.Background(), java, "the-cp", "/sp", "agent")
	if err != nil || len(ms) != 1 || ms[0].Offsets[0] != 5 {
		t.Fatalf("exportMarkers: %v %+v", err, ms)
	}
	_, err = exportMarkers(context.Background(), java, "the-cp", "/other", "agent")
	if err == nil || !strings.Contains(err.Error(), "bad args") {
		t.Fatalf("a failing MarkerExport: %v", err)
	}
	if _, err := exportMarkers(context.Background(), java, "", "/sp", "agent"); err == nil || !strings.Contains(err.Error(), "FLINKGO_JAVA_CLASSPATH") {
		t.Fatalf("without a classpath: %v", err)
	}
}
