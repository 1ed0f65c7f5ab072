#!/bin/bash
# docs/BENCHMARKS.md, "A climb that creeps is stalled" (twenty-fifth session): twelve auto runs of
# document 000's nvme + deflate scenario, skewed keys, at the scenario's own 20 us reads, each with the
# controller's trace (pa<N>/log.json; docs/bench/ctltrace.py prints it). Run beside a strata built from
# 7c25313 (the runs used its tree before --read-latency was added; the controller is the same). The six runs
# before these (ps1-ps6, 18:40-18:43) were the same command with --shares 0,auto, three of them beside
# two busy loops (sh -c 'while :; do :; done').
for i in $(seq 10 21); do
  ./strata pool-sweep --scenario nvme+deflate --dist skewed --shares auto --out pa$i --log pa$i/log.json 2>&1 | grep "skewed | auto" > pa$i.txt
done
touch autoloop.done
