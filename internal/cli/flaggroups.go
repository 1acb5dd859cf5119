package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagGroup is a titled group of a command's flags in its --help.
type flagGroup struct {
	title string
	names []string
}

// groupFlags makes cmd's usage list its flags in groups, in the order
// given; flags in no group are listed last under "Other flags".
func groupFlags(cmd *cobra.Command, groups ...flagGroup) {
	cmd.SetUsageFunc(func(c *cobra.Command) error {
		return writeGroupedUsage(c.OutOrStderr(), c, groups)
	})
}

func writeGroupedUsage(w io.Writer, c *cobra.Command, groups []flagGroup) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage:\n  %s\n", c.UseLine())
	if c.HasExample() {
		fmt.Fprintf(&b, "\nExamples:\n%s\n", c.Example)
	}
	placed := map[string]bool{}
	section := func(title string, fs *pflag.FlagSet) {
		if fs.HasAvailableFlags() {
			fmt.Fprintf(&b, "\n%s:\n%s", title, fs.FlagUsages())
		}
	}
	for _, g := range groups {
		fs := pflag.NewFlagSet(g.title, pflag.ContinueOnError)
		fs.SortFlags = false // in the order of the group
		for _, name := range g.names {
			if f := c.LocalFlags().Lookup(name); f != nil {
				fs.AddFlag(f)
				placed[name] = true
			}
		}
		section(g.title, fs)
	}
	rest := pflag.NewFlagSet("other", pflag.ContinueOnError)
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if !placed[f.Name] {
			rest.AddFlag(f)
		}
	})
	section("Other flags", rest)
	section("Global flags", c.InheritedFlags())
	_, err := io.WriteString(w, b.String())
	return err
}

// flagNames lists the names of fs's flags in their order of definition.
func flagNames(fs *pflag.FlagSet) []string {
	var names []string
	fs.SortFlags = false
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	return names
}
