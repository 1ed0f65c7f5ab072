package server

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestGarbageInput: connections send random bytes, truncated frames and
// frames with huge declared lengths, then go away (or stall), while a
// well-behaved client works. The server stays up, every reply to the good
// client is right, and the server ends with no connection left behind.
func TestGarbageInput(t *testing.T) {
	ts := startServer(t, Config{Limits: Limits{MaxBulkLen: 1 << 20, MaxCommandBytes: 4 << 20}, IdleTimeout: 2 * time.Second})
	good := ts.client()
	stop := make(chan struct{})
	var goodOps atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			k, v := "good"+strconv.Itoa(i%50), strconv.Itoa(i)
			if err := good.Set(bg, k, v, 0).Err(); err != nil {
				t.Errorf("good client SET: %v", err)
				return
			}
			if got, err := good.Get(bg, k).Result(); err != nil || got != v {
				t.Errorf("good client GET %s = %q %v, want %q", k, got, err, v)
				return
			}
			goodOps.Add(1)
		}
	}()
	valid := []string{
		"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n",
		"*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n",
		"*1\r\n$4\r\nPING\r\n",
		"PING\r\n",
		"*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n",
	}
	rng := rand.New(rand.NewPCG(3, 4))
	payload := func() []byte {
		var b []byte
		switch rng.IntN(6) {
		case 0: // random bytes
			b = make([]byte, rng.IntN(4096))
			for i := range b {
				b[i] = byte(rng.UintN(256))
			}
		case 1: // random bytes that look like RESP
			for n := rng.IntN(50); n > 0; n-- {
				switch rng.IntN(5) {
				case 0:
					b = append(b, '*')
				case 1:
					b = append(b, '$')
				case 2:
					b = append(b, "\r\n"...)
				case 3:
					b = strconv.AppendInt(b, rng.Int64N(1<<40)-1<<20, 10)
				case 4:
					b = append(b, "SET"...)
				}
			}
		case 2: // valid commands, then a truncated one
			for n := rng.IntN(5); n > 0; n-- {
				b = append(b, valid[rng.IntN(len(valid))]...)
			}
			v := valid[rng.IntN(len(valid))]
			b = append(b, v[:rng.IntN(len(v))]...)
		case 3: // huge declared lengths
			b = fmt.Appendf(nil, "*2\r\n$3\r\nGET\r\n$%d\r\nabc", []int64{1 << 21, 1 << 40, 1<<63 - 1}[rng.IntN(3)])
		case 4:
			b = fmt.Appendf(nil, "*%d\r\n$3\r\nSET\r\n", []int64{1 << 21, 1 << 30, 1<<63 - 1}[rng.IntN(3)])
		case 5: // a big argument declared within the limit, never finished
			b = fmt.Appendf(nil, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n%s", 1<<20, bytes.Repeat([]byte("x"), 1000))
		}
		return b
	}
	for round := 0; round < 300; round++ {
		c, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(time.Second))
		c.Write(payload())
		if rng.IntN(3) == 0 {
			// Read whatever comes back, then hang up.
			buf := make([]byte, 1024)
			c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
			c.Read(buf)
		}
		if tc, ok := c.(*net.TCPConn); ok && rng.IntN(4) == 0 {
			tc.SetLinger(0) // hang up with a reset
		}
		c.Close()
	}
	close(stop)
	wg.Wait()
	if goodOps.Load() == 0 {
		t.Fatal("the good client made no progress")
	}
	// Everything but the good client's connection goes away.
	deadline := time.Now().Add(5 * time.Second)
	for ts.srv.Clients() > 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := ts.srv.Clients(); n > 1 {
		t.Fatalf("%d connections left after the garbage clients hung up", n)
	}
	if err := good.Ping(bg).Err(); err != nil {
		t.Fatal(err)
	}
}
