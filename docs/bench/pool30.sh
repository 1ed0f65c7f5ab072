#!/bin/bash
# docs/BENCHMARKS.md, "Issue 9's sweep and document 000's scenarios on the final code" (thirtieth
# session): document 000's two simulated scenarios (NVMe + deflate-6, HDD + lz4; uniform and skewed
# keys) at fixed R beside auto, then the scenario where auto has been least steady (NVMe + deflate-6,
# uniform keys) three more times, auto beside R 0. Simulated devices. Run from a directory holding
# the revision's strata binary.
./strata pool-sweep --shares 0,0.25,0.5,0.75,0.95,auto --out pool --log pool/auto.log > pool.txt 2>&1
for i in 1 2 3; do
  ./strata pool-sweep --scenario nvme+deflate --dist uniform --shares 0,auto --out pool-r$i --log pool-r$i/auto.log > pool-r$i.txt 2>&1
done
touch DONE-pool
