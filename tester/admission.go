package tester

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"aimeter/benchmark"
	"aimeter/loadgen"
	"aimeter/recompute"
	"aimeter/sysinfo"
)

// Defaults of the limits in Options (see docs/server.md, "Limits and
// admission").
const (
	// DefaultMaxConcurrentUploads bounds the uploads whose bodies are
	// being received at once when Options.MaxConcurrentUploads is 0.
	DefaultMaxConcurrentUploads = 8
	// DefaultMaxQueuedUploads bounds the received uploads that wait for
	// memory to recompute when Options.MaxQueuedUploads is 0.
	DefaultMaxQueuedUploads = 64
	// DefaultMaxQueueWait bounds how long a received upload waits for
	// memory when Options.MaxQueueWait is 0.
	DefaultMaxQueueWait = 10 * time.Minute
	// DefaultUploadTimeout bounds the reading of an upload's body when
	// Options.UploadTimeout is 0.
	DefaultUploadTimeout = 15 * time.Minute
)

// busyRetryAfter is the Retry-After of a 503: how long a client should
// wait before it tries again, in whole seconds.
const busyRetryAfter = 5

// AutoMemoryBudget is the memory budget of recomputations when
// Options.MemoryBudget is 0 (and of `aimeter server --memory-budget
// auto`), from the process's memory limits as sysinfo.MemoryLimit reads
// them for `aimeter run`: half of the smallest of the cgroup v2 or v1
// memory limit of the process's cgroup and the machine's memory. The other
// half is for what the estimates do not count: the Go runtime, HTTP and
// TLS buffers, the database and the page cache of the staged files. Its
// GoLimit, the Go runtime's soft memory limit, is three quarters of that
// limit, so the collector works harder before the kernel's OOM killer
// acts. When no limit can be read the budget is loadgen.DefaultMaxMemory.
func AutoMemoryBudget(l sysinfo.MemoryLimits) benchmark.MemoryBudget {
	best := benchmark.MemoryBudget{}
	for _, src := range []sysinfo.MemorySource{sysinfo.SourceCgroupV2, sysinfo.SourceCgroupV1, sysinfo.SourceRAM} {
		lim := l.Source(src)
		if lim.Bytes == 0 {
			continue
		}
		b := benchmark.MemoryBudget{
			Bytes:   int64(min(lim.Bytes/2, math.MaxInt64)),
			GoLimit: int64(min(lim.Bytes/4*3, math.MaxInt64)),
			Source:  fmt.Sprintf("auto: half of %s %s (%s)", src, loadgen.FormatBytes(float64(lim.Bytes)), lim.From),
		}
		if best.Bytes == 0 || b.Bytes < best.Bytes {
			best = b
		}
	}
	if best.Bytes == 0 {
		return benchmark.MemoryBudget{Bytes: loadgen.DefaultMaxMemory, Source: "auto: loadgen's default; no memory limit of the machine or the process could be read"}
	}
	return best
}

// ProcessMemoryBudget is AutoMemoryBudget of this process's limits.
func ProcessMemoryBudget() benchmark.MemoryBudget {
	l, _ := sysinfo.MemoryLimit()
	return AutoMemoryBudget(l)
}

// admission decides which uploads are received and recomputed at once:
// a gate of receive slots taken before a body is read, and a weighted
// semaphore of memory taken, by the estimate of recompute.EstimateNeed,
// before the recomputation. Uploads that do not fit wait in a FIFO queue
// of bounded length for a bounded time.
type admission struct {
	receiving chan struct{} // one token per upload being received
	budget    int64         // bytes; <= 0: no memory gate
	maxQueued int           // < 0: no queue
	maxWait   time.Duration

	mu     sync.Mutex
	used   int64
	queue  []*waiter
	active int // uploads holding memory
}

type waiter struct {
	need  int64
	ready chan struct{} // closed when granted
}

func newAdmission(maxReceiving int, budget int64, maxQueued int, maxWait time.Duration) *admission {
	return &admission{receiving: make(chan struct{}, maxReceiving), budget: budget, maxQueued: maxQueued, maxWait: maxWait}
}

// tryReceive takes a receive slot, or says there is none free; release
// gives it back.
func (a *admission) tryReceive() (release func(), ok bool) {
	select {
	case a.receiving <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-a.receiving }) }, true
	default:
		return nil, false
	}
}

// busyError: the queue is full, or the wait for memory ran out.
type busyError struct {
	queued  int
	timeout time.Duration // > 0 when the wait ran out
}

func (e *busyError) Error() string {
	if e.timeout > 0 {
		return fmt.Sprintf("the service is busy: the upload waited %s for memory to recompute it, with %d upload(s) queued", e.timeout, e.queued)
	}
	return fmt.Sprintf("the service is busy: %d upload(s) queued for memory to recompute them", e.queued)
}

// tooBigError: a need above the whole budget.
type tooBigError struct{ need, budget int64 }

func (e *tooBigError) Error() string {
	return fmt.Sprintf("needs %d bytes, above the budget of %d", e.need, e.budget)
}

