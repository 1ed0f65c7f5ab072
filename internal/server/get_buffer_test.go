package server

import (
	"bytes"
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestGetReusesItsBuffer: GETs on one connection read into a buffer the
// connection keeps (DB.AppendValue); a shorter value after a longer one,
// a value larger than the buffer kept, and the next small one all come
// back whole and unmixed.
func TestGetReusesItsBuffer(t *testing.T) {
	ts := startServer(t, Config{})
	c := ts.client(func(o *redis.Options) { o.PoolSize = 1 }) // one connection
	ctx := context.Background()
	values := map[string][]byte{
		"long":  bytes.Repeat([]byte("L"), 3000),
		"short": []byte("s"),
		"huge":  bytes.Repeat([]byte("H"), maxGetBuf+1),
	}
	for k, v := range values {
		if err := c.Set(ctx, k, v, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"long", "short", "huge", "short", "long", "short"} {
		got, err := c.Get(ctx, k).Bytes()
		if err != nil || !bytes.Equal(got, values[k]) {
			t.Fatalf("GET %s: %d bytes %.10q…, %v; want %d bytes", k, len(got), got, err, len(values[k]))
		}
	}
	if err := c.Get(ctx, "missing").Err(); err != redis.Nil {
		t.Fatalf("GET missing: %v, want nil reply", err)
	}
}
