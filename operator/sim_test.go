package operator

import (
	"flag"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"

	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/flinkgo/flinkgo/statestore"
)

// The simulation drives cores through generated schedules of inputs over
// many keys, watermarks, barriers and action completions in random order
// (an action left in the pool for long is a slow action), crashes at every
// step, restores from the last checkpoint (possibly into another number of
// subtasks), replays the input after that checkpoint, and compares with a
// crash-free run. Rerun one case with -sim.seed=N (-sim.crash=K).

var (
	simSeed  = flag.Int64("sim.seed", -1, "run only this simulation seed")
	simCrash = flag.Int("sim.crash", -1, "crash only at this step")
)

const simMaxKG = 128

type simOp struct {
	kind byte // 'i' input, 'w' watermark, 'b' barrier
	key  string
	kg   int32
	n    int64 // input: global index; watermark: timestamp; barrier: checkpoint id
}

func genSchedule(rng *rand.Rand, inputs, keys int) []simOp {
	var ops []simOp
	ckpt, wm := int64(0), int64(0)
	for i := 0; i < inputs; i++ {
		k := rng.Intn(keys)
		key := fmt.Sprintf("key-%d", k)
		ops = append(ops, simOp{kind: 'i', key: key, kg: int32(statestore.HashKey64([]byte(key)) % simMaxKG), n: int64(i)})
		if rng.Intn(8) == 0 {
			wm = int64(i + 1) // inputs 0..i came before it
			ops = append(ops, simOp{kind: 'w', n: wm})
		}
		if rng.Intn(12) == 0 {
			ckpt++
			ops = append(ops, simOp{kind: 'b', n: ckpt})
		}
	}
	return ops
}

// simAgent: "count" updates memory and makes a durable call, then sends
// "scored"; "emit" turns that into an output row.
type simAgent struct {
	bodies map[string]int // completed bodies per (key, seq, action)
	calls  int
	inline bool // "count" is Inline, and the cores run it inside Input (Config.RunInline)
}

func (s *simAgent) agent() *Agent {
	done := func(ctx *Context) {
		s.bodies[fmt.Sprintf("%x/%d/%s", ctx.Key(), ctx.Seq(), ctx.ActionName())]++
	}
	return &Agent{Name: "sim", Output: []Column{{"key", "STRING"}, {"n", "BIGINT"}, {"count", "BIGINT"}, {"score", "BIGINT"}}, Actions: []Action{
		{Name: "count", Listen: []string{InputEventType}, Inline: s.inline, Fn: func(ctx *Context, ev *Event) error {
			n, err := GetInt64(ev.Input(), "n")
			if err != nil {
				return err
			}
			m := ctx.ShortTerm()
			c, _ := m.Int64("stats.count")
			score, err := ctx.Durable("score", n, func() (any, error) { s.calls++; return n * 3, nil })
			if err != nil {
				return err
			}
			recent, _ := m.Get("stats.recent")
			l, _ := recent.([]any)
			l = append(append([]any(nil), l...), n)
			if len(l) > 3 {
				l = l[len(l)-3:]
			}
			if err := m.Set("stats.count", c+1); err != nil {
				return err
			}
			if err := m.Set("stats.recent", l); err != nil {
				return err
			}
			if err := ctx.Sensory().Set("tmp", n); err != nil {
				return err
			}
			done(ctx)
			return ctx.SendEvent(NewEvent("scored", map[string]any{"score": score, "count": c + 1}))
		}},
		{Name: "emit", Listen: []string{"scored"}, Fn: func(ctx *Context, ev *Event) error {
			n, _ := ctx.Sensory().Get("tmp")
			done(ctx)
			return ctx.SendEvent(NewOutput(string(ctx.Key()), n, ev.Attrs["count"], ev.Attrs["score"]))
		}},
	}}
}

type simOut struct {
	id   UUID
	vals string
}

