package collect

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/train"
)

// postKind stores one event of kind from rank (on node n<rank>) in s.
func postKind(t *testing.T, s *Server, rank int, kind train.Kind) {
	t.Helper()
	body := fmt.Sprintf(`{"kind":%q,"node":"n%d","rank":%d,"mono_ns":1}`, kind, rank, rank)
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/events", strings.NewReader(body)))
	if w.Code != http.StatusOK {
		t.Fatalf("POST %s: %d %s", body, w.Code, w.Body)
	}
}

// startWait runs s.Wait in a goroutine; the channel gets its result and
// how long it took.
func startWait(ctx context.Context, s *Server, opts WaitOptions) <-chan waited {
	ch := make(chan waited, 1)
	go func() {
		start := time.Now()
		res := s.Wait(ctx, opts)
		ch <- waited{res, time.Since(start)}
	}()
	return ch
}

type waited struct {
	res  WaitResult
	took time.Duration
}

// pending fails if the wait has ended.
func pending(t *testing.T, ch <-chan waited) {
	t.Helper()
	synctest.Wait()
	select {
	case w := <-ch:
		t.Fatalf("the wait ended early: %+v after %v", w.res, w.took)
	default:
	}
}

func TestWaitRanks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(Options{})
		ch := startWait(t.Context(), s, WaitOptions{Ranks: 2, Linger: time.Second})
		postKind(t, s, 0, train.TrainStart)
		postKind(t, s, 1, train.TrainStart)
		postKind(t, s, 0, train.TrainEnd)
		time.Sleep(5 * time.Second)
		pending(t, ch) // one of two ranks done
		postKind(t, s, 1, train.TrainEnd)
		time.Sleep(900 * time.Millisecond)
		pending(t, ch)                 // lingering
		postKind(t, s, 0, train.Power) // a late event restarts the linger
		time.Sleep(900 * time.Millisecond)
		pending(t, ch)
		time.Sleep(300 * time.Millisecond)
		w := <-ch
		if w.res != (WaitResult{End: WaitRanksDone, RanksDone: true}) {
			t.Errorf("result %+v", w.res)
		}
		// 5 s + 0.9 s + 1 s of linger after the late event, which the
		// 100 ms poll sees up to 100 ms late.
		if w.took < 6900*time.Millisecond || w.took > 7100*time.Millisecond {
			t.Errorf("took %v, want about 7 s", w.took)
		}
	})
}

func TestWaitEveryRankSeen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(Options{})
		ch := startWait(t.Context(), s, WaitOptions{UntilRanksDone: true, Poll: 10 * time.Millisecond})
		time.Sleep(time.Second)
		pending(t, ch) // no rank seen yet
		postKind(t, s, 0, train.TrainEnd)
		postKind(t, s, 3, train.TrainStart)
		time.Sleep(time.Second)
		pending(t, ch) // rank 3 not done
		postKind(t, s, 3, train.TrainEnd)
		w := <-ch
		if w.res.End != WaitRanksDone || w.took < 2*time.Second || w.took > 2020*time.Millisecond {
			t.Errorf("result %+v after %v", w.res, w.took)
		}
	})
}

func TestWaitUntil(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      WaitOptions
		ends      []int // the ranks that post train_end
		ranksDone bool
	}{
		{"ranks missing", WaitOptions{Ranks: 2}, []int{0}, false},
		{"not waiting for ranks", WaitOptions{}, []int{0, 1}, true},
		{"lingering", WaitOptions{Ranks: 2, Linger: time.Hour}, []int{0, 1}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := NewServer(Options{})
				opts := tc.opts
				opts.Until = 10 * time.Second
				ch := startWait(t.Context(), s, opts)
				for _, r := range tc.ends {
					postKind(t, s, r, train.TrainEnd)
				}
				w := <-ch
				if w.res != (WaitResult{End: WaitUntil, RanksDone: tc.ranksDone}) || w.took != 10*time.Second {
					t.Errorf("result %+v after %v", w.res, w.took)
				}
			})
		})
	}
}

func TestWaitCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(Options{})
		ctx, cancel := context.WithCancel(t.Context())
		ch := startWait(ctx, s, WaitOptions{Ranks: 1})
		time.Sleep(time.Minute)
		pending(t, ch)
		cancel()
		w := <-ch
		if w.res != (WaitResult{End: WaitCancelled}) || w.took != time.Minute {
			t.Errorf("result %+v after %v", w.res, w.took)
		}
	})
}

func TestCheckEvery(t *testing.T) {
	if checkEvery(100_000) != 0 || checkEvery(100_001) != 2*time.Second {
		t.Error("checkEvery: want no pause up to 100,000 events and 2 s above")
	}
}
