#!/usr/bin/env bash
# gpuslice serve and the dialects: a KAI, Koordinator or DRA cluster, or a KAI,
# Koordinator or DRA policy, is refused before serving (exit 2, naming what serve
# cannot read or write); it never starts to answer "node unregistered".
set -u
BIN="$1"; SRC="$2"; SNAP="$SRC/examples/snapshot"; DATA="$SRC/tests/cli/data"
source "$(dirname "$0")/expect.sh"
LISTEN=(--listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0)

# The issue's case: a KAI snapshot with KAI's policy.
expect kai-snapshot-kai-policy 2 "--policy.*kai-binpack is kai's policy, which serve cannot serve.*KAI's GPU labels" -- \
  timeout 10 "$BIN" serve --snapshot "$SNAP/kai-cluster.yaml" --policy kai-binpack "${LISTEN[@]}"
expect kai-snapshot-hami-policy 2 "kai-cluster.yaml.*no GPU node serve can read: 2 nodes through KAI's GPU labels" -- \
  timeout 10 "$BIN" serve --snapshot "$SNAP/kai-cluster.yaml" "${LISTEN[@]}"
expect koordinator-snapshot-koordinator-policy 2 "koordinator is koordinator's policy, which serve cannot serve.*device-allocated is not written" -- \
  timeout 10 "$BIN" serve --snapshot "$SNAP/koordinator-cluster.yaml" --policy koordinator "${LISTEN[@]}"
expect koordinator-snapshot-hami-policy 2 "koordinator-cluster.yaml.*no GPU node serve can read: 2 nodes through Koordinator's Device objects" -- \
  timeout 10 "$BIN" serve --snapshot "$SNAP/koordinator-cluster.yaml" --policy fgd "${LISTEN[@]}"
# A HAMi cluster with KAI's policy would bind with HAMi's annotations: refused too.
expect hami-snapshot-kai-policy 2 "kai-spread is kai's policy, which serve cannot serve" -- \
  timeout 10 "$BIN" serve --snapshot "$DATA/kubectl-cluster.yaml" --policy kai-spread "${LISTEN[@]}"
# A DRA cluster: kube-scheduler's DynamicResources allocates its claims, no
# extender binds them; refused under dra and under HAMi's policies alike.
DRA="$SRC/examples/dra/hami-dra-cluster.yaml"
expect dra-snapshot-dra-policy 2 "--policy.*dra is Kubernetes' DRA allocation, which serve cannot serve" -- \
  timeout 10 "$BIN" serve --snapshot "$DRA" --policy dra "${LISTEN[@]}"
expect dra-snapshot-hami-policy 2 "hami-dra-cluster.yaml.*no GPU node serve can read: 2 nodes through HAMi-DRA's ResourceSlices" -- \
  timeout 10 "$BIN" serve --snapshot "$DRA" "${LISTEN[@]}"
# A live cluster: the policy is refused before any connection is tried.
expect live-koordinator-policy 2 "koordinator-most is koordinator's policy" -- \
  timeout 10 "$BIN" serve --kubeconfig "$DATA/no-such-kubeconfig" --policy koordinator-most "${LISTEN[@]}"
report
