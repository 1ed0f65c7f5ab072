# docs/BENCHMARKS.md, "Why auto R misses the best fixed R on cached writes" (twenty-eighth session):
# the runs the session's scripts share (sourced by writes28.sh, reads28.sh, cmp28.sh, long28.sh,
# hold28.sh). Every run: sysbench-style load, 2 threads, 64 MiB memory limit, Strata's cache the
# limit less 32 MiB, 4 KiB pages, 10 s warm-up, DURATION measured (5s unless set), the pool trace
# and the controller's Debug log written (STRATA_BENCH_POOLTRACE, STRATA_BENCH_POOLLOG). Builds are
# directories holding strata and strata-bench-child; loads are in loads/strata-N (N rows), made by
# `strata bench sweep --keep`. Copy this file beside the script that sources it.

# run BUILD TAG VALUES [flags]: oltp_write_only, uniform keys, on a fresh copy of the load.
run() {
  local b=$1 tag=$2 v=$3 n; shift 3
  case $v in 0.5x) n=167772;; 1x) n=335544;; 2x) n=671089;; esac
  rm -rf dw; mkdir dw; cp -a loads/strata-$n dw/; sync
  STRATA_BENCH_POOLTRACE=$PWD/tr-$tag STRATA_BENCH_POOLLOG=$PWD/log-$tag ./$b/strata bench sweep \
    --param table-size --strata-bin ./$b/strata-bench-child --mem-limit 64MiB --cache 32MiB \
    --strata-cache fill --strata-overhead 32MiB --warmup 10s --duration ${DURATION:-5s} --keep \
    --strata-page-size 4KiB --distribution uniform --engine strata --workload oltp_write_only \
    --dataset sysbench --values $v --dir dw --json w-$tag.json "$@" > w-$tag.txt 2>&1
}

# rrun BUILD TAG DATASET VALUES DISTRIBUTION: oltp_point_select on the load in dr-DATASET-VALUES
# (made by the point's first run).
rrun() {
  local b=$1 tag=$2 ds=$3 v=$4 dist=$5; mkdir -p dr-$ds-$v
  STRATA_BENCH_POOLTRACE=$PWD/tr-$tag STRATA_BENCH_POOLLOG=$PWD/log-$tag ./$b/strata bench sweep \
    --param table-size --strata-bin ./$b/strata-bench-child --mem-limit 64MiB --cache 32MiB \
    --strata-cache fill --strata-overhead 32MiB --warmup 10s --duration ${DURATION:-5s} --keep \
    --strata-page-size 4KiB --distribution $dist --engine strata --workload oltp_point_select \
    --dataset $ds --values $v --dir dr-$ds-$v --json rd-$tag.json > rd-$tag.txt 2>&1
}
