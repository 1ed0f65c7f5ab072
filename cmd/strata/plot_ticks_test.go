package main

import "testing"

// TestValueTicksOneLabelPerNominalSize: stores of two page sizes loaded
// for the same nominal sizes differ in the second decimal of data/memory;
// the axis gets one tick per size, not two labels printed over each other.
func TestValueTicksOneLabelPerNominalSize(t *testing.T) {
	v := valueTicks{0.252, 0.25, 0.503, 0.5, 1, 1.01, 2.01, 2, 4.02, 8, 8.05}
	ticks := v.Ticks(0.2, 10)
	var got []string
	for _, tk := range ticks {
		got = append(got, tk.Label)
	}
	want := []string{"0.25", "0.5", "1", "2", "4.02", "8"}
	if len(got) != len(want) {
		t.Fatalf("ticks %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ticks %q, want %q", got, want)
		}
	}
}
