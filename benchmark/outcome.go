package benchmark

// LostJobs counts the samples of the run that never completed (a GB/T job
// over its timeout, a sample the SUT never answered), its foreign jobs'
// too: the network client saw no error for them.
func (o *Outcome) LostJobs() uint64 {
	n := o.Result.LostSamples
	if o.Foreign != nil {
		n += o.Foreign.LostSamples
	}
	return n
}