// acquire takes need bytes of the budget, waiting in the queue when they
// are not free; release gives them back. The error is a *tooBigError, a
// *busyError or ctx's.
func (a *admission) acquire(ctx context.Context, need int64) (release func(), err error) {
	if a.budget <= 0 {
		return func() {}, nil
	}
	if need > a.budget {
		return nil, &tooBigError{need: need, budget: a.budget}
	}
	a.mu.Lock()
	if len(a.queue) == 0 && a.used+need <= a.budget {
		a.used += need
		a.active++
		a.mu.Unlock()
		return a.releaser(need), nil
	}
	if a.maxQueued < 0 || len(a.queue) >= a.maxQueued {
		n := len(a.queue)
		a.mu.Unlock()
		return nil, &busyError{queued: n}
	}
	w := &waiter{need: need, ready: make(chan struct{})}
	a.queue = append(a.queue, w)
	a.mu.Unlock()

	t := time.NewTimer(a.maxWait)
	defer t.Stop()
	select {
	case <-w.ready:
		return a.releaser(need), nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-t.C:
		err = &busyError{timeout: a.maxWait}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	select {
	case <-w.ready: // granted as the wait ended: give it back
		a.used -= need
		a.active--
	default:
		for i, q := range a.queue {
			if q == w {
				a.queue = append(a.queue[:i], a.queue[i+1:]...)
				break
			}
		}
	}
	if be, ok := err.(*busyError); ok {
		be.queued = len(a.queue)
	}
	a.grantLocked()
	return nil, err
}

func (a *admission) releaser(need int64) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			a.mu.Lock()
			a.used -= need
			a.active--
			a.grantLocked()
			a.mu.Unlock()
		})
	}
}

// grantLocked grants the queue's head while it fits, first come first
// served.
func (a *admission) grantLocked() {
	for len(a.queue) > 0 && a.used+a.queue[0].need <= a.budget {
		w := a.queue[0]
		a.queue = a.queue[1:]
		a.used += w.need
		a.active++
		close(w.ready)
	}
}

// queued is the number of uploads waiting for memory.
func (a *admission) queued() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.queue)
}

// setLimits checks Options' limits and makes the admission.
func (s *Server) setLimits(o Options) error {
	switch {
	case o.MaxUploadBytes < 0:
		return fmt.Errorf("server: Options.MaxUploadBytes is %d: give a size above 0, or 0 for the default", o.MaxUploadBytes)
	case o.MemoryBudget < -1:
		return fmt.Errorf("server: Options.MemoryBudget is %d: give bytes above 0, 0 for the default or -1 for none", o.MemoryBudget)
	case o.MaxConcurrentUploads < 0:
		return fmt.Errorf("server: Options.MaxConcurrentUploads is %d: give a number above 0, or 0 for the default", o.MaxConcurrentUploads)
	case o.MaxQueuedUploads < -1:
		return fmt.Errorf("server: Options.MaxQueuedUploads is %d: give a number above 0, 0 for the default or -1 for no queue", o.MaxQueuedUploads)
	case o.MaxQueueWait < 0:
		return fmt.Errorf("server: Options.MaxQueueWait is %s: give a duration above 0, or 0 for the default", o.MaxQueueWait)
	case o.UploadTimeout < 0:
		return fmt.Errorf("server: Options.UploadTimeout is %s: give a duration above 0, or 0 for the default", o.UploadTimeout)
	}
	budget := o.MemoryBudget
	if budget == 0 {
		budget = ProcessMemoryBudget().Bytes
	}
	conc := cmp.Or(o.MaxConcurrentUploads, DefaultMaxConcurrentUploads)
	queued := cmp.Or(o.MaxQueuedUploads, DefaultMaxQueuedUploads)
	s.admit = newAdmission(conc, budget, queued, cmp.Or(o.MaxQueueWait, DefaultMaxQueueWait))
	s.uploadTimeout = cmp.Or(o.UploadTimeout, DefaultUploadTimeout)
	return nil
}

// BusyReply is the JSON body of a 503 answer to an upload, sent with a
// Retry-After header: the service cannot take the upload now.
type BusyReply struct {
	ErrorReply
	// Queued is the number of received uploads waiting for memory.
	Queued int `json:"queued"`
	// RetryAfter is the Retry-After header's seconds.
	RetryAfter int `json:"retry_after_s"`
}

func writeBusy(w http.ResponseWriter, msg string, queued int) {
	w.Header().Set("Retry-After", strconv.Itoa(busyRetryAfter))
	writeJSON(w, http.StatusServiceUnavailable, BusyReply{ErrorReply: ErrorReply{Error: msg}, Queued: queued, RetryAfter: busyRetryAfter})
}

// admitMemory estimates what recomputing the bundle in dir needs and
// waits for the budget to hold it; release gives it back.
func (s *Server) admitMemory(ctx context.Context, dir string) (release func(), _ *refusal) {
	need, err := recompute.EstimateNeed(dir)
	if err != nil {
		return nil, refuse(http.StatusUnprocessableEntity, "the bundle cannot be recomputed from its raw records: "+err.Error())
	}
	release, err = s.admit.acquire(ctx, need.Bytes)
	var big *tooBigError
	var busy *busyError
	switch {
	case errors.As(err, &big):
		return nil, refuse(http.StatusRequestEntityTooLarge, fmt.Sprintf(
			"the bundle is too large for this service: its %d records, %d token times and %d table rows need an estimated %s (%d bytes) of memory to recompute, above the service's whole memory budget of %s (%d bytes); "+
				"the tester can raise it with aimeter server --memory-budget (and give the service that much more memory)",
			need.Records, need.TokenTimes, need.TableRows, loadgen.FormatBytes(float64(need.Bytes)), need.Bytes, loadgen.FormatBytes(float64(big.budget)), big.budget))
	case errors.As(err, &busy):
		ref := refuse(http.StatusServiceUnavailable, busy.Error()+"; retry later")
		ref.busy, ref.queued = true, busy.queued
		return nil, ref
	case err != nil:
		return nil, refuse(http.StatusServiceUnavailable, "the upload was abandoned while it waited for memory: "+err.Error())
	}
	s.log.Info("upload admitted", "records", need.Records, "need_bytes", need.Bytes)
	return release, nil
}
