package derived

import "fmt"

// ReadECPRun reads the bundle of a GB/T run in dir and gives it as a run of
// ECP named name (label as ECPRun.Label): its Table 18 throughput, in
// tokens/s where tokens, else samples/s, with its basis
// (Set.ECPThroughput).
func ReadECPRun(name, dir, label string, tokens bool) (ECPRun, error) {
	b, err := Read(dir)
	if err != nil {
		return ECPRun{}, err
	}
	th, basis, err := Of(b).ECPThroughput(tokens)
	if err != nil {
		return ECPRun{}, fmt.Errorf("%s: %w", dir, err)
	}
	return ECPRun{Name: name, Throughput: th, Basis: basis, Label: label}, nil
}
