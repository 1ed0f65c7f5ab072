package main

import (
	"slices"
	"strings"

	"github.com/stratadb/strata/internal/bench"
)

func knownWorkload(name string) bool { return slices.Contains(bench.Workloads(), name) }

func workloadList() string { return strings.Join(bench.Workloads(), ", ") }
