// Command orderscoring is the Go process of the order-scoring example agent
// (see examples/orderscoring). The flinkgo Flink operator starts it next to
// each subtask; "orderscoring describe" prints its manifest.
package main

import (
	"github.com/flinkgo/flinkgo/bridge"
	"github.com/flinkgo/flinkgo/examples/orderscoring"
)

func main() { bridge.Main(orderscoring.Agent()) }
