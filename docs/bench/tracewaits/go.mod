module github.com/stratadb/strata/docs/bench/tracewaits

go 1.26.0

require golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4
