package attest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"aimeter/attest"
	"aimeter/benchmark"
)

// A tested party signs its run's bundle; the tester verifies it offline
// with the public key registered for the party. A file changed afterwards
// no longer verifies.
func ExampleVerify() {
	dir, _ := os.MkdirTemp("", "attest-example")
	defer os.RemoveAll(dir)
	if _, err := benchmark.Run(context.Background(), benchmark.Plan{
		Settings:  benchmark.Settings{Scenario: "Offline", Set: []string{"target_qps=1000", "min_duration=50"}},
		OutputDir: dir,
		NoReport:  true,
	}); err != nil {
		fmt.Println(err)
		return
	}
	pub, key, _ := attest.GenerateKey()
	env, err := attest.Sign(dir, key)
	if err != nil {
		fmt.Println(err)
		return
	}
	st, err := attest.Verify(env, pub, dir)
	fmt.Println("verified:", err == nil, st.Predicate.Scenario)

	os.WriteFile(filepath.Join(dir, "result.json"), []byte("{}"), 0o644)
	_, err = attest.Verify(env, pub, dir)
	fmt.Println("after an edit:", errors.Is(err, attest.ErrDigest))
	// Output:
	// verified: true Offline
	// after an edit: true
}
