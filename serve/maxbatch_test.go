package serve

import (
	"testing"

	"aimeter/sut/reference/mlp"
)

// TestDefaultMaxBatch: the server's default batch is the reference
// model's largest, which aimeter serve kserve's --max-batch shows.
func TestDefaultMaxBatch(t *testing.T) {
	if DefaultMaxBatch != mlp.MaxBatch {
		t.Errorf("DefaultMaxBatch %d, the reference model's MaxBatch %d", DefaultMaxBatch, mlp.MaxBatch)
	}
}
