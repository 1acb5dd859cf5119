package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"aimeter/serve"
)

type serveKServeFlags struct {
	http, grpc string
	modelName  string
	weights    string
	maxBatch   int
	quiet      bool
	nullModel  bool
}

// newServeKServeCommand is `aimeter serve kserve`: the reference model over
// the KServe v2 protocol, HTTP/REST and gRPC.
func newServeKServeCommand(st *State) *cobra.Command {
	var f serveKServeFlags
	cmd := &cobra.Command{
		Use:   "kserve",
		Short: "Serve the reference model over KServe v2 (Open Inference Protocol) HTTP/REST and gRPC",
		Long:  helpText("serve_kserve"),
		Example: `  aimeter serve kserve
  aimeter run --sut kserve --url http://127.0.0.1:8000 --scenario Offline
  aimeter run --sut kserve --grpc --url 127.0.0.1:8001 --scenario Server`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServeKServe(cmd.Context(), st, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.http, "http", "127.0.0.1:8000", "HTTP/REST listen address (empty = no HTTP)")
	fl.StringVar(&f.grpc, "grpc", "127.0.0.1:8001", "gRPC listen address (empty = no gRPC)")
	fl.StringVar(&f.modelName, "model-name", "fashion-mlp", "the name the model is served under")
	fl.StringVar(&f.weights, "weights", "", "trained weights file (default: the demo's, in the user cache directory)")
	fl.IntVar(&f.maxBatch, "max-batch", serve.DefaultMaxBatch, "largest batch the model runs")
	fl.BoolVar(&f.nullModel, "null-model", false, "run no model: answer every request at once with zero logits of the right shape (a roofline server for benchmarking clients)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no training progress")
	cmd.SetOut(st.Stdout)
	return cmd
}

func runServeKServe(parent context.Context, st *State, f *serveKServeFlags) error {
	if f.http == "" && f.grpc == "" {
		return usageError("--http and --grpc are both empty: nothing to serve")
	}
	if f.maxBatch <= 0 {
		return usageError("--max-batch must be ≥ 1")
	}
	ctx, stop := interruptible(parent, st)
	defer stop()
	opts := serve.KServeOptions{ModelName: f.modelName, ServerVersion: Version, MaxBatch: f.maxBatch, NullModel: f.nullModel}
	if !f.nullModel {
		ref, err := obtainReference(ctx, st, &demoFlags{dataset: "auto", weights: f.weights, quiet: f.quiet})
		if err != nil {
			return withCode(ExitFailure, err)
		}
		opts.Model = ref.Model
		fmt.Fprintf(st.Stdout, "Reference model: MLP %v, %s\n", ref.Model.Layers(), ref.How)
	} else {
		fmt.Fprintf(st.Stdout, "Null model: every request answered at once with zero logits [N, %d]\n", serve.NullClasses)
	}
	err := serve.ServeKServe(ctx, opts, serve.KServeServeOptions{
		HTTP: f.http, GRPC: f.grpc,
		Ready: func(srv *serve.Listening) {
			if srv.HTTPAddr != nil {
				fmt.Fprintf(st.Stdout, "KServe v2 HTTP/REST: %s (model %q)\n", srv.HTTPURL(), f.modelName)
			}
			if srv.GRPCAddr != nil {
				fmt.Fprintf(st.Stdout, "KServe v2 gRPC: %s (model %q)\n", srv.GRPCAddr, f.modelName)
			}
			fmt.Fprintln(st.Stdout, "Serving until interrupted (Ctrl-C).")
		},
	})
	var le *serve.ListenError
	switch {
	case errors.As(err, &le):
		flag := "--http"
		if le.Protocol == "gRPC" {
			flag = "--grpc"
		}
		return withCode(ExitFailure, fmt.Errorf("%s %s: %w", flag, le.Addr, le.Err))
	case err != nil:
		return withCode(ExitFailure, err)
	}
	fmt.Fprintln(st.Stdout, "Stopped.")
	return nil
}
