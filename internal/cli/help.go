package cli

import (
	"embed"
	"strings"
)

// The long help of each command is a text file in help/, named after the
// command (help/run.txt, help/results_compare.txt): prose that reads and
// diffs as prose, beside the flags that define the command.
//
//go:embed help/*.txt
var helpFiles embed.FS

// helpText is the long help of the command name: help/name.txt without
// its final newline. A missing file is a bug that every test building the
// commands finds.
func helpText(name string) string {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic("aimeter: no help text " + name + ": " + err.Error())
	}
	return strings.TrimSuffix(string(b), "\n")
}
