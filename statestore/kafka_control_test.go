package statestore

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func validControl() *ControlRecord {
	return &ControlRecord{
		Version: ControlVersion,
		PlanID:  "3f1c9a",
		Topic:   "agent-state",
		TopicID: TopicIDString(testUUID(0x40)),
		State:   ControlCommitted,
		Offsets: map[int32]int64{0: 12, 3: 0, 10: 4711},
	}
}

func TestControlRoundTrip(t *testing.T) {
	r := validControl()
	b, err := EncodeControl(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"version":1,"plan_id":"3f1c9a","topic":"agent-state","topic_id":"` + r.TopicID +
		`","state":"COMMITTED","offsets":{"0":12,"3":0,"10":4711}}`
	if string(b) != want {
		t.Fatalf("EncodeControl =\n%s\nwant\n%s", b, want)
	}
	got, err := DecodeControl(b)
	if err != nil || !reflect.DeepEqual(got, r) {
		t.Fatalf("DecodeControl = %+v, %v", got, err)
	}
	id, err := ParseTopicID(r.TopicID)
	if err != nil || id != testUUID(0x40) {
		t.Fatalf("ParseTopicID: %v", err)
	}
}

func TestControlDecodeErrors(t *testing.T) {
	good, _ := EncodeControl(validControl())
	mut := func(old, new string) string { return strings.Replace(string(good), old, new, 1) }
	cases := map[string]string{
		"empty":          "",
		"not json":       "COMMITTED",
		"array":          "[]",
		"trailing":       string(good) + "{}",
		"unknown field":  mut(`"version":1`, `"version":1,"extra":true`),
		"version 2":      mut(`"version":1`, `"version":2`),
		"no plan":        mut(`"plan_id":"3f1c9a"`, `"plan_id":""`),
		"no topic":       mut(`"topic":"agent-state"`, `"topic":""`),
		"bad topic id":   mut(`"topic_id":"`, `"topic_id":"x`),
		"zero topic id":  mut(validControl().TopicID, TopicIDString([16]byte{})),
		"state":          mut(`"COMMITTED"`, `"PLANNED"`),
		"no offsets":     mut(`{"0":12,"3":0,"10":4711}`, `{}`),
		"neg offset":     mut(`"0":12`, `"0":-1`),
		"neg partition":  mut(`"0":12`, `"-1":12`),
		"text partition": mut(`"0":12`, `"p0":12`),
	}
	for name, in := range cases {
		if _, err := DecodeControl([]byte(in)); !errors.Is(err, ErrControl) {
			t.Errorf("%s: err = %v, want ErrControl", name, err)
		}
	}
}

func FuzzDecodeControl(f *testing.F) {
	good, _ := EncodeControl(validControl())
	f.Add(good)
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`{"offsets":{"2147483648":1}}`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeControl(b)
		if err != nil {
			if !errors.Is(err, ErrControl) {
				t.Fatalf("error %v is not ErrControl", err)
			}
			return
		}
		// Whatever decodes re-encodes and decodes to the same record.
		again, err := EncodeControl(r)
		if err != nil {
			t.Fatalf("decoded record does not encode: %v", err)
		}
		r2, err := DecodeControl(again)
		if err != nil || !reflect.DeepEqual(r, r2) {
			t.Fatalf("round trip: %+v vs %+v (%v)", r, r2, err)
		}
	})
}
