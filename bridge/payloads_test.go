package bridge

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/flinkgo/flinkgo/arrowio"
	"github.com/flinkgo/flinkgo/operator"
)

// TestReadFrameDirect: payloads longer than what the buffered reader holds
// are read from the reader beneath it, whole and in order, also when that
// reader returns short reads.
func TestReadFrameDirect(t *testing.T) {
	sizes := []int{0, 1, 10, 15, 16, 17, 100, 5000, 70000, 3}
	var stream bytes.Buffer
	for i, n := range sizes {
		p := bytes.Repeat([]byte{byte(i + 1)}, n)
		if err := WriteFrame(&stream, FrameData, p); err != nil {
			t.Fatal(err)
		}
	}
	for name, wrap := range map[string]func(io.Reader) io.Reader{
		"plain":    func(r io.Reader) io.Reader { return r },
		"one-byte": iotest.OneByteReader,
		"half":     iotest.HalfReader,
	} {
		t.Run(name, func(t *testing.T) {
			src := wrap(bytes.NewReader(stream.Bytes()))
			r := bufio.NewReaderSize(src, 16)
			for i, n := range sizes {
				f, err := readFrame(r, src, 0, func(_ FrameType, size int) []byte { return make([]byte, size) })
				if err != nil {
					t.Fatalf("frame %d: %v", i, err)
				}
				if f.Type != FrameData || !bytes.Equal(f.Payload, bytes.Repeat([]byte{byte(i + 1)}, n)) {
					t.Fatalf("frame %d: type %v, %d bytes, want %d bytes of %d", i, f.Type, len(f.Payload), n, i+1)
				}
			}
			if _, err := readFrame(r, src, 0, nil); err != io.EOF {
				t.Fatalf("at the end: %v, want io.EOF", err)
			}
		})
	}
	// Cut inside a long payload: an unexpected EOF, as ReadFrame says.
	cut := stream.Bytes()[:stream.Len()-100]
	src := bytes.NewReader(cut)
	r := bufio.NewReaderSize(src, 16)
	var err error
	for err == nil {
		_, err = readFrame(r, src, 0, func(_ FrameType, size int) []byte { return make([]byte, size) })
	}
	if err != io.ErrUnexpectedEOF {
		t.Fatalf("cut stream: %v, want io.ErrUnexpectedEOF", err)
	}
}

func TestPayloadPool(t *testing.T) {
	var p payloadPool
	a := p.get(1000)
	if len(a) != 1000 {
		t.Fatalf("len %d", len(a))
	}
	p.put(a)
	if b := p.get(800); &b[0] != &a[0] || len(b) != 800 {
		t.Fatalf("a kept buffer big enough was not reused")
	}
	if p.kept() != 0 {
		t.Fatalf("kept %d after taking the only buffer", p.kept())
	}
	p.put(a)
	if b := p.get(2000); &b[0] == &a[0] || len(b) != 2000 {
		t.Fatalf("a buffer too small was handed out")
	}
	if p.kept() != 1 {
		t.Fatalf("the small buffer is gone: kept %d", p.kept())
	}
	p.put(make([]byte, payloadPoolBytes+1))
	if p.kept() != 1 {
		t.Fatalf("a buffer over %d bytes was kept", payloadPoolBytes)
	}
	for i := 0; i < payloadPoolMax+5; i++ {
		p.put(make([]byte, 100))
	}
	if p.kept() != payloadPoolMax {
		t.Fatalf("kept %d, the most is %d", p.kept(), payloadPoolMax)
	}
	// Full of small buffers: a bigger one replaces one of them.
	p.put(make([]byte, 5000))
	if b := p.get(5000); cap(b) != 5000 {
		t.Fatalf("the bigger buffer was not kept when the pool was full")
	}
}

