#!/bin/bash
# docs/BENCHMARKS.md, "The controller on cached writes" (twenty-eighth session), sim28.sh: document
# 000's two simulated scenarios (strata pool-sweep: the pool alone, point reads of sysbench pages,
# injected device latency), uniform and skewed keys. new runs fixed R 0, 0.25, 0.5, 0.75, 0.95 and
# auto (fixed R runs the same code in both builds: the change is the auto controller's); base
# (b8f2551) runs auto only, right after.
for sc in nvme+deflate hdd+lz4; do
  ./new/strata pool-sweep --scenario $sc --dist uniform,skewed --shares 0,0.25,0.5,0.75,0.95,auto \
    --out sim-new-$sc --log sim-new-$sc/log.json > sim-new-$sc.txt 2>&1
  ./base/strata pool-sweep --scenario $sc --dist uniform,skewed --shares auto \
    --out sim-base-$sc --log sim-base-$sc/log.json > sim-base-$sc.txt 2>&1
done
touch DONE-sim
