package bridge

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/flinkgo/flinkgo/arrowio"
	"github.com/flinkgo/flinkgo/operator"
)

// Runtime names this runtime in HELLO and in the describe manifest.
const Runtime = "flinkgo-go/0.1.0"

// Manifest is the JSON object `<binary> describe` prints (docs/protocol.md,
// "The describe manifest"). The JVM and Python shims read it while the job
// graph is built.
type Manifest struct {
	Protocol int             `json:"protocol"`
	Runtime  string          `json:"runtime"`
	Agents   []AgentManifest `json:"agents"`
}

// AgentManifest describes one agent of the binary.
type AgentManifest struct {
	Name    string           `json:"name"`
	Actions []ActionManifest `json:"actions"`
	Output  []ColumnManifest `json:"output"`
	Options []OptionDoc      `json:"options"`
}

// ActionManifest is one action and the event types it listens to; inline
// if its body runs on the core goroutine (operator.Action.Inline).
type ActionManifest struct {
	Name   string   `json:"name"`
	Listen []string `json:"listen"`
	Inline bool     `json:"inline,omitempty"`
}

// ColumnManifest is one output column with its canonical Flink SQL type.
type ColumnManifest struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Describe builds the manifest of agents. It checks every agent as
// NewCore would and every output type against the protocol's type mapping;
// the error names the agent and what is wrong.
func Describe(agents ...*operator.Agent) (*Manifest, error) {
	if len(agents) == 0 {
		return nil, fmt.Errorf("bridge: no agents; pass at least one agent to bridge.Main")
	}
	m := &Manifest{Protocol: ProtocolVersion, Runtime: Runtime}
	seen := map[string]bool{}
	for _, a := range agents {
		if _, err := operator.NewCore(a, operator.DefaultConfig(), nil); err != nil {
			return nil, fmt.Errorf("bridge: describe: %w", err)
		}
		if seen[a.Name] {
			return nil, fmt.Errorf("bridge: two agents are called %q; agent names select the agent in OPEN and must be unique", a.Name)
		}
		seen[a.Name] = true
		cols, err := outputColumns(a)
		if err != nil {
			return nil, err
		}
		am := AgentManifest{Name: a.Name, Actions: []ActionManifest{}, Output: []ColumnManifest{}, Options: Options()}
		for _, act := range a.Actions {
			am.Actions = append(am.Actions, ActionManifest{Name: act.Name, Listen: append([]string(nil), act.Listen...), Inline: act.Inline})
		}
		for _, c := range cols {
			am.Output = append(am.Output, ColumnManifest{Name: c.Name, Type: c.Type})
		}
		m.Agents = append(m.Agents, am)
	}
	return m, nil
}

// outputColumns returns the agent's output columns with canonical Flink
// type names, checked against the type mapping.
func outputColumns(a *operator.Agent) ([]arrowio.Column, error) {
	if len(a.Output) == 0 {
		return nil, fmt.Errorf("bridge: agent %q declares no output columns; set Agent.Output (the schema of the rows it emits)", a.Name)
	}
	cols := make([]arrowio.Column, len(a.Output))
	for i, c := range a.Output {
		cols[i] = arrowio.Column{Name: c.Name, Type: c.Type}
	}
	b, err := arrowio.NewOutputBuilder(cols, nil)
	if err != nil {
		return nil, fmt.Errorf("bridge: agent %q output schema: %w", a.Name, err)
	}
	defer b.Release()
	return b.Columns(), nil
}

// WriteManifest writes the manifest of agents as indented JSON.
func WriteManifest(w io.Writer, agents ...*operator.Agent) error {
	m, err := Describe(agents...)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("bridge: describe: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
