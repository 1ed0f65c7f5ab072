module github.com/stratadb/strata/docs/bench/dio

go 1.26.0
