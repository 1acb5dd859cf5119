#!/bin/sh
# An AutoML run (Annex B): the initial model (generation 0, 138 neurons),
# one epoch, a mutation to 266 neurons, one more epoch whose number restarts at 1.
cat <<'MLLOG'
:::MLLOG {"time_ms": 1700000000000, "key": "run_start", "value": null, "metadata": {}}
:::MLLOG {"time_ms": 1700000000001, "key": "aimeter_generation_stop", "value": null, "metadata": {"generation": 0, "neurons": 138}}
:::MLLOG {"time_ms": 1700000000010, "key": "epoch_start", "value": null, "metadata": {"epoch_num": 1}}
:::MLLOG {"time_ms": 1700000001000, "key": "epoch_stop", "value": null, "metadata": {"epoch_num": 1}}
:::MLLOG {"time_ms": 1700000001001, "key": "eval_start", "value": null, "metadata": {"epoch_num": 1}}
:::MLLOG {"time_ms": 1700000001100, "key": "eval_stop", "value": null, "metadata": {"epoch_num": 1}}
:::MLLOG {"time_ms": 1700000001101, "key": "eval_accuracy", "value": 0.4, "metadata": {"epoch_num": 1}}
:::MLLOG {"time_ms": 1700000002000, "key": "aimeter_generation_start", "value": null, "metadata": {"generation": 1}}
:::MLLOG {"time_ms": 1700000004000, "key": "aimeter_generation_stop", "value": null, "metadata": {"generation": 1, "neurons": 266}}
:::MLLOG {"time_ms": 1700000004010, "key": "epoch_start", "value": null, "metadata": {"epoch_num": 1}}
:::MLLOG {"time_ms": 1700000005000, "key": "epoch_stop", "value": null, "metadata": {"epoch_num": 1}}
:::MLLOG {"time_ms": 1700000005001, "key": "eval_start", "value": null, "metadata": {"epoch_num": 1}}
:::MLLOG {"time_ms": 1700000005100, "key": "eval_stop", "value": null, "metadata": {"epoch_num": 1}}
:::MLLOG {"time_ms": 1700000005101, "key": "eval_accuracy", "value": 0.71, "metadata": {"epoch_num": 1}}
:::MLLOG {"time_ms": 1700000006000, "key": "run_stop", "value": null, "metadata": {"status": "success"}}
MLLOG