// TestBatchRefPayloadReuse: a released batch's payload goes back to the
// pool, unless a string or slice sharing it was handed out.
func TestBatchRefPayloadReuse(t *testing.T) {
	in, err := arrowio.NewInputBuilder(echoCols, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Release()
	schema, err := arrowio.NewInputSchema(in.Schema())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		read  func(r *arrowio.Row) any
		reuse bool
	}{
		{"Value", func(r *arrowio.Row) any { return r.Value(0) }, true},
		{"Str", func(r *arrowio.Row) any { return r.Str(0) }, true},
		{"Int64", func(r *arrowio.Row) any { return r.Int64(1) }, true},
		{"ValueView of BIGINT", func(r *arrowio.Row) any { return r.ValueView(1) }, true},
		{"StrView", func(r *arrowio.Row) any { return r.StrView(0) }, false},
		{"ValueView of STRING", func(r *arrowio.Row) any { return r.ValueView(0) }, false},
		{"Bytes", func(r *arrowio.Row) any { return r.Bytes(0) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := in.Append(3, []byte("k"), 1, true, []any{"value", int64(7)}); err != nil {
				t.Fatal(err)
			}
			enc, err := in.Flush()
			if err != nil {
				t.Fatal(err)
			}
			var pool payloadPool
			payload := pool.get(len(enc))
			copy(payload, enc)
			dec := arrowio.NewDecoder(schema, nil)
			dec.ShareInput()
			defer dec.Close()
			b, err := dec.DecodeBatch(payload)
			if err != nil {
				t.Fatal(err)
			}
			ref := &batchRef{b: b, payload: payload, pool: &pool}
			ref.left.Store(1)
			_ = tc.read(b.Row(0))
			ref.release(1)
			if got := pool.kept() == 1; got != tc.reuse {
				t.Fatalf("payload kept for reuse: %v, want %v", got, tc.reuse)
			}
		})
	}
}

