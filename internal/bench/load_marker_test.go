package bench

import (
	"testing"

	"github.com/stratadb/strata/internal/pagestore"
)

// TestLoadMarkerResolvesDefaultPageSize: a Strata load asked without a page
// size is marked with the default it got, so a load made under another
// default (its marker says 0) is not reused as this one's, while the same
// request, or the same page size asked explicitly, reuses it.
func TestLoadMarkerResolvesDefaultPageSize(t *testing.T) {
	spec := testSpec(t, "strata", "oltp_point_select")
	m := markerFor(spec)
	if m.PageSize != pagestore.DefaultPageSize {
		t.Fatalf("marker page size %d, want the default %d", m.PageSize, pagestore.DefaultPageSize)
	}
	m.NextID = uint64(m.TableSize)
	if !m.sameData(spec) {
		t.Error("the same request does not reuse its load")
	}
	explicit := spec
	explicit.Config.PageSize = pagestore.DefaultPageSize
	if !m.sameData(explicit) {
		t.Error("the default page size asked explicitly does not reuse the load")
	}
	old := m
	old.PageSize = 0 // a load made when the default was another size
	if old.sameData(spec) {
		t.Error("a load marked with page size 0 (an earlier default) is reused")
	}
	peer := testSpec(t, "bbolt", "oltp_point_select")
	if got := markerFor(peer).PageSize; got != 0 {
		t.Errorf("bbolt's marker page size %d, want 0", got)
	}
}
