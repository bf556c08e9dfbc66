package operator

import (
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/flinkgo/flinkgo/snapshot"
)

// Strategy is the error-handling strategy of a failed action.
type Strategy uint8

const (
	StrategyFail   Strategy = iota // fail the task; Flink restarts it
	StrategyRetry                  // retry retryable errors, then fail
	StrategyIgnore                 // drop the action's effects and go on
)

func (s Strategy) String() string {
	return [...]string{"fail", "retry", "ignore"}[s]
}

// Option names, as in Apache Flink Agents where the meaning is the same.
const (
	OptErrorStrategy  = "error-handling-strategy"
	OptMaxRetries     = "max-retries"
	OptRetryWait      = "retry-wait-interval"
	OptNumAsync       = "num-async-threads"
	OptJobIdentifier  = "job-identifier"
	defaultMaxRetries = 3
	defaultRetryWait  = time.Second
)

// Config configures a Core. The zero value is not valid: start from
// DefaultConfig.
type Config struct {
	// Strategy for failed actions (error-handling-strategy, default fail).
	Strategy Strategy
	// MaxRetries under StrategyRetry (max-retries, default 3).
	MaxRetries int
	// RetryWait is the first back-off; it doubles per attempt
	// (retry-wait-interval, default 1 s).
	RetryWait time.Duration
	// MaxConcurrency bounds the actions running at once across keys
	// (num-async-threads, default 2 x GOMAXPROCS).
	MaxConcurrency int
	// Seed makes event ids deterministic. It must be the same across
	// restarts of the job (derive it from the job identifier and operator
	// id, never from the attempt), or action-state records are not found.
	Seed uint64
	// Owned is the key-group range of this subtask.
	Owned snapshot.KeyGroupRange
	// Logger for the runtime and the actions; nil discards.
	Logger *slog.Logger
	// RunInline lets Input run an Inline action itself when the input's
	// key is idle and fewer than MaxConcurrency tasks run: the body runs at
	// once on the caller's goroutine, while the input's row is still in the
	// CPU cache, and its outputs are in the next Ready. Without it, every
	// task is handed out in Ready, Inline or not. Set it only if the
	// goroutine that feeds the core may run action bodies (the bridge's
	// loop does; it runs Inline tasks from Ready itself).
	RunInline bool
}

// DefaultConfig returns the defaults for a subtask owning all of 0..127.
func DefaultConfig() Config {
	return Config{
		Strategy:       StrategyFail,
		MaxRetries:     defaultMaxRetries,
		RetryWait:      defaultRetryWait,
		MaxConcurrency: 2 * runtime.GOMAXPROCS(0),
		Owned:          snapshot.KeyGroupRange{Start: 0, End: 127},
	}
}

func (c *Config) validate() error {
	switch {
	case c.Strategy > StrategyIgnore:
		return fmt.Errorf("%w: %s %d is not one of fail, retry, ignore", ErrConfig, OptErrorStrategy, c.Strategy)
	case c.MaxRetries < 0:
		return fmt.Errorf("%w: %s is %d; use 0 or more", ErrConfig, OptMaxRetries, c.MaxRetries)
	case c.RetryWait < 0:
		return fmt.Errorf("%w: %s is %v; use 0 or more", ErrConfig, OptRetryWait, c.RetryWait)
	case c.MaxConcurrency < 1:
		return fmt.Errorf("%w: %s is %d; use 1 or more", ErrConfig, OptNumAsync, c.MaxConcurrency)
	case c.Owned.Start < 0 || c.Owned.End < c.Owned.Start:
		return fmt.Errorf("%w: key-group range %d..%d is empty or negative", ErrConfig, c.Owned.Start, c.Owned.End)
	}
	return nil
}

// ApplyOptions sets the fields of c named by the agent options in opts (the
// Flink Agents names above) and returns the options it did not recognise,
// for the caller to check against its own. A malformed value is an error
// naming the option, its value and what is accepted.
func (c *Config) ApplyOptions(opts map[string]string) (rest map[string]string, err error) {
	rest = make(map[string]string)
	for k, v := range opts {
		switch k {
		case OptErrorStrategy:
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "fail":
				c.Strategy = StrategyFail
			case "retry":
				c.Strategy = StrategyRetry
			case "ignore":
				c.Strategy = StrategyIgnore
			default:
				return nil, fmt.Errorf("%w: %s=%q; use fail, retry or ignore", ErrConfig, k, v)
			}
		case OptMaxRetries:
			n, perr := strconv.Atoi(strings.TrimSpace(v))
			if perr != nil || n < 0 {
				return nil, fmt.Errorf("%w: %s=%q; use a whole number >= 0", ErrConfig, k, v)
			}
			c.MaxRetries = n
		case OptNumAsync:
			n, perr := strconv.Atoi(strings.TrimSpace(v))
			if perr != nil || n < 1 {
				return nil, fmt.Errorf("%w: %s=%q; use a whole number >= 1", ErrConfig, k, v)
			}
			c.MaxConcurrency = n
		case OptRetryWait:
			d, perr := ParseDuration(v)
			if perr != nil {
				return nil, fmt.Errorf("%w: %s=%q: %v", ErrConfig, k, v, perr)
			}
			c.RetryWait = d
		default:
			rest[k] = v
		}
	}
	return rest, c.validate()
}

// ParseDuration accepts Flink's duration forms ("1 s", "500 ms", "2min",
// "1000" meaning milliseconds) and Go's ("1.5s").
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
		return time.Duration(n) * time.Millisecond, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return d, nil
	}
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i > 0 {
		num, unit := s[:i], strings.ToLower(strings.TrimSpace(s[i:]))
		f, err := strconv.ParseFloat(num, 64)
		mult := map[string]time.Duration{
			"ms": time.Millisecond, "milli": time.Millisecond, "millis": time.Millisecond,
			"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
			"min": time.Minute, "m": time.Minute, "minute": time.Minute, "minutes": time.Minute,
			"h": time.Hour, "hour": time.Hour, "hours": time.Hour,
		}[unit]
		if err == nil && mult > 0 && f >= 0 {
			return time.Duration(f * float64(mult)), nil
		}
	}
	return 0, fmt.Errorf("not a duration; use e.g. \"1 s\", \"500 ms\" or \"1000\" (milliseconds)")
}
