// Package model is aimeter's built-in reference workload: a small image
// classifier with real inference and real training in pure Go (standard
// library only, no assembly, no cgo), used to benchmark inference end to
// end on Fashion-MNIST (28×28 grey images, 10 classes).
//
// # Why an MLP
//
// The network is a multi-layer perceptron, by default 784→128→10 (one
// hidden layer of 128 ReLU units; DefaultLayers). A convolutional network
// would reach a few points more accuracy, but in scalar Go it costs tens of
// times more arithmetic per sample and needs im2col or direct-convolution
// kernels with poor cache behaviour. An MLP is nothing but dense matrix
// products, which map onto one cache-friendly blocked GEMM; it trains to
// the ≥ 85 % top-1 target on Fashion-MNIST in a few seconds on two cores,
// and its inference cost (203,264 FLOPs per sample, FLOPsPerSample) is
// large enough to measure and small enough to serve many queries per
// second. Wider or deeper variants work with the same code through New
// (see the measurements under Training).
//
// # Inference
//
// Inputs are float32 pixels already scaled to [0, 1], row-major N×784;
// outputs are logits, row-major N×10 (Softmax turns them into
// probabilities). Inferencer holds preallocated workspaces, so its Infer
// and Predict do not allocate; MLP.Infer and MLP.Predict pool Inferencers
// for convenience and are safe for concurrent use.
//
// All arithmetic is float32 and goes through one micro-kernel that
// multiplies a row of the activations by an 8-column panel of packed
// weights, keeping the eight partial sums in registers (a 1×8 tile
// unrolled four times in k: on amd64 it measured fastest of the shapes
// tried, because wider tiles such as 4×4 or 4×8 exceed the 15 usable SSE
// registers and spill). The weights are stored permanently in that packed
// panel layout, so inference never repacks them; the driver blocks k by
// 256 so the active panel block stays in L1, and splits the rows (or, for
// small batches, the panels) of each product across GOMAXPROCS goroutines
// of a persistent worker pool. Products under 2^19 multiply-adds — such as
// a batch-1 query of the default network — run on the calling goroutine,
// where the hand-off would cost more than it saves.
//
// Measured on the development machine (2-core Intel Xeon, Go 1.26,
// GOAMD64=v1) with go test -bench . -cpu 1,2:
//
//	                              1 core          2 cores
//	GEMM 256×256×784              9.7 GFLOP/s     18.9 GFLOP/s (9.5 per core)
//	Infer batch 1                 9.4 GFLOP/s     9.3 GFLOP/s (one goroutine; 21.9 µs, 45,700 samples/s)
//	Infer batch 32                9.5 GFLOP/s     13.5 GFLOP/s (6.8 per core; 66,000 samples/s)
//	Infer batch 256               9.5 GFLOP/s     15–17 GFLOP/s (7.6–8.5 per core; 75,000–84,000 samples/s)
//	Train epoch (batch 128)       8.9 GFLOP/s     15.2 GFLOP/s (7.6 per core; 37,000 samples/s)
//
// # Training
//
// MLP.Train minimises the mean softmax cross-entropy by mini-batch SGD
// with momentum (v ← μv + g + λw, w ← w − lr·v) under a learning-rate
// schedule (cosine annealing per step by default, or per-epoch step decay,
// or constant). Backpropagation uses the same GEMM: the weight gradient
// aᵀ·dZ is written straight into the packed layout, the input gradient is
// dZ·Wᵀ with Wᵀ packed by an 8×8 tile transpose. Initialisation is
// He-uniform for hidden layers and Glorot-uniform for the output layer,
// drawn from the package's own xoshiro256** generator seeded through
// splitmix64; shuffling uses the same generator.
//
// DefaultTrainConfig: 3 epochs, batch 128, learning rate 0.1 with cosine
// annealing, momentum 0.9, no weight decay, seed 1. On the Fashion-MNIST
// training set (60,000 images) it reached 86.6–86.9 % top-1 on the 10,000
// test images for five different seeds (model and shuffle seed 1..5), in
// 5.6–6.1 s of training on the 2-core development machine (about 1.7 s per
// epoch; the test accuracy after the second epoch, at about 3.5 s, was
// already 85.0–86.3 %). Alternatives measured the same way: 784→128→10
// for 2 epochs, 85.8–86.4 % in about 3.7 s; 784→256→10 for 2 epochs,
// 86.5–86.7 % in about 7 s; the default network and epochs with per-epoch
// step decay (×0.5) instead of cosine annealing, 85.8–86.9 %, less
// consistent across seeds.
//
// # Determinism
//
// Every element of every product, gradient and update is computed by
// exactly one goroutine with a fixed order of operations, and no
// reduction is ever split across goroutines, so logits and trained
// weights are bit-identical for any GOMAXPROCS and from run to run, given
// the same layer sizes, seeds, data and configuration. A sample's logits
// also do not depend on the batch it is computed in. Results may differ
// between builds for different GOARCH or GOAMD64 levels, because the
// compiler fuses multiply-adds on some targets (arm64, amd64 v3 and up).
//
// # Weights file format
//
// Save and SaveFile write, and Load and LoadFile read, this format
// (all integers unsigned 32-bit little-endian, all parameters IEEE-754
// float32 little-endian):
//
//	offset     size      field
//	0          4         magic "AIMW"
//	4          4         format version, 1
//	8          4         L, the number of layer sizes (2..MaxLayers)
//	12         4·L       the layer sizes s[0..L-1], input first (each 1..MaxWidth)
//	then, for each layer l = 0..L-2 (in = s[l], out = s[l+1]):
//	           4·in·out  weights, row-major in×out: w[i·out+j] connects input i to output j
//	           4·out     biases
//	end−4      4         CRC-32C (Castagnoli) of every preceding byte
//
// The total number of parameters must not exceed MaxParams. Hidden layers
// apply ReLU and the last layer is linear; this is implied by version 1.
// Load never panics on malformed input and never allocates much more than
// the input actually holds; its errors wrap ErrBadMagic, ErrVersion,
// ErrLayerSizes, ErrTruncated (naming the field that was cut and how many
// bytes were present), ErrChecksum or ErrNonFinite (a NaN or infinite
// parameter), and LoadFile adds ErrTrailingData and the file name.
// SaveFile replaces the file atomically (temporary file and rename).
package model
