package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/flinkgo/flinkgo/operator"
)

// Environment variables the Flink operator sets (docs/protocol.md).
const (
	EnvSocket    = "FLINKGO_SOCKET"
	EnvToken     = "FLINKGO_TOKEN"
	EnvProtocol  = "FLINKGO_PROTOCOL"
	EnvParentPID = "FLINKGO_PARENT_PID"
)

// Exit codes of Main.
const (
	ExitOK      = 0 // CLOSE, SIGTERM, or describe
	ExitFailure = 1 // the subtask failed (action, protocol, connection, parent gone)
	ExitUsage   = 2 // started by hand, or with a bad environment
)

// dialTimeout bounds connecting to the operator's socket.
const dialTimeout = 10 * time.Second

// Env is what the operator passes in the environment.
type Env struct {
	Socket    string // FLINKGO_SOCKET
	Token     string // FLINKGO_TOKEN
	Protocol  string // FLINKGO_PROTOCOL
	ParentPID int    // FLINKGO_PARENT_PID
}

// EnvFrom reads the environment through getenv. A missing or malformed
// variable is an error naming it.
func EnvFrom(getenv func(string) string) (Env, error) {
	var e Env
	var missing []string
	get := func(name string) string {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			missing = append(missing, name)
		}
		return v
	}
	e.Socket, e.Token, e.Protocol = get(EnvSocket), get(EnvToken), get(EnvProtocol)
	pid := get(EnvParentPID)
	if len(missing) > 0 {
		what := "environment variable " + missing[0] + " is not set"
		if len(missing) > 1 {
			what = "environment variables " + strings.Join(missing, ", ") + " are not set"
		}
		return e, fmt.Errorf("bridge: %s: this binary is started by the flinkgo Flink operator, which sets %s, %s, %s and %s (run \"%s describe\" to see its agents)",
			what, EnvSocket, EnvToken, EnvProtocol, EnvParentPID, progName())
	}
	n, err := strconv.Atoi(pid)
	if err != nil || n <= 0 {
		return e, fmt.Errorf("bridge: environment variable %s=%q is not a process id: this binary is started by the flinkgo Flink operator, which sets it to the pid of the TaskManager JVM", EnvParentPID, pid)
	}
	e.ParentPID = n
	return e, nil
}

func progName() string {
	if len(os.Args) > 0 {
		return os.Args[0]
	}
	return "agent"
}

// Main is the main function of an agent binary:
//
//	func main() { bridge.Main(myagent.Agent()) }
//
// With the argument "describe" it prints the manifest (JSON) and exits 0.
// Otherwise it serves the operator that started it (see Run) and exits 0
// after CLOSE or SIGTERM, 1 when the subtask fails, 2 when the environment
// is missing (the binary was not started by the flinkgo operator).
func Main(agents ...*operator.Agent) {
	os.Exit(mainExit(os.Args, os.Getenv, os.Stdout, os.Stderr, agents))
}

func mainExit(args []string, getenv func(string) string, stdout, stderr io.Writer, agents []*operator.Agent) int {
	if len(args) > 1 {
		switch args[1] {
		case "describe":
			if err := WriteManifest(stdout, agents...); err != nil {
				fmt.Fprintln(stderr, err)
				return ExitFailure
			}
			return ExitOK
		case "-h", "-help", "--help", "help":
			fmt.Fprintf(stdout, "usage: %s describe   print the agents of this binary as JSON\n"+
				"otherwise the binary is started by the flinkgo Flink operator, with %s, %s, %s and %s set\n",
				args[0], EnvSocket, EnvToken, EnvProtocol, EnvParentPID)
			return ExitOK
		default:
			fmt.Fprintf(stderr, "%s: unknown argument %q; the only command is \"describe\" (without arguments the binary serves the flinkgo Flink operator that started it)\n", args[0], args[1])
			return ExitUsage
		}
	}
	env, err := EnvFrom(getenv)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return ExitUsage
	}
	lg := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: logLevel(getenv("FLINKGO_LOG_LEVEL"))}))
	err = Run(context.Background(), env, ServerConfig{Agents: agents, Logger: lg, ProcessWide: true})
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, ErrTerminated):
		lg.Info("exiting after signal", "cause", err)
		return ExitOK
	default:
		lg.Error("exiting", "err", err)
		return ExitFailure
	}
}

func logLevel(s string) slog.Level {
	var l slog.Level
	if l.UnmarshalText([]byte(s)) != nil {
		return slog.LevelInfo
	}
	return l
}

// Run connects to the operator's socket and serves it (Serve) until CLOSE,
// an error, SIGTERM or SIGINT (graceful: what was produced is sent; the
// error wraps ErrTerminated), or the death of the parent process (the
// error wraps ErrParentGone). cfg.Token and cfg.Protocol are taken from
// env.
func Run(ctx context.Context, env Env, cfg ServerConfig) error {
	cfg.Token, cfg.Protocol = env.Token, env.Protocol
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stopSignals := watchSignals(cancel)
	defer stopSignals()
	go watchParent(ctx, cancel, env.ParentPID, parentPollInterval)

	d := net.Dialer{Timeout: dialTimeout}
	conn, err := d.DialContext(ctx, "unix", env.Socket)
	if err != nil {
		return fmt.Errorf("bridge: connecting to the operator's socket %s (%s): %w", env.Socket, EnvSocket, err)
	}
	return Serve(ctx, conn, cfg)
}
