package benchmark

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/loadgen"
	"aimeter/mlperfconf"
	"aimeter/sut"
	"aimeter/sut/null"
)

// workerSUT is an in-process model with one worker: each sample takes per,
// one after the other, as the ONNX SUT's single worker runs the OCR
// detector (GB/T scenario T13-1) on a 2-core machine.
type workerSUT struct {
	per  time.Duration
	jobs chan func()
	done sync.WaitGroup
}

func newWorkerSUT(per time.Duration) *workerSUT {
	w := &workerSUT{per: per, jobs: make(chan func(), 1<<16)}
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		for job := range w.jobs {
			time.Sleep(w.per)
			job()
		}
	}()
	return w
}

func (w *workerSUT) Name() string { return "worker" }
func (w *workerSUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	for _, s := range samples {
		w.jobs <- func() { r.Complete(s.ID, nil, 0) }
	}
}
func (w *workerSUT) FlushQueries() {}
func (w *workerSUT) close()        { close(w.jobs); w.done.Wait() }

// TestONNXDefaultsRunValid is issue 39's fourth reproduction: `aimeter run
// --scenario-id T13-1 --scenario SingleStream` (the OCR detector, 24 ms an
// image on this 2-core machine) was INVALID with aimeter's defaults for
// --sut onnx: SingleStream's 50 ms expected latency generated 401 queries,
// run out at 9.6 s of the 10 s; MultiStream and Server ran 100 queries,
// fewer than their early stopping needs (662 and about 460). With the
// defaults every scenario is VALID against such a SUT, on synctest's clock.
func TestONNXDefaultsRunValid(t *testing.T) {
	for _, sc := range []loadgen.Scenario{loadgen.SingleStream, loadgen.MultiStream, loadgen.Server, loadgen.Offline} {
		t.Run(sc.String(), func(t *testing.T) {
			c, err := mlperfconf.Cascade(mlperfconf.CascadeOptions{Scenario: sc, SelfTest: SelfTestConf})
			if err != nil {
				t.Fatal(err)
			}
			s := c.Settings
			gentleDefaults(&sut.Config{Kind: sut.ONNX}, &s, c.Sources)
			synctest.Test(t, func(t *testing.T) {
				w := newWorkerSUT(24 * time.Millisecond)
				defer w.close()
				res, err := loadgen.Run(context.Background(), w, null.QSL{Total: 64}, s, &loadgen.Options{SpinWindow: -1})
				if err != nil {
					t.Fatal(err)
				}
				if sum := res.Summary; !sum.Valid {
					t.Errorf("%v with aimeter's ONNX defaults: INVALID (min duration met %v, min queries met %v, early stopping met %v, %d samples)",
						sc, sum.MinDurationMet, sum.MinQueriesMet, sum.EarlyStoppingMet, res.RecordCount())
				}
			})
		})
	}
}
