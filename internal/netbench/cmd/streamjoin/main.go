// Command streamjoin compares a streaming run's client-side chunk arrival
// times with the server's own send times, for scripts/bench-net.sh:
//
//	streamjoin -bundle RUN_DIR -send-log FILE
//
// RUN_DIR is the output directory of `aimeter run --sut openai` (its
// tokens.parquet, records.parquet and the passes' start times in settings.json);
// FILE is the --send-log of the `aimeter serve openai` it ran against. Run
// one stream at a time against a fresh server: the join pairs requests by
// order (see netbench.JoinStreams). It prints one line:
//
//	requests N tokens M p50_us X p99_us Y max_us Z min_us W abs_p99_us V
//
// (client arrival − server send; abs_p99 is the 99th percentile of its
// absolute value: the server notes a send just after its write, so a
// descheduled server can be passed by the client).
package main

import (
	"flag"
	"fmt"
	"os"

	"aimeter/bundle"
	"aimeter/internal/netbench"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "streamjoin:", err)
		os.Exit(2)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("streamjoin", flag.ContinueOnError)
	dir := fs.String("bundle", "", "run directory of the client")
	logPath := fs.String("send-log", "", "send log of the server")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || *logPath == "" {
		return fmt.Errorf("-bundle and -send-log are required")
	}
	b, err := bundle.Read(*dir)
	if err != nil {
		return err
	}
	f, err := os.Open(*logPath)
	if err != nil {
		return err
	}
	defer f.Close()
	sends, err := netbench.ReadSendLog(f)
	if err != nil {
		return fmt.Errorf("%s: %w", *logPath, err)
	}
	j, err := netbench.JoinStreams(netbench.ClientStreams(b), sends)
	if err != nil {
		return err
	}
	us := func(ns int64) string { return fmt.Sprintf("%.1f", float64(ns)/1e3) }
	fmt.Printf("requests %d tokens %d p50_us %s p99_us %s max_us %s min_us %s abs_p99_us %s\n", j.Requests, j.Tokens,
		us(j.Percentile(0.50)), us(j.Percentile(0.99)), us(j.Percentile(1)), us(j.Percentile(0)), us(j.AbsPercentile(0.99)))
	return nil
}
