package bridge

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/flinkgo/flinkgo/examples/orderscoring"
	"github.com/flinkgo/flinkgo/operator"
)

func TestDescribeManifest(t *testing.T) {
	var out bytes.Buffer
	if code := mainExit([]string{"agent", "describe"}, func(string) string { return "" }, &out, &out, []*operator.Agent{orderscoring.Agent(), echoAgent(0)}); code != ExitOK {
		t.Fatalf("describe exited %d: %s", code, out.String())
	}
	var m struct {
		Protocol int    `json:"protocol"`
		Runtime  string `json:"runtime"`
		Agents   []struct {
			Name    string `json:"name"`
			Actions []struct {
				Name   string   `json:"name"`
				Listen []string `json:"listen"`
			} `json:"actions"`
			Output  []map[string]string `json:"output"`
			Options []map[string]string `json:"options"`
		} `json:"agents"`
	}
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("describe output is not JSON: %v\n%s", err, out.String())
	}
	if m.Protocol != ProtocolVersion || m.Runtime != Runtime || len(m.Agents) != 2 {
		t.Fatalf("manifest header: %+v", m)
	}
	a := m.Agents[0]
	if a.Name != orderscoring.AgentName || len(a.Actions) != 2 || a.Actions[0].Name != "score" ||
		!reflect.DeepEqual(a.Actions[0].Listen, []string{"_input_event"}) || !reflect.DeepEqual(a.Actions[1].Listen, []string{"order_scored"}) {
		t.Fatalf("agent: %+v", a)
	}
	wantOut := []map[string]string{
		{"name": "customer", "type": "STRING"}, {"name": "order_id", "type": "BIGINT"}, {"name": "orders", "type": "BIGINT"},
		{"name": "avg_amount", "type": "DOUBLE"}, {"name": "risk", "type": "DOUBLE"}, {"name": "flagged", "type": "BOOLEAN"},
	}
	if !reflect.DeepEqual(a.Output, wantOut) {
		t.Fatalf("output columns %v", a.Output)
	}
	opts := map[string]map[string]string{}
	for _, o := range a.Options {
		if o["doc"] == "" {
			t.Errorf("option %q has no doc", o["name"])
		}
		opts[o["name"]] = o
	}
	for name, def := range map[string]string{"go.credit.rows": "65536", "error-handling-strategy": "fail", "max-retries": "3",
		"actionStateStoreBackend": "none", "num-async-threads": "", "go.memory.limit": ""} {
		o, ok := opts[name]
		if !ok || o["default"] != def {
			t.Errorf("option %s: %v, want default %q", name, o, def)
		}
	}
}

func TestDescribeRejectsBadAgents(t *testing.T) {
	bad := &operator.Agent{Name: "x", Actions: echoAgent(0).Actions, Output: []operator.Column{{Name: "c", Type: "MAP<STRING, INT>"}}}
	if _, err := Describe(bad); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Fatalf("unsupported output type: %v", err)
	}
	if _, err := Describe(echoAgent(0), echoAgent(0)); err == nil || !strings.Contains(err.Error(), "unique") {
		t.Fatalf("duplicate agent: %v", err)
	}
	if _, err := Describe(); err == nil {
		t.Fatal("no agents: no error")
	}
	var out, errOut bytes.Buffer
	if code := mainExit([]string{"agent", "describe"}, func(string) string { return "" }, &out, &errOut, []*operator.Agent{bad}); code != ExitFailure || errOut.Len() == 0 {
		t.Fatalf("describe of a bad agent exited %d, stderr %q", code, errOut.String())
	}
}

func TestMainWithoutEnvironment(t *testing.T) {
	env := map[string]string{EnvSocket: "/tmp/x.sock", EnvToken: "ab"}
	var out, errOut bytes.Buffer
	code := mainExit([]string{"agent"}, func(k string) string { return env[k] }, &out, &errOut, []*operator.Agent{echoAgent(0)})
	msg := errOut.String()
	if code != ExitUsage || !strings.Contains(msg, EnvProtocol) || !strings.Contains(msg, EnvParentPID) ||
		!strings.Contains(msg, "this binary is started by the flinkgo Flink operator") {
		t.Fatalf("exit %d, stderr %q", code, msg)
	}
	env[EnvProtocol], env[EnvParentPID] = "1", "zero"
	errOut.Reset()
	if code := mainExit([]string{"agent"}, func(k string) string { return env[k] }, &out, &errOut, nil); code != ExitUsage || !strings.Contains(errOut.String(), EnvParentPID) {
		t.Fatalf("bad pid: exit %d, stderr %q", code, errOut.String())
	}
	errOut.Reset()
	if code := mainExit([]string{"agent", "serve"}, func(k string) string { return env[k] }, &out, &errOut, nil); code != ExitUsage || !strings.Contains(errOut.String(), "describe") {
		t.Fatalf("unknown argument: exit %d, stderr %q", code, errOut.String())
	}
}
