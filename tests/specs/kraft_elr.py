"""Vanlightly/kafka-tlaplus's ``kafka_replication_v_elr_simple.tla`` (commit a30c45e), ported:
KIP-966's eligible leader replicas on the simplified KRaft v3.5 spec, without unclean recovery.

The ELR spec is the v3.5 spec with the proposal's changes, so the port is ``kraft_v35.py``'s
with ``elr`` on (each change marked there "the ELR spec"):

- the controller keeps an ELR beside the ISR (in its partition state and in every
  PartitionChangeRecord): the ISR may empty; ``UpdateElrOnIsrChange`` tops the ELR up to
  MinISR from the replicas leaving the ISR, or cuts it; the controller elects from the ISR,
  else from the unfenced ELR members (moving the one elected into the ISR);
- a broker keeps its broker epoch across a clean shutdown and sends it when it registers; an
  epoch of 0 (after an unclean shutdown) makes the controller remove it from the ISR and the
  ELR (``ProcessUncleanBroker``);
- the leader advances the HWM only with its ISR at MinISR, counts its own LEO in its replica
  state, and leaves the HWM to the fetches when it writes or becomes leader; the epoch's start
  offset is ``partition_data.epoch_start_offset`` (``Nil`` after a truncation, 0 at start);
- no AvoidLastReplicaStanding guard on unclean shutdowns, and the invariants of
  ``v_elr_properties.tla`` (``ValidFetching``, ``ValidControllerIsrAndElr``, the ELR in
  ``ValidLeaderMaximalISR``).

Parameters as ``kraft_v35.py``'s (the defaults: the spec's cfg, its VIEW on).
"""

import importlib.util
from pathlib import Path

_v35 = importlib.util.spec_from_file_location(
    "kraft_v35", Path(__file__).with_name("kraft_v35.py"))
assert _v35 is not None and _v35.loader is not None
_mod = importlib.util.module_from_spec(_v35)
_v35.loader.exec_module(_mod)


def build(clean_limit: int = 0, unclean_limit: int = 1, fence_limit: int = 1,
          ap_limit: int = 1, view: bool = True, fetch_cap: int = 12):
    return _mod.kraft(clean_limit, unclean_limit, fence_limit, ap_limit, view, fetch_cap,
                      elr=True)
