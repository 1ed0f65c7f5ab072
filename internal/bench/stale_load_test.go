package bench

import (
	"context"
	"strings"
	"testing"
)

// TestReuseByAnotherBuildIsNoted: a run that reuses data loaded by another
// build says so in its notes (the engine's format and dictionary are the
// loader's); a run of the loading build does not, nor does a fresh load.
func TestReuseByAnotherBuildIsNoted(t *testing.T) {
	build := "aaaa"
	old := loaderBuild
	loaderBuild = func() string { return build }
	t.Cleanup(func() { loaderBuild = old })

	spec := testSpec(t, "map", "oltp_point_select")
	spec.Reuse = true
	run := func() []string {
		t.Helper()
		res, err := Run(context.Background(), spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.Notes
	}
	stale := func(notes []string) bool {
		return strings.Contains(strings.Join(notes, "\n"), "loaded by another build")
	}
	if notes := run(); stale(notes) {
		t.Errorf("fresh load noted as another build's: %q", notes)
	}
	if notes := run(); stale(notes) {
		t.Errorf("reuse by the loading build noted as another's: %q", notes)
	}
	build = "bbbb"
	notes := run()
	if !stale(notes) || !strings.Contains(strings.Join(notes, "\n"), "(aaaa; this run's: bbbb)") {
		t.Errorf("reuse by another build: notes %q do not name both builds", notes)
	}
	m, ok := reusableLoad(spec.Config.Dir, spec)
	if !ok || m.Build != "aaaa" {
		t.Errorf("marker after reuse: %+v, %v; want the loader's build aaaa kept", m, ok)
	}
}

// TestUnrecordedLoaderBuildIsNoted: a marker written before builds were
// recorded (the twenty-fifth session's loads) counts as another build's
// for a binary that records one.
func TestUnrecordedLoaderBuildIsNoted(t *testing.T) {
	for _, c := range []struct {
		loaded, own string
		want        bool
	}{
		{"", "cccc", true},
		{"", "", false},
		{"cccc", "", true},
		{"cccc", "cccc", false},
	} {
		old := loaderBuild
		loaderBuild = func() string { return c.own }
		got := staleLoadNote(loadMarker{Build: c.loaded}) != ""
		loaderBuild = old
		if got != c.want {
			t.Errorf("loaded by %q, running %q: noted %v, want %v", c.loaded, c.own, got, c.want)
		}
	}
}