// simCluster is a set of cores, one per subtask, with the tasks they handed out.
type simCluster struct {
	t      testing.TB
	cores  []*Core
	ranges []snapshot.KeyGroupRange
	pool   [][]*Task // per core
	outs   map[string][]simOut
	snaps  map[int64][][]byte // checkpoint -> encoded sections (complete when all cores cut)
	cutOut map[int64]map[string][]simOut
	cutPos map[int64]int
	fed    []map[int64]bool // per core: inputs fed whose output is pending
	err    error
	store  statestore.ActionStore
	label  string
}

func splitRanges(p int) []snapshot.KeyGroupRange {
	var rs []snapshot.KeyGroupRange
	for i := 0; i < p; i++ { // as Flink's KeyGroupRangeAssignment
		rs = append(rs, snapshot.KeyGroupRange{Start: int32(i * simMaxKG / p), End: int32((i+1)*simMaxKG/p - 1)})
	}
	return rs
}

func newCluster(t testing.TB, a *Agent, p int, store statestore.ActionStore, rng *rand.Rand) *simCluster {
	cl := &simCluster{t: t, ranges: splitRanges(p), outs: map[string][]simOut{}, snaps: map[int64][][]byte{},
		cutOut: map[int64]map[string][]simOut{}, cutPos: map[int64]int{}, store: store}
	for _, r := range cl.ranges {
		cfg := DefaultConfig()
		cfg.Owned, cfg.Seed, cfg.MaxConcurrency = r, 42, 1+rng.Intn(4)
		cfg.RunInline = a.Actions[0].Inline
		c, err := NewCore(a, cfg, store)
		if err != nil {
			t.Fatal(err)
		}
		cl.cores = append(cl.cores, c)
		cl.pool = append(cl.pool, nil)
		cl.fed = append(cl.fed, map[int64]bool{})
	}
	return cl
}

func (cl *simCluster) owner(kg int32) int {
	for i, r := range cl.ranges {
		if r.Contains(kg) {
			return i
		}
	}
	panic("no owner")
}

func (cl *simCluster) collect(i int) {
	rd := cl.cores[i].Ready()
	if rd.Err != nil && cl.err == nil {
		cl.err = rd.Err
	}
	for _, e := range rd.Emits {
		switch e.Kind {
		case EmitOutput:
			k := string(e.Key)
			cl.outs[k] = append(cl.outs[k], simOut{e.EventID, fmt.Sprint(e.Values)})
			delete(cl.fed[i], e.Values[1].(int64))
		case EmitWatermark:
			for n := range cl.fed[i] {
				if n < e.Timestamp { // watermark ts encodes how many inputs came before it
					cl.t.Fatalf("watermark %d acknowledged before input %d finished (%s core %d of %d, fed %v)", e.Timestamp, n, cl.label, i, len(cl.cores), cl.fed[i])
				}
			}
		case EmitSnapshot:
			for _, s := range e.Sections {
				b, err := snapshot.EncodeSection(s)
				if err != nil {
					cl.t.Fatal(err)
				}
				cl.snaps[e.CheckpointID] = append(cl.snaps[e.CheckpointID], b)
			}
			if i == len(cl.cores)-1 { // the last subtask has cut: checkpoint complete
				cp := map[string][]simOut{}
				for k, v := range cl.outs {
					cp[k] = append([]simOut(nil), v...)
				}
				cl.cutOut[e.CheckpointID] = cp
				if cl.store != nil {
					if _, err := cl.store.Flush(); err != nil {
						cl.t.Fatal(err)
					}
				}
			}
		}
	}
	cl.pool[i] = append(cl.pool[i], rd.Tasks...)
}

