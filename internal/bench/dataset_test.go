package bench

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/stratadb/strata/internal/sysbench"
)

func TestDatasetsDeterministic(t *testing.T) {
	for _, name := range Datasets {
		a, err := NewDataset(name, 7, 1000)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := NewDataset(name, 7, 1000)
		other, _ := NewDataset(name, 8, 1000)
		for _, id := range []uint64{0, 1, 999, 5000} {
			va := a.AppendValue(nil, id, 0)
			if !bytes.Equal(va, b.AppendValue(nil, id, 0)) {
				t.Errorf("%s: row %d differs between generators of one seed", name, id)
			}
			if bytes.Equal(va, other.AppendValue(nil, id, 0)) {
				t.Errorf("%s: row %d equal under two seeds", name, id)
			}
			if bytes.Equal(va, a.AppendValue(nil, id, 1)) {
				t.Errorf("%s: row %d: version 1 equals the loaded version", name, id)
			}
			if bytes.Equal(va, a.AppendValue(nil, id+1, 0)) {
				t.Errorf("%s: rows %d and %d equal", name, id, id+1)
			}
			// Appends after existing content.
			if got := a.AppendValue([]byte("x"), id, 0); !bytes.Equal(got[1:], va) || got[0] != 'x' {
				t.Errorf("%s: AppendValue does not append", name)
			}
		}
		// Keys sort in id order.
		if bytes.Compare(a.AppendKey(nil, 255), a.AppendKey(nil, 256)) >= 0 || len(a.AppendKey(nil, 1)) != KeySize {
			t.Errorf("%s: keys not 8-byte big-endian ids", name)
		}
	}
}

func TestSysbenchDataset(t *testing.T) {
	ds, err := NewDataset("sysbench", 3, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var r, loaded sysbench.Row
	v := ds.AppendValue(nil, 17, 0)
	if len(v) != sysbench.RowSize {
		t.Fatalf("value of %d bytes, want %d", len(v), sysbench.RowSize)
	}
	if err := sysbench.DecodeRow(v, &loaded); err != nil || loaded.ID != 17 {
		t.Fatalf("decoded id %d, err %v", loaded.ID, err)
	}
	if loaded.K < 1 || loaded.K > 1000 || loaded.C[11] != '-' || loaded.C[sysbench.CLen-1] != ' ' {
		t.Errorf("row does not look like sbtest: k %d, c %q", loaded.K, loaded.C)
	}
	if err := sysbench.DecodeRow(ds.AppendValue(nil, 17, 99), &r); err != nil {
		t.Fatal(err)
	}
	if r.ID != 17 || r.C == loaded.C || r.Pad != loaded.Pad {
		t.Errorf("update: id %d, c changed %v, pad kept %v", r.ID, r.C != loaded.C, r.Pad == loaded.Pad)
	}
}

type eventDoc struct {
	ID    string `json:"id"`
	Type  string `json:"type"`
	Actor struct {
		ID    int64  `json:"id"`
		Login string `json:"login"`
		URL   string `json:"url"`
	} `json:"actor"`
	Repo struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
		URL  string `json:"url"`
	} `json:"repo"`
	Payload   map[string]any `json:"payload"`
	Public    bool           `json:"public"`
	CreatedAt time.Time      `json:"created_at"`
}

