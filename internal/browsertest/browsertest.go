// Package browsertest starts headless Chromium for the tests that check
// aimeter's pages in a real browser: it finds the browser, skips a test
// without one, and gives a chromedp context with a fresh profile that it
// removes afterwards.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Path finds the browser: $CHROMIUM, else Debian's /usr/bin/chromium,
// else chromium, chromium-browser or google-chrome on $PATH; "" when there
// is none.
func Path() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// startupTimeout bounds how long Chromium may take to start and print its
// DevTools address. chromedp's default is 20 s, which a loaded CI machine
// (every package's tests under -race at once) has exceeded; the time a
// browser needs to start says nothing about the page under test.
const startupTimeout = 3 * time.Minute

// Context starts headless Chromium (a fresh profile, no network services,
// a 1280 × 1000 window) and returns a chromedp context for the page's
// actions bounded by timeout, counted from when the browser is up (its
// start has its own, longer bound). The browser is closed and the profile
// removed when the test ends. It skips the test when no browser is found.
func Context(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	browser := Path()
	if browser == "" {
		t.Skip("no Chromium found (install Debian's chromium or set $CHROMIUM): the page was not checked in a browser")
	}
	// Not t.TempDir: Chromium's helper processes may still write to the
	// profile for a moment after the browser exits, which would fail the
	// test in the cleanup.
	profile, err := os.MkdirTemp("", "aimeter-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 20 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("could not remove the browser profile %s", profile)
	})
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(browser),
		chromedp.UserDataDir(profile),
		chromedp.WSURLReadTimeout(startupTimeout),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 1000),
	)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	// Last in, first out: the browser, then its allocator.
	t.Cleanup(cancelAlloc)
	t.Cleanup(cancelBrowser)
	// The first Run starts the browser and ties it to bctx, so it must not
	// carry the page's deadline (that would close the browser when the
	// deadline passes); the start is bounded by WSURLReadTimeout instead.
	start := time.Now()
	if err := chromedp.Run(bctx); err != nil {
		t.Fatalf("starting %s: %v (after %v)", browser, err, time.Since(start).Round(time.Millisecond))
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Logf("the browser took %v to start", d.Round(time.Millisecond))
	}
	ctx, cancel := context.WithTimeout(bctx, timeout)
	t.Cleanup(cancel)
	return ctx
}

// Problems collects what a page reports as wrong: its uncaught exceptions
// and its console.error and console.assert calls.
type Problems struct {
	mu   sync.Mutex
	list []string
}

// WatchProblems starts collecting the problems of the page of ctx (a
// Context), one line each: "uncaught exception at LINE:COL: TEXT" or
// "console.error: ARGS".
func WatchProblems(ctx context.Context) *Problems {
	p := &Problems{}
	chromedp.ListenTarget(ctx, func(ev any) {
		var line string
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				msg += ": " + d.Exception.Description
			}
			line = fmt.Sprintf("uncaught exception at %d:%d: %s", d.LineNumber, d.ColumnNumber, msg)
		case *runtime.EventConsoleAPICalled:
			if ev.Type != runtime.APITypeError && ev.Type != runtime.APITypeAssert {
				return
			}
			var args []string
			for _, a := range ev.Args {
				if len(a.Value) > 0 {
					args = append(args, string(a.Value))
				} else {
					args = append(args, a.Description)
				}
			}
			line = "console." + string(ev.Type) + ": " + strings.Join(args, " ")
		default:
			return
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		p.list = append(p.list, line)
	})
	return p
}

// List returns the problems seen so far.
func (p *Problems) List() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.list)
}