// feed delivers op to the cores; watermark timestamps are the number of
// inputs fed before them, so the ack check above can use them.
func (cl *simCluster) feed(op simOp, pos int) {
	switch op.kind {
	case 'i':
		i := cl.owner(op.kg)
		if err := cl.cores[i].Input(op.kg, []byte(op.key), op.n, true, row("n", op.n)); err != nil {
			cl.t.Fatal(err)
		}
		cl.fed[i][op.n] = true
		cl.collect(i)
	case 'w':
		for i, c := range cl.cores {
			c.Watermark(op.n)
			cl.collect(i)
		}
	case 'b':
		cl.cutPos[op.n] = pos + 1
		for i, c := range cl.cores {
			c.Barrier(op.n)
			cl.collect(i)
		}
	}
}

// step completes one random pending task; false if none.
func (cl *simCluster) step(rng *rand.Rand) bool {
	var busy []int
	for i, p := range cl.pool {
		if len(p) > 0 {
			busy = append(busy, i)
		}
	}
	if len(busy) == 0 {
		return false
	}
	i := busy[rng.Intn(len(busy))]
	j := rng.Intn(len(cl.pool[i]))
	t := cl.pool[i][j]
	cl.pool[i] = append(cl.pool[i][:j], cl.pool[i][j+1:]...)
	cl.cores[i].Complete(t.Run())
	cl.collect(i)
	return true
}

func (cl *simCluster) finish(rng *rand.Rand) {
	for i, c := range cl.cores {
		c.EndInput()
		cl.collect(i)
	}
	for cl.step(rng) {
	}
	for i := range cl.cores {
		cl.collect(i)
	}
}

func (cl *simCluster) memory() map[string]string {
	out := map[string]string{}
	for _, c := range cl.cores {
		c.table.Range(func(kg int32, key []byte, ks *keyState) bool {
			out[string(key)] = fmt.Sprint(ks.mem.items())
			return true
		})
	}
	return out
}

// run plays ops from pos; crashAt >= 0 stops after that many steps.
func (cl *simCluster) run(rng *rand.Rand, ops []simOp, pos, crashAt int) (steps int, crashed bool) {
	for pos < len(ops) {
		if crashAt >= 0 && steps == crashAt {
			return steps, true
		}
		steps++
		if rng.Intn(3) == 0 && cl.step(rng) {
			continue
		}
		cl.feed(ops[pos], pos)
		pos++
	}
	for cl.step(rng) {
		if crashAt >= 0 && steps == crashAt {
			return steps, true
		}
		steps++
	}
	cl.finish(rng)
	return steps, false
}

func TestSimulation(t *testing.T) {
	seeds := 30
	if testing.Short() {
		seeds = 6
	}
	for _, withStore := range []bool{false, true} {
		for seed := int64(0); seed < int64(seeds); seed++ {
			if *simSeed >= 0 && seed != *simSeed {
				continue
			}
			simulate(t, seed, withStore)
		}
	}
}

