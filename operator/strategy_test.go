package operator

import (
	"errors"
	"testing"
	"time"
)

// flaky fails its first n runs with err, then emits an output.
func flaky(n int, err error, runs *int) *Agent {
	return oneAction(func(ctx *Context, ev *Event) error {
		*runs++
		if err2 := ctx.ShortTerm().Set("touched", true); err2 != nil {
			return err2
		}
		if *runs <= n {
			return err
		}
		return ctx.SendEvent(NewOutput(int64(*runs)))
	})
}

func TestStrategyFail(t *testing.T) {
	runs := 0
	d := newDriver(t, flaky(1, errors.New("boom"), &runs), DefaultConfig(), nil)
	d.input(3, "k", row())
	var afe *ActionFailedError
	if !errors.As(d.err, &afe) || afe.Action != "a" || afe.KeyGroup != 3 || afe.Attempts != 1 || runs != 1 {
		t.Fatalf("err %v runs %d", d.err, runs)
	}
	if _, ok := d.memOf(3, "k").get("touched"); ok {
		t.Fatal("memory of a failed action was applied")
	}
}

func TestStrategyRetryBackoff(t *testing.T) {
	runs := 0
	cfg := DefaultConfig()
	cfg.Strategy, cfg.MaxRetries, cfg.RetryWait = StrategyRetry, 3, 100*time.Millisecond
	d := newDriver(t, flaky(2, errors.New("timeout"), &runs), cfg, nil)
	d.input(0, "k", row())
	if runs != 1 {
		t.Fatalf("runs %d", runs)
	}
	if dl, ok := d.c.NextDeadline(); !ok || dl != 100 {
		t.Fatalf("deadline %d %v, want 100", dl, ok)
	}
	d.tick(99)
	if runs != 1 {
		t.Fatal("retried before the back-off")
	}
	d.tick(1) // t=100: second run fails, back-off doubles to 200
	if runs != 2 {
		t.Fatalf("runs %d", runs)
	}
	d.tick(199)
	if runs != 2 {
		t.Fatal("back-off did not double")
	}
	d.tick(1)
	if runs != 3 || d.err != nil || len(d.outputs()) != 1 || d.c.Stats().ActionsRetried != 2 {
		t.Fatalf("runs %d err %v outputs %v", runs, d.err, d.outputs())
	}
}

func TestStrategyRetryExhaustedAndPermanent(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Strategy, cfg.MaxRetries, cfg.RetryWait = StrategyRetry, 2, 0
	runs := 0
	d := newDriver(t, flaky(10, errors.New("down"), &runs), cfg, nil)
	d.input(0, "k", row())
	var afe *ActionFailedError
	if !errors.As(d.err, &afe) || runs != 3 || afe.Attempts != 3 {
		t.Fatalf("exhausted: err %v runs %d", d.err, runs)
	}
	for _, mk := range []func(error) error{Permanent, NeedsHuman} {
		runs = 0
		d = newDriver(t, flaky(10, mk(errors.New("no")), &runs), cfg, nil)
		d.input(0, "k", row())
		if !errors.As(d.err, &afe) || runs != 1 || afe.Kind == KindRetryable {
			t.Fatalf("%v retried: runs %d err %v", mk(errors.New("x")), runs, d.err)
		}
	}
}

func TestStrategyIgnore(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Strategy = StrategyIgnore
	runs := 0
	d := newDriver(t, flaky(1, Permanent(errors.New("bad row")), &runs), cfg, nil)
	d.input(0, "k", row())
	d.input(0, "k", row())
	if d.err != nil || runs != 2 || len(d.outputs()) != 1 || d.c.Stats().ActionsIgnored != 1 {
		t.Fatalf("err %v runs %d outputs %v", d.err, runs, d.outputs())
	}
}

func TestPanicIsPermanent(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Strategy, cfg.RetryWait = StrategyRetry, 0
	runs := 0
	d := newDriver(t, oneAction(func(ctx *Context, ev *Event) error { runs++; panic("oops") }), cfg, nil)
	d.input(0, "k", row())
	if d.err == nil || runs != 1 || KindOf(d.err) != KindPermanent {
		t.Fatalf("err %v runs %d", d.err, runs)
	}
}

func TestApplyOptions(t *testing.T) {
	cfg := DefaultConfig()
	rest, err := cfg.ApplyOptions(map[string]string{
		"error-handling-strategy": "retry", "max-retries": "5", "retry-wait-interval": "2 s",
		"num-async-threads": "7", "go.batch.size": "10",
	})
	if err != nil || cfg.Strategy != StrategyRetry || cfg.MaxRetries != 5 || cfg.RetryWait != 2*time.Second ||
		cfg.MaxConcurrency != 7 || rest["go.batch.size"] != "10" || len(rest) != 1 {
		t.Fatalf("%+v %v %v", cfg, rest, err)
	}
	for k, v := range map[string]string{"error-handling-strategy": "explode", "max-retries": "-1", "retry-wait-interval": "soon", "num-async-threads": "0"} {
		cfg := DefaultConfig()
		if _, err := cfg.ApplyOptions(map[string]string{k: v}); !errors.Is(err, ErrConfig) {
			t.Errorf("%s=%s: %v", k, v, err)
		}
	}
}