// TestServeKeepsLentStrings: strings an action takes from its input
// without copying them (GetView) and keeps stay intact while many more
// batches pass (the payloads of the batches between are reused), on the
// pool and inline.
func TestServeKeepsLentStrings(t *testing.T) {
	for _, inline := range []bool{true, false} {
		t.Run(fmt.Sprint("inline=", inline), func(t *testing.T) {
			var mu sync.Mutex
			kept := map[string]string{} // expected → the view kept
			ag := &operator.Agent{
				Name: "keep",
				Actions: []operator.Action{{Name: "keep", Listen: []string{operator.InputEventType}, Inline: inline,
					Fn: func(ctx *operator.Context, ev *operator.Event) error {
						in := ev.Input()
						n, _ := in.Value(1).(int64)
						if n%2 == 0 { // every other batch lends its strings
							v, _ := operator.GetView(in, "k")
							s := v.(string)
							mu.Lock()
							kept[strings.Clone(s)] = s
							mu.Unlock()
						}
						return ctx.EmitRow(in)
					}}},
				Output: []operator.Column{{Name: "k", Type: "STRING"}, {Name: "v", Type: "BIGINT"}},
			}
			j := startServe(t, ServerConfig{Agents: []*operator.Agent{ag}}, echoCols)
			rd := j.handshake(j.defaultOpen("keep", map[string]string{"num-async-threads": "4"}), nil, nil)
			const batches, per = 60, 50
			credit := rd.Credit
			sent, got := 0, 0
			for b := 0; b < batches; b++ {
				got += j.awaitCredit(&credit, per)
				rows := make([]row, per)
				for i := range rows {
					n := int64(b) // one value per batch: even batches lend
					k := fmt.Sprintf("key-%05d", b*per+i)
					rows[i] = row{kg: int32(i % 128), key: k, ts: int64(b*per + i), values: []any{k, n}}
				}
				j.data(rows...)
				credit -= per
				sent += per
			}
			j.send(&EndInput{})
			got += len(j.collect(FrameEndAck).rows)
			if got != sent {
				t.Fatalf("%d output rows, want %d", got, sent)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(kept) == 0 {
				t.Fatal("the action kept no string")
			}
			if len(kept) != batches/2*per {
				t.Fatalf("the action kept %d strings, want %d", len(kept), batches/2*per)
			}
			for want, s := range kept {
				if s != want {
					t.Fatalf("a string kept from its input changed from %q to %q", want, s)
				}
			}
			j.send(&Close{})
			if err := j.wait(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestServeLargeOutputFrames: OUTPUT frames far over gatherFrom (sent with
// one gathering write) and small ones (through the buffered writer) arrive
// whole, in order with the WM_ACKs after them, rows from batches whose
// payloads are reused meanwhile.
func TestServeLargeOutputFrames(t *testing.T) {
	j := startServe(t, ServerConfig{Agents: []*operator.Agent{forwardAgent(true)}}, echoCols)
	j.handshake(j.defaultOpen("fwd", map[string]string{"go.output.rows": "1000"}), nil, nil)
	const batches = 6
	big := strings.Repeat("p", 900)
	sizes := []int{300, 2, 300, 1, 250, 300} // rows per batch: large frames and small ones
	n := int64(0)
	for b := 0; b < batches; b++ {
		rows := make([]row, sizes[b])
		for i := range rows {
			k := fmt.Sprintf("%s-%06d", big, n)
			rows[i] = row{kg: int32(n % 128), key: k[len(k)-6:], ts: n, values: []any{k, n}}
			n++
		}
		j.data(rows...)
		j.send(&Watermark{TS: int64(1000 + b)})
	}
	var got int64
	large := 0
	for b := 0; b < batches; b++ {
		c := j.collect(FrameWmAck)
		if len(c.wmAcks) != 1 || c.wmAcks[0] != int64(1000+b) {
			t.Fatalf("batch %d: WM_ACKs %v, want [%d]", b, c.wmAcks, 1000+b)
		}
		for _, r := range c.rows {
			k, _ := r[1].(string)
			if r[2] != got || k != fmt.Sprintf("%s-%06d", big, got) || r[0] != got {
				t.Fatalf("output row %d: %.20q... %v %v", got, k, r[2], r[0])
			}
			got++
		}
		if c.outputs > 0 && len(c.rows)*900 > gatherFrom {
			large++
		}
	}
	if got != n {
		t.Fatalf("%d rows before the last WM_ACK, want %d", got, n)
	}
	if large == 0 {
		t.Fatal("no OUTPUT frame was over gatherFrom: the gathering write was not tested")
	}
	j.send(&EndInput{})
	j.collect(FrameEndAck)
	j.send(&Close{})
	if err := j.wait(); err != nil {
		t.Fatal(err)
	}
}

// TestServeReusesPayloadsOfEmittedRows: when an action emits its input row
// as it is (ctx.EmitRow), every DATA batch is released once its rows are in
// sent OUTPUT frames, so the reader reuses its payload buffers: after a
// warm-up, the Go side allocates far less per batch than a payload's size.
// A lost or extra hold on a batch (the core retaining an emitted row, or an
// output taking over its input's hold) would show here as a new payload
// buffer per batch, or as a panic of batchRef.release.
func TestServeReusesPayloadsOfEmittedRows(t *testing.T) {
	for _, inline := range []bool{true, false} {
		t.Run(fmt.Sprint("inline=", inline), func(t *testing.T) {
			const batchRows, warmup, measured = 256, 40, 120
			j := startServe(t, ServerConfig{Agents: []*operator.Agent{passAgent(inline, true)}}, passCols)
			rd := j.handshake(j.defaultOpen("pass", nil), nil, nil)
			payload := strings.Repeat("x", 4000)
			var frames [][]byte
			for f := 0; f < 4; f++ {
				for i := 0; i < batchRows; i++ {
					k := fmt.Sprintf("customer-%06d", f*batchRows+i)
					if err := j.in.Append(int32(i%128), []byte(k), int64(i), true, []any{k, int64(i), payload}); err != nil {
						t.Fatal(err)
					}
				}
				p, err := j.in.Flush()
				if err != nil {
					t.Fatal(err)
				}
				frames = append(frames, append(AppendFrameHeader(nil, FrameData, len(p)), p...))
			}
			credits := make(chan int64, 4096)
			bytesOut := make(chan int64, 1) // OUTPUT payload bytes; rows are not decoded here, which would allocate
			go func() {
				var n int64
				buf := make([]byte, 0, 4<<20)
				for {
					f, err := ReadFrame(j.br, 0, buf)
					if err != nil {
						close(credits)
						bytesOut <- -1
						return
					}
					if cap(f.Payload) > cap(buf) {
						buf = f.Payload[:0]
					}
					switch f.Type {
					case FrameOutput:
						n += int64(len(f.Payload))
					case FrameCredit:
						m, _ := DecodeControl(f)
						credits <- m.(*Credit).Rows
					case FrameEndAck:
						bytesOut <- n
						return
					}
				}
			}()
			credit := rd.Credit
			var before runtime.MemStats
			for i := 0; i < warmup+measured; i++ {
				if i == warmup {
					runtime.GC()
					runtime.ReadMemStats(&before)
				}
				for credit < batchRows {
					c, ok := <-credits
					if !ok {
						t.Fatal("connection ended")
					}
					credit += c
				}
				j.writeRaw(frames[i%len(frames)])
				credit -= batchRows
			}
			j.send(&EndInput{})
			got := <-bytesOut
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if want := int64((warmup + measured) * batchRows * len(payload)); got < want {
				t.Fatalf("%d bytes of OUTPUT, want at least %d (every row's payload column)", got, want)
			}
			perBatch := float64(after.TotalAlloc-before.TotalAlloc) / measured
			if limit := float64(len(frames[0])) / 2; perBatch > limit {
				t.Fatalf("%.0f bytes allocated per batch of %d bytes; want under %.0f (payload buffers reused)", perBatch, len(frames[0]), limit)
			}
			t.Logf("%.0f bytes allocated per DATA batch of %d bytes", perBatch, len(frames[0]))
			j.send(&Close{})
			if err := j.wait(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
