// Package serve holds the servers of `aimeter serve`: the reference model
// behind the KServe v2 (Open Inference Protocol) HTTP and gRPC APIs, and an
// OpenAI-compatible streaming simulator with seeded latency distributions
// and injected faults. They give every test and benchmark a real server to
// talk to over real sockets, and a roofline server for measuring the
// client's own speed.
package serve
