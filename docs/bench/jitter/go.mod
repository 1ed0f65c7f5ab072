module github.com/stratadb/strata/docs/bench/jitter

go 1.26.0