func simulate(t *testing.T, seed int64, withStore bool) {
	rng := rand.New(rand.NewSource(seed))
	ops := genSchedule(rng, 40+rng.Intn(40), 3+rng.Intn(10))
	shapes := [][2]int{{1, 1}, {2, 3}, {3, 1}, {1, 2}}
	shape := shapes[seed%int64(len(shapes))]
	// A third of the seeds run "count" inside Input (Config.RunInline),
	// against a reference that hands every task out in Ready.
	inline := seed%3 == 2

	ref := &simAgent{bodies: map[string]int{}}
	refCl := newCluster(t, ref.agent(), 1, nil, rand.New(rand.NewSource(seed)))
	total, _ := refCl.run(rand.New(rand.NewSource(seed+1)), ops, 0, -1)
	if refCl.err != nil {
		t.Fatalf("seed %d: reference run failed: %v", seed, refCl.err)
	}
	refMem := refCl.memory()

	for crash := 0; crash <= total; crash++ {
		if *simCrash >= 0 && crash != *simCrash {
			continue
		}
		where := fmt.Sprintf("seed %d crash %d store %v inline %v shape %v (rerun: go test ./operator -run TestSimulation -sim.seed=%d -sim.crash=%d)", seed, crash, withStore, inline, shape, seed, crash)
		var as statestore.ActionStore
		if withStore {
			as = statestore.NewMemory()
			if seed%2 == 1 {
				// Odd seeds: a store that lends its records, as the Kafka
				// store does: the core hands it reused records.
				as = &lendingStore{Memory: statestore.NewMemory()}
			}
		}
		sa := &simAgent{bodies: map[string]int{}, inline: inline}
		crng := rand.New(rand.NewSource(seed*7919 + int64(crash)))
		cl := newCluster(t, sa.agent(), shape[0], as, crng)
		_, crashed := cl.run(crng, ops, 0, crash)
		if cl.err != nil {
			t.Fatalf("%s: %v", where, cl.err)
		}
		if !crashed {
			continue
		}
		// Tasks running at the crash may or may not have finished their body.
		for _, p := range cl.pool {
			for _, task := range p {
				if crng.Intn(2) == 0 {
					task.Run()
				}
			}
		}
		// Restore from the last complete checkpoint.
		var last int64
		for id := range cl.cutOut {
			last = max(last, id)
		}
		re := newCluster(t, sa.agent(), shape[1], as, crng)
		re.label = "restored " + where
		pos := 0
		committed := map[string][]simOut{}
		if last > 0 {
			pos, committed = cl.cutPos[last], cl.cutOut[last]
			per := make([][]*snapshot.Section, shape[1])
			for _, b := range cl.snaps[last] {
				kg := peekKeyGroup(t, b)
				i := re.owner(kg)
				s, err := snapshot.DecodeSectionFor(b, re.ranges[i])
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				per[i] = append(per[i], s)
			}
			for i, c := range re.cores {
				if err := c.Restore(last, per[i]); err != nil {
					t.Fatalf("%s: restore: %v", where, err)
				}
				re.collect(i)
			}
		}
		re.run(crng, ops, pos, -1)
		if re.err != nil {
			t.Fatalf("%s: after restore: %v", where, re.err)
		}
		for key, want := range refCl.outs {
			got := append(append([]simOut(nil), committed[key]...), re.outs[key]...)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: key %s outputs\n got %v\nwant %v", where, key, got, want)
			}
		}
		if mem := re.memory(); !reflect.DeepEqual(mem, refMem) {
			t.Fatalf("%s: memory differs\n got %v\nwant %v", where, mem, refMem)
		}
		if withStore {
			var twice []string
			for k, n := range sa.bodies {
				if n > 1 {
					twice = append(twice, k)
				}
			}
			sort.Strings(twice)
			if len(twice) > 0 {
				t.Fatalf("%s: completed action bodies ran again: %v", where, twice)
			}
		}
	}
}

func peekKeyGroup(t testing.TB, b []byte) int32 {
	s, err := snapshot.DecodeSection(b)
	if err != nil {
		t.Fatal(err)
	}
	return s.KeyGroup
}

// lendingStore is a statestore.Lender, as the Kafka store is: it keeps only
// the encoded form of the records it is not allowed to keep (decoded again,
// so that a replay sees exactly what was encoded at Put), and the running
// records Put as they are.
type lendingStore struct{ *statestore.Memory }

func (s *lendingStore) LendsRecords() {}

func (s *lendingStore) Put(r *statestore.Record) error {
	if r.Status == statestore.StatusRunning && len(r.Updates) == 0 && len(r.Events) == 0 {
		return s.Memory.Put(r) // may be held: not lent
	}
	return s.put(r, s.Memory.Put)
}

func (s *lendingStore) PutDurable(r *statestore.Record) error { return s.put(r, s.Memory.PutDurable) }

func (s *lendingStore) put(r *statestore.Record, put func(*statestore.Record) error) error {
	v, err := statestore.EncodeRecord(r)
	if err != nil {
		return err
	}
	d, err := statestore.DecodeRecord(r.Key.Bytes(), v)
	if err != nil {
		return err
	}
	return put(d)
}
