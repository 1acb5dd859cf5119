package cli

import "github.com/spf13/cobra"

// newServeCommand is `aimeter serve`: the servers aimeter itself provides,
// one subcommand each.
func newServeCommand(st *State) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the reference model (KServe v2 HTTP/gRPC) or an OpenAI-compatible simulator, to benchmark against",
		Args:  cobra.NoArgs,
	}
	cmd.SetOut(st.Stdout)
	cmd.AddCommand(newServeOpenAICommand(st))
	cmd.AddCommand(newServeKServeCommand(st))
	return cmd
}
