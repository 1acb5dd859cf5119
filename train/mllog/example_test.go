package mllog_test

import (
	"fmt"
	"strings"

	"aimeter/train/mllog"
)

// MLPerf Training's :::MLLOG lines, as a training program prints them
// (here behind a launcher's rank prefix), become training events: run_start
// and run_stop bound the training, MLLOG's epoch 0 is GB/T's epoch 1, and an
// eval_accuracy is an accuracy sample. Lines that are not MLLOG are skipped,
// malformed ones counted (and the first ones quoted in Stats).
func ExampleParseAll() {
	out := `0: starting
0: :::MLLOG {"namespace": "", "time_ms": 1700000000000, "event_type": "INTERVAL_START", "key": "run_start", "value": null, "metadata": {"file": "train.py", "lineno": 1}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000001000, "event_type": "INTERVAL_START", "key": "epoch_start", "value": null, "metadata": {"file": "train.py", "lineno": 2, "epoch_num": 0}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000061000, "event_type": "INTERVAL_END", "key": "epoch_stop", "value": null, "metadata": {"file": "train.py", "lineno": 3, "epoch_num": 0}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000062000, "event_type": "POINT_IN_TIME", "key": "eval_accuracy", "value": 0.76, "metadata": {"file": "train.py", "lineno": 4, "epoch_num": 0}}
0: :::MLLOG {"broken
0: :::MLLOG {"namespace": "", "time_ms": 1700000063000, "event_type": "INTERVAL_END", "key": "run_stop", "value": null, "metadata": {"file": "train.py", "lineno": 5, "status": "success"}}
`
	events, st, err := mllog.ParseAll(strings.NewReader(out), mllog.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range events {
		fmt.Printf("%-15s rank %d epoch %d at %5.1f s\n", e.Kind, e.Rank, e.Epoch, float64(e.Wall.UnixMilli()-1700000000000)/1000)
	}
	fmt.Println("lines:", st.Lines, "malformed:", st.Malformed)
	// Output:
	// train_start     rank 0 epoch 0 at   0.0 s
	// epoch_start     rank 0 epoch 1 at   1.0 s
	// epoch_end       rank 0 epoch 1 at  61.0 s
	// accuracy        rank 0 epoch 1 at  62.0 s
	// train_end       rank 0 epoch 0 at  63.0 s
	// lines: 7 malformed: 1
}
