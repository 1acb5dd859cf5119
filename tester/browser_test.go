package tester_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/security"
	"github.com/chromedp/chromedp"

	"aimeter/attest"
	"aimeter/internal/browsertest"
	"aimeter/internal/bundletest"
	"aimeter/tester"
)

// TestDashboardInBrowser drives the dashboard in headless Chromium over
// HTTPS: sign in (the form's pre-session token and the session cookie
// work in a real browser, and scripts cannot read the cookie), register a
// test item with the form (its CSRF token), (the tested party
// uploads two runs), view the test item, a run with its report's charts,
// the two runs side by side and the audit trail.
func TestDashboardInBrowser(t *testing.T) {
	s := newService(t, backends(t)[0])
	ctx := browsertest.Context(t, 90*time.Second)
	pub, key, err := attest.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	pubPEM, _ := attest.MarshalPublicKey(pub)
	var testID, token, loginURL, scriptCookies string
	err = chromedp.Run(ctx,
		// The service's certificate is self-signed: this browser profile
		// is a throwaway one.
		security.SetIgnoreCertificateErrors(true),
		chromedp.Navigate(s.ts.URL+"/"),
		chromedp.WaitVisible("#token", chromedp.ByID),
		chromedp.Location(&loginURL),
		chromedp.SendKeys("#token", s.admin, chromedp.ByID),
		chromedp.Click("#signin", chromedp.ByID),
		chromedp.WaitVisible("#register", chromedp.ByID),
		// The session cookie is HttpOnly: no script of the page sees it.
		chromedp.Evaluate(`document.cookie`, &scriptCookies),
		chromedp.SendKeys("#party", "Browser Lab", chromedp.ByID),
		chromedp.SetValue("#retests", "1", chromedp.ByID),
		chromedp.SetValue("#public_key", string(pubPEM), chromedp.ByID),
		chromedp.Click("#register-submit", chromedp.ByID),
		chromedp.WaitVisible("#new-token", chromedp.ByID),
		chromedp.Text("#new-test-id", &testID, chromedp.ByID),
		chromedp.Text("#new-token", &token, chromedp.ByID),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(loginURL, "/login") || testID == "" || !strings.HasPrefix(token, "amt_") {
		t.Fatalf("login page %q, test ID %q, token %q", loginURL, testID, token)
	}
	if scriptCookies != "" {
		t.Errorf("the page's scripts see cookies: %q", scriptCookies)
	}

	// The tested party uploads two runs with the token the page showed.
	c := &tester.Client{BaseURL: s.ts.URL, Token: token, HTTP: s.http}
	var runIDs []int64
	for i := range 2 {
		rep, err := c.Submit(context.Background(), testID, variant(t, bundletest.MLPerf, fmt.Sprintf("browser run %d", i)), key)
		if err != nil {
			t.Fatal(err)
		}
		runIDs = append(runIDs, rep.RunID)
	}

	var runsText, chain, status, verdict string
	var charts int
	var side, items string
	err = chromedp.Run(ctx,
		chromedp.Navigate(s.ts.URL+"/"),
		chromedp.Text("#items", &items, chromedp.ByID),
		chromedp.Navigate(s.ts.URL+"/tests/"+testID),
		chromedp.Text("#runs", &runsText, chromedp.ByID),
		chromedp.Text("#chain", &chain, chromedp.ByID),
		chromedp.Navigate(fmt.Sprintf("%s/runs/%d", s.ts.URL, runIDs[0])),
		chromedp.Text("#status", &status, chromedp.ByID),
		chromedp.Text("#verdict", &verdict, chromedp.ByID),
		chromedp.WaitVisible("#report", chromedp.ByID),
		// The report itself, as the dashboard frames it.
		chromedp.Navigate(fmt.Sprintf("%s/runs/%d/files/report.html", s.ts.URL, runIDs[0])),
		chromedp.Poll(`document.body.dataset.rendered !== undefined`, nil, chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.Evaluate(`document.querySelectorAll(".chart canvas").length`, &charts),
		// Two runs side by side, ticked on the test item's page.
		chromedp.Navigate(s.ts.URL+"/tests/"+testID),
		chromedp.Click(fmt.Sprintf("#pick-%d", runIDs[0]), chromedp.ByID),
		chromedp.Click(fmt.Sprintf("#pick-%d", runIDs[1]), chromedp.ByID),
		chromedp.Click("#compare", chromedp.ByID),
		chromedp.WaitVisible("#side", chromedp.ByID),
		chromedp.Text("#side", &side, chromedp.ByID),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(items, testID) || !strings.Contains(items, "Browser Lab") {
		t.Errorf("test items page: %q", items)
	}
	if strings.Count(runsText, "verified") != 2 {
		t.Errorf("runs table: %q", runsText)
	}
	if !strings.Contains(chain, "intact") {
		t.Errorf("chain: %q", chain)
	}
	if status != "verified" || verdict == "" {
		t.Errorf("run page: status %q verdict %q", status, verdict)
	}
	if charts == 0 {
		t.Error("the report drew no chart")
	}
	for _, want := range []string{fmt.Sprintf("Run %d", runIDs[0]), fmt.Sprintf("Run %d", runIDs[1]), "latency_ns.p99", "headline"} {
		if !strings.Contains(side, want) {
			t.Errorf("side by side lacks %q:\n%s", want, side)
		}
	}
	// Signing out (a form with its CSRF token) ends the session: the
	// dashboard sends the browser to sign in.
	var after string
	err = chromedp.Run(ctx,
		chromedp.Click("header button", chromedp.ByQuery),
		chromedp.WaitVisible("#token", chromedp.ByID),
		chromedp.Navigate(s.ts.URL+"/audit"),
		chromedp.WaitVisible("#token", chromedp.ByID),
		chromedp.Location(&after),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(after, "/login") {
		t.Errorf("after signing out, /audit went to %q", after)
	}
}
