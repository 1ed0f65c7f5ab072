package server

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestConcurrentClientsModel runs clients in parallel, each doing random
// commands on its own keys and checking every reply against its own model
// (a map), while all of them also INCR one shared counter and APPEND to one
// shared string: the counter must end at the number of INCRs and the
// string hold exactly one mark per APPEND (atomic read-modify-write).
func TestConcurrentClientsModel(t *testing.T) {
	ts := startServer(t, Config{})
	const clients, ops = 6, 600
	var wg sync.WaitGroup
	incrs := make([]int, clients)
	appends := make([]int, clients)
	for id := 0; id < clients; id++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := ts.client()
			rng := rand.New(rand.NewPCG(uint64(id), 99))
			model := map[string]string{}
			key := func() string { return fmt.Sprintf("c%d:k%d", id, rng.IntN(40)) }
			for i := 0; i < ops; i++ {
				switch op := rng.IntN(9); op {
				case 0:
					k, v := key(), strconv.Itoa(rng.IntN(1000))
					if err := c.Set(bg, k, v, 0).Err(); err != nil {
						t.Error(err)
						return
					}
					model[k] = v
				case 1:
					k := key()
					v, err := c.Get(bg, k).Result()
					want, ok := model[k]
					if (err == redis.Nil) == ok || (ok && v != want) {
						t.Errorf("client %d: GET %s = %q (%v), model %q %v", id, k, v, err, want, ok)
						return
					}
				case 2:
					k := key()
					n, err := c.Del(bg, k).Result()
					_, ok := model[k]
					if err != nil || (n == 1) != ok {
						t.Errorf("client %d: DEL %s = %d %v, model has it: %v", id, k, n, err, ok)
						return
					}
					delete(model, k)
				case 3:
					k := key()
					n, err := c.Incr(bg, k).Result()
					cur, ok := model[k]
					want := int64(1)
					if ok {
						x, perr := strconv.ParseInt(cur, 10, 64)
						if perr != nil {
							if err == nil {
								t.Errorf("client %d: INCR of %q succeeded", id, cur)
							}
							continue
						}
						want = x + 1
					}
					if err != nil || n != want {
						t.Errorf("client %d: INCR %s = %d %v, want %d", id, k, n, err, want)
						return
					}
					model[k] = strconv.FormatInt(n, 10)
				case 4:
					k1, k2 := key(), key()
					v1, v2 := "m"+strconv.Itoa(i), "n"+strconv.Itoa(i)
					if err := c.MSet(bg, k1, v1, k2, v2).Err(); err != nil {
						t.Error(err)
						return
					}
					model[k1], model[k2] = v1, v2
				case 5:
					k1, k2 := key(), key()
					vals, err := c.MGet(bg, k1, k2).Result()
					if err != nil {
						t.Error(err)
						return
					}
					for j, k := range []string{k1, k2} {
						want, ok := model[k]
						if (vals[j] == nil) == ok || (ok && vals[j] != want) {
							t.Errorf("client %d: MGET %s = %v, model %q %v", id, k, vals[j], want, ok)
							return
						}
					}
				case 6:
					k := key()
					n, err := c.Append(bg, k, "z").Result()
					model[k] += "z"
					if err != nil || n != int64(len(model[k])) {
						t.Errorf("client %d: APPEND %s = %d %v, model %q", id, k, n, err, model[k])
						return
					}
				case 7:
					if err := c.Incr(bg, "shared:counter").Err(); err != nil {
						t.Error(err)
						return
					}
					incrs[id]++
				case 8:
					if err := c.Append(bg, "shared:string", strconv.Itoa(id)).Err(); err != nil {
						t.Error(err)
						return
					}
					appends[id]++
				}
			}
		}()
	}
	wg.Wait()
	c := ts.client()
	total := 0
	for _, n := range incrs {
		total += n
	}
	if got, _ := c.Get(bg, "shared:counter").Int(); got != total {
		t.Fatalf("shared counter %d after %d INCRs", got, total)
	}
	s := c.Get(bg, "shared:string").Val()
	for id, n := range appends {
		got := 0
		for _, ch := range s {
			if ch == rune('0'+id) {
				got++
			}
		}
		if got != n {
			t.Fatalf("client %d appended %d times, the string has %d marks", id, n, got)
		}
	}
}