func TestEventsDataset(t *testing.T) {
	ds, _ := NewDataset("events", 1, 1)
	types := map[string]int{}
	var prev time.Time
	var raw, compressed int
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	var page, v []byte
	const rows = 8000
	for id := uint64(0); id < rows; id++ {
		v = ds.AppendValue(v[:0], id, 0)
		if len(v) < 300 || len(v) > 1700 {
			t.Errorf("event %d: %d bytes, want 300..1700", id, len(v))
		}
		var ev eventDoc
		if err := json.Unmarshal(v, &ev); err != nil {
			t.Fatalf("event %d: %v\n%s", id, err, v)
		}
		if ev.ID != strconv.FormatUint(eventIDBase+id, 10) || ev.Actor.Login == "" || ev.Actor.URL != "https://api.github.com/users/"+ev.Actor.Login ||
			ev.Repo.URL != "https://api.github.com/repos/"+ev.Repo.Name || len(ev.Payload) == 0 || !ev.Public {
			t.Fatalf("event %d incomplete: %s", id, v)
		}
		if ev.CreatedAt.Before(prev) {
			t.Fatalf("event %d created at %v, before the previous %v", id, ev.CreatedAt, prev)
		}
		prev = ev.CreatedAt
		types[ev.Type]++
		if ev.Type == "PushEvent" {
			commits, _ := ev.Payload["commits"].([]any)
			if len(commits) == 0 || ev.Payload["head"] != commits[len(commits)-1].(map[string]any)["sha"] {
				t.Fatalf("push event %d: head is not the last commit: %s", id, v)
			}
		}
		// Compression on 16 KiB pages, one of the page sizes Strata stores.
		if len(page)+len(v) > 16<<10 {
			raw += len(page)
			compressed += len(enc.EncodeAll(page, nil))
			page = page[:0]
		}
		page = append(page, v...)
	}
	if len(types) != len(eventTypes) || types["PushEvent"] < rows*45/100 || types["PushEvent"] > rows*55/100 {
		t.Errorf("event types %v", types)
	}
	if ratio := float64(raw) / float64(compressed); ratio < 3 || ratio > 6 {
		t.Errorf("zstd compresses 16 KiB pages of events %.2fx, want 3..6x", ratio)
	}
	// The same actor has the same login everywhere.
	g := eventGen{key: ds.(*eventsDataset).key}
	if string(g.appendLogin(nil, 42)) != string(g.appendLogin(nil, 42)) || string(g.appendLogin(nil, 42)) == string(g.appendLogin(nil, 43)) {
		t.Error("logins not a function of the actor")
	}
}

func TestDatasetErrors(t *testing.T) {
	if _, err := NewDataset("images", 1, 10); err == nil {
		t.Error("unknown data set accepted")
	}
	if _, err := NewDataset("events", 1, 0); err == nil {
		t.Error("empty table accepted")
	}
	if _, err := NewDataset("sysbench", 1, 1<<32); err == nil {
		t.Error("sysbench table beyond 32-bit k accepted")
	}
}

func TestDatasetsDoNotAllocate(t *testing.T) {
	for _, name := range Datasets {
		ds, _ := NewDataset(name, 1, 1000)
		buf := make([]byte, 0, 4096)
		id := uint64(0)
		allocs := testing.AllocsPerRun(1000, func() {
			buf = ds.AppendKey(buf[:0], id)
			buf = ds.AppendValue(buf[:0], id, id%3)
			id++
		})
		if allocs != 0 {
			t.Errorf("%s: %.1f allocations per row", name, allocs)
		}
	}
}

func BenchmarkDatasetRow(b *testing.B) {
	for _, name := range Datasets {
		b.Run(name, func(b *testing.B) {
			ds, _ := NewDataset(name, 1, 1<<20)
			buf := make([]byte, 0, 4096)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				buf = ds.AppendValue(buf[:0], uint64(i), 0)
			}
			b.SetBytes(int64(len(buf)))
		})
	}
}

func TestMeanRowBytes(t *testing.T) {
	got, err := MeanRowBytes("sysbench", 1, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if want := float64(KeySize + 192); got != want {
		t.Errorf("sysbench rows: %.1f bytes, want %.0f", got, want)
	}
	ev, err := MeanRowBytes("events", 1, 1000)
	if err != nil || ev < 300 || ev > 2000 {
		t.Errorf("events rows: %.1f bytes (%v), want a few hundred", ev, err)
	}
	if _, err := MeanRowBytes("nope", 1, 10); err == nil {
		t.Error("unknown data set accepted")
	}
}
