// Command netbench runs netbench's baselines from the shell, for
// scripts/bench-http-peers.sh:
//
//	netbench null [-addr 127.0.0.1:0]
//	    serves a NullServer (a request whose body asks for a stream gets
//	    16 server-sent events), prints its URL, and runs until stdin closes or
//	    the process is stopped.
//	netbench bare -url URL [-c 64] [-d 5s] [-body JSON]
//	    runs BareHTTP and prints "requests errors elapsed_s req_per_s".
//	netbench spin [-d 3s] [-gap 50us]
//	    runs SpinProbe and prints "gaps lost_s longest_us lost_fraction".
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"aimeter/internal/netbench"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "netbench:", err)
		os.Exit(2)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: netbench null|bare|spin [flags]")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	switch args[0] {
	case "null":
		addr := fs.String("addr", "127.0.0.1:0", "listen address")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		ln, err := net.Listen("tcp", *addr)
		if err != nil {
			return err
		}
		s := netbench.ServeNull(ln)
		fmt.Println(s.URL)
		_, _ = io.Copy(io.Discard, os.Stdin) // until stdin closes
		return s.Close()
	case "bare":
		url := fs.String("url", "", "URL to send to")
		c := fs.Int("c", 64, "concurrency (requests in flight, and connections)")
		d := fs.Duration("d", 5*time.Second, "duration")
		body := fs.String("body", `{"model":"null","messages":[{"role":"user","content":"hello"}],"max_tokens":8}`, "JSON body to POST; empty sends GETs")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		var b []byte
		if *body != "" {
			b = []byte(*body)
		}
		r, err := netbench.BareHTTP(context.Background(), *url, b, *c, *d)
		if err != nil {
			return err
		}
		fmt.Printf("%d %d %.3f %.0f\n", r.Requests, r.Errors, r.Elapsed.Seconds(), r.Rate())
		return nil
	case "spin":
		d := fs.Duration("d", 3*time.Second, "duration")
		gap := fs.Duration("gap", 50*time.Microsecond, "the shortest stretch without the CPU counted")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		r := netbench.SpinProbe(*d, *gap)
		fmt.Printf("%d %.3f %.0f %.4f\n", r.Gaps, r.Lost.Seconds(), float64(r.Longest)/1e3, r.LostFraction())
		return nil
	}
	return fmt.Errorf("unknown subcommand %q: want null, bare or spin", args[0])
}
