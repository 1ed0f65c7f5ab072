#!/bin/bash
# docs/BENCHMARKS.md, "Each direct read woken by the poller" (twenty-sixth session): a random 4 KiB
# direct read's latency through Strata's vfs (AIO and pread(2), one and two goroutines) beside fio's on
# the same file, the 8x load's bbolt file (1.2 GB, larger than anything the host caches). Run from the
# repository at the revision to measure; F as sweep25.sh left it.
F=${F:-/tmp/s25/sw/d-sysbench/bbolt-2684355/db/bbolt.db}
(cd internal/vfs && go test -c -o /tmp/vfs.test)
for round in 1 2 3; do
  STRATA_VFS_BENCH_FILE=$F /tmp/vfs.test -test.run '^$' -test.bench DirectRead -test.benchtime 30000x
  fio --name=r --filename=$F --readonly --rw=randread --bs=4k --direct=1 --ioengine=psync --numjobs=1 --runtime=4 --time_based
done
for e in "--ioengine=libaio --iodepth=1" "--ioengine=libaio --iodepth=1 --userspace_reap=1" \
         "--ioengine=io_uring --iodepth=1" "--ioengine=psync" "--ioengine=psync --numjobs=2"; do
  fio --name=r --filename=$F --readonly --rw=randread --bs=4k --direct=1 $e --runtime=5 --time_based --group_reporting
done
# The 21:30 sitting alternated two such test binaries, one built at 1376702 (base) and one with the change
# (new): for r in 1 2 3; do for t in base new; do STRATA_VFS_BENCH_FILE=$F ./$t.test -test.run '^$' \
#   -test.bench DirectRead/aio -test.benchtime 30000x; done; done
# (at 1376702 BenchmarkDirectRead did not exist yet: copy internal/vfs/direct_read_bench_test.go there first).
# The system calls of one read through AIO (strace slows every call; read the sequence, not the times):
STRATA_VFS_BENCH_FILE=$F strace -f -tt -T -o strace.txt /tmp/vfs.test -test.run '^$' -test.bench 'DirectRead/aio/goroutines=1' -test.benchtime 3000x
