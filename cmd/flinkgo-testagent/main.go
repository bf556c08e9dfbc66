// Command flinkgo-testagent is the Go process of the test agents in
// examples/testagents ("passthrough", "slow" and "sideeffects"), used by the Java
// end-to-end tests and the bridge benchmark; select one with go.agent.
package main

import (
	"github.com/flinkgo/flinkgo/bridge"
	"github.com/flinkgo/flinkgo/examples/testagents"
)

func main() { bridge.Main(append(testagents.All(), testagents.SideEffects())...) }
