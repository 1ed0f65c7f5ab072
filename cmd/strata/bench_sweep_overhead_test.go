package main

import "testing"

// TestStrataOverheadDefaultsByWorkload: --strata-cache fill leaves Strata's
// process 24 MiB beyond its cache for a reading workload and 32 MiB for
// one that writes (with 24 its collector took 20% of the CPU); a value
// given on the command line wins.
func TestStrataOverheadDefaultsByWorkload(t *testing.T) {
	for _, c := range []struct{ given, workload, want string }{
		{"", "oltp_point_select", readOverhead},
		{"", "oltp_read_only", readOverhead},
		{"", "ycsb_c", readOverhead},
		{"", "oltp_write_only", writeOverhead},
		{"", "oltp_insert", writeOverhead},
		{"", "ycsb_a", writeOverhead},
		{"20MiB", "oltp_write_only", "20MiB"},
		{"40MiB", "oltp_point_select", "40MiB"},
	} {
		if got := strataOverheadFor(c.given, c.workload); got != c.want {
			t.Errorf("strataOverheadFor(%q, %s) = %s, want %s", c.given, c.workload, got, c.want)
		}
	}
	if readOverhead == writeOverhead {
		t.Error("the defaults do not differ: the test proves nothing")
	}
}
