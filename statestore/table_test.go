package statestore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTableAgainstMap runs random creates, lookups and deletes on a Table and
// on a plain map side by side; after every step both hold the same keys
// with the same values, per key group.
func TestTableAgainstMap(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			tab := NewTable[int]()
			type gk struct {
				kg  int32
				key string
			}
			ref := map[gk]int{}
			// Few key groups and keys so that groups fill, grow, empty and
			// refill, and deletes hit runs of colliding home slots.
			for step := range 20000 {
				kg := int32(rng.IntN(3))
				key := fmt.Sprintf("k%d", rng.IntN(300))
				switch op := rng.IntN(10); {
				case op < 5:
					v, created := tab.GetOrCreate(kg, []byte(key))
					_, had := ref[gk{kg, key}]
					if created == had {
						t.Fatalf("step %d: GetOrCreate(%d, %s) created=%v, but the key was there: %v", step, kg, key, created, had)
					}
					*v = step
					ref[gk{kg, key}] = step
				case op < 8:
					tab.Delete(kg, []byte(key))
					delete(ref, gk{kg, key})
				default:
					v, ok := tab.Get(kg, []byte(key))
					want, had := ref[gk{kg, key}]
					if ok != had || (ok && *v != want) {
						t.Fatalf("step %d: Get(%d, %s) = %v, %v; want %d, %v", step, kg, key, v, ok, want, had)
					}
				}
				if tab.Len() != len(ref) {
					t.Fatalf("step %d: Len %d, want %d", step, tab.Len(), len(ref))
				}
			}
			// Every key is found, Range sees each once with its value, and
			// the per-group counts agree.
			seen := map[gk]int{}
			tab.Range(func(kg int32, key []byte, v *int) bool {
				k := gk{kg, string(key)}
				if _, dup := seen[k]; dup {
					t.Fatalf("Range saw %v twice", k)
				}
				seen[k] = *v
				return true
			})
			if len(seen) != len(ref) {
				t.Fatalf("Range saw %d keys, want %d", len(seen), len(ref))
			}
			perGroup := map[int32]int{}
			for k, want := range ref {
				perGroup[k.kg]++
				if seen[k] != want {
					t.Fatalf("Range gave %v = %d, want %d", k, seen[k], want)
				}
				if v, ok := tab.Get(k.kg, []byte(k.key)); !ok || *v != want {
					t.Fatalf("Get(%v) = %v, %v; want %d", k, v, ok, want)
				}
			}
			for kg, n := range perGroup {
				if tab.GroupLen(kg) != n {
					t.Fatalf("GroupLen(%d) = %d, want %d", kg, tab.GroupLen(kg), n)
				}
			}
		})
	}
}

// TestTableSameHash: keys whose hashes are equal (passed in, as a caller of
// the *Hashed methods may) are told apart by their bytes.
func TestTableSameHash(t *testing.T) {
	tab := NewTable[string]()
	const h = 42
	keys := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} // more than fill 8 slots
	for _, k := range keys {
		v, stored, created := tab.GetOrCreateKey(5, []byte(k), h)
		if !created || string(stored) != k {
			t.Fatalf("GetOrCreateKey(%s): created=%v stored=%q", k, created, stored)
		}
		*v = "v" + k
	}
	for _, k := range keys {
		v, ok := tab.GetHashed(5, []byte(k), h)
		if !ok || *v != "v"+k {
			t.Fatalf("GetHashed(%s) = %v, %v", k, v, ok)
		}
		if _, again := tab.GetOrCreateHashed(5, []byte(k), h); again {
			t.Fatalf("GetOrCreateHashed(%s) created it again", k)
		}
	}
	if _, ok := tab.GetHashed(5, []byte("zz"), h); ok {
		t.Fatal("found a key never added")
	}
	if _, ok := tab.GetHashed(4, []byte("a"), h); ok {
		t.Fatal("found a key in another key group")
	}
	if tab.Len() != len(keys) || tab.GroupLen(5) != len(keys) || !slices.Equal(tab.KeyGroups(), []int32{5}) {
		t.Fatalf("Len %d GroupLen %d KeyGroups %v", tab.Len(), tab.GroupLen(5), tab.KeyGroups())
	}
}

// TestTableKeyIsCopied: the table keeps its own copy of the key bytes.
func TestTableKeyIsCopied(t *testing.T) {
	tab := NewTable[int]()
	buf := []byte("key-1")
	v, _ := tab.GetOrCreate(0, buf)
	*v = 9
	copy(buf, "xxxxx")
	if v, ok := tab.Get(0, []byte("key-1")); !ok || *v != 9 {
		t.Fatalf("Get after the caller reused its buffer = %v, %v", v, ok)
	}
	if _, ok := tab.Get(0, buf); ok {
		t.Fatal("found the caller's new bytes")
	}
}

// BenchmarkTableLookup: a lookup of a present key among 10k in 128 key
// groups (the bridge benchmark's key space), keys in random order.
func BenchmarkTableLookup(b *testing.B) {
	tab := NewTable[[64]byte]()
	const keys = 10000
	ks := make([][]byte, keys)
	kgs := make([]int32, keys)
	hs := make([]uint64, keys)
	for i := range ks {
		ks[i] = fmt.Appendf(nil, "customer-%05d", i)
		kgs[i] = int32(i % 128)
		hs[i] = HashKey64(ks[i])
		tab.GetOrCreateKey(kgs[i], ks[i], hs[i])
	}
	order := rand.New(rand.NewPCG(1, 2)).Perm(keys)
	b.ResetTimer()
	for i := range b.N {
		j := order[i%keys]
		if _, _, created := tab.GetOrCreateKey(kgs[j], ks[j], hs[j]); created {
			b.Fatal("created a present key")
		}
	}
}
