package server

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestScanExactlyOnce: while other clients add and delete keys, a full SCAN
// returns every key present throughout exactly once (and only keys that
// existed at some point).
func TestScanExactlyOnce(t *testing.T) {
	ts := startServer(t, Config{})
	c := ts.client()
	const stable = 1500
	var kv []any
	for i := 0; i < stable; i++ {
		kv = append(kv, fmt.Sprintf("stable:%05d", i), "v")
	}
	if err := c.MSet(bg, kv...).Err(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wc := ts.client()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for {
				select {
				case <-stop:
					return
				default:
				}
				k := fmt.Sprintf("churn:%05d", rng.IntN(5000))
				if rng.IntN(2) == 0 {
					wc.Set(bg, k, "x", 0)
				} else {
					wc.Del(bg, k)
				}
			}
		}()
	}
	for _, count := range []int64{1, 7, 100, 1000} {
		seen := map[string]int{}
		var cursor uint64
		calls := 0
		for {
			keys, next, err := c.Scan(bg, cursor, "", count).Result()
			if err != nil {
				t.Fatal(err)
			}
			calls++
			for _, k := range keys {
				seen[k]++
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
		for i := 0; i < stable; i++ {
			if n := seen[fmt.Sprintf("stable:%05d", i)]; n != 1 {
				t.Fatalf("COUNT %d: stable:%05d seen %d times", count, i, n)
			}
		}
		for k, n := range seen {
			if n != 1 {
				t.Fatalf("COUNT %d: %s seen %d times", count, k, n)
			}
			if !strings.HasPrefix(k, "stable:") && !strings.HasPrefix(k, "churn:") {
				t.Fatalf("unknown key %q", k)
			}
		}
		if count == 1 && calls < stable {
			t.Fatalf("COUNT 1 scan took %d calls for %d keys", calls, stable)
		}
	}
	close(stop)
	wg.Wait()
}

func TestScanMatchAndType(t *testing.T) {
	ts := startServer(t, Config{})
	c := ts.client()
	for _, k := range []string{"user:1", "user:2", "user:10", "usr:3", "order:1", "a*b", "a?b", "axb"} {
		c.Set(bg, k, "v", 0)
	}
	scanAll := func(args ...any) []string {
		t.Helper()
		var out []string
		cursor := "0"
		for {
			res, err := c.Do(bg, append([]any{"SCAN", cursor}, args...)...).Slice()
			if err != nil {
				t.Fatal(err)
			}
			cursor = res[0].(string)
			for _, k := range res[1].([]any) {
				out = append(out, k.(string))
			}
			if cursor == "0" {
				return out
			}
		}
	}
	for _, tc := range []struct {
		args []any
		want []string
	}{
		{[]any{"MATCH", "user:*"}, []string{"user:1", "user:10", "user:2"}},
		{[]any{"MATCH", "user:?", "COUNT", "1"}, []string{"user:1", "user:2"}},
		{[]any{"MATCH", "us*:[13]*"}, []string{"user:1", "user:10", "usr:3"}},
		{[]any{"MATCH", "user:[^1]"}, []string{"user:2"}},
		{[]any{"MATCH", `a\*b`}, []string{"a*b"}},
		{[]any{"MATCH", "a?b"}, []string{"a*b", "a?b", "axb"}},
		{[]any{"MATCH", "nothing*"}, nil},
		{[]any{"TYPE", "string", "MATCH", "o*"}, []string{"order:1"}},
		{[]any{"TYPE", "hash"}, nil},
	} {
		if got := scanAll(tc.args...); !slices.Equal(got, tc.want) {
			t.Errorf("SCAN %v = %v, want %v", tc.args, got, tc.want)
		}
	}
	// go-redis's iterator.
	var got []string
	it := c.Scan(bg, 0, "user:*", 2).Iterator()
	for it.Next(bg) {
		got = append(got, it.Val())
	}
	if it.Err() != nil || len(got) != 3 {
		t.Fatalf("ScanIterator: %v %v", got, it.Err())
	}
	_ = redis.Nil
}

// TestGlobMatch compares globMatch with a regular-expression translation of
// the same pattern on random patterns and strings.
func TestGlobMatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	alphabet := []byte("ab*?[]^-\\")
	for trial := 0; trial < 50000; trial++ {
		p := make([]byte, rng.IntN(8))
		for i := range p {
			p[i] = alphabet[rng.IntN(len(alphabet))]
		}
		re, ok := globRegexp(p)
		if !ok {
			continue
		}
		s := make([]byte, rng.IntN(6))
		for i := range s {
			s[i] = "ab*?[-"[rng.IntN(6)]
		}
		if got, want := globMatch(p, s), re.Match(s); got != want {
			t.Fatalf("globMatch(%q, %q) = %v, regexp %s says %v", p, s, got, re, want)
		}
	}
	// Patterns that take exponential time with Redis's recursive matcher.
	long := []byte(strings.Repeat("a", 5000))
	if globMatch([]byte(strings.Repeat("*a", 30)+"b"), long) {
		t.Fatal("matched")
	}
}

// globRegexp translates well-formed patterns (classes closed, no '\' at
// the end) to a regexp; it reports false for others.
func globRegexp(p []byte) (*regexp.Regexp, bool) {
	var b strings.Builder
	b.WriteString(`(?s)^`)
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '\\':
			if i+1 == len(p) {
				return nil, false
			}
			i++
			b.WriteString(regexp.QuoteMeta(string(p[i])))
		case '[':
			j := i + 1
			neg := j < len(p) && p[j] == '^'
			if neg {
				j++
			}
			var items []string
			for j < len(p) && p[j] != ']' {
				switch {
				case p[j] == '\\' && j+1 < len(p):
					items = append(items, regexp.QuoteMeta(string(p[j+1])))
					j += 2
				case p[j] == '\\':
					return nil, false
				case j+2 < len(p) && p[j+1] == '-':
					lo, hi := p[j], p[j+2]
					if lo > hi {
						lo, hi = hi, lo
					}
					items = append(items, fmt.Sprintf(`\x{%x}-\x{%x}`, lo, hi))
					j += 3
				default:
					items = append(items, regexp.QuoteMeta(string(p[j])))
					j++
				}
			}
			if j == len(p) {
				return nil, false
			}
			if len(items) == 0 {
				if neg {
					b.WriteString(".")
				} else {
					b.WriteString(`[^\x00-\x{10FFFF}]`)
				}
			} else {
				b.WriteString("[")
				if neg {
					b.WriteString("^")
				}
				b.WriteString(strings.Join(items, ""))
				b.WriteString("]")
			}
			i = j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	return re, err == nil
}
