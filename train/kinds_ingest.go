package train

// Kinds that an MLPerf Training log carries beside the Table 6 timing
// points. The MLLOG ingester (package train/mllog) emits them so that no
// information of the log is lost; metric code may ignore them.
const (
	// InitStart and InitEnd are MLLOG's init_start and init_stop: the
	// program's untimed initialisation before run_start.
	InitStart Kind = "init_start"
	InitEnd   Kind = "init_end"
	// BlockStart and BlockEnd are MLLOG's block_start and block_stop: a
	// block of Count epochs (or samples, for logs that count samples)
	// between two evaluations; Epoch is its first epoch number, or the
	// block's ordinal (1-based) when the log gives samples_count instead.
	BlockStart Kind = "block_start"
	BlockEnd   Kind = "block_end"
	// Accuracy is MLLOG's eval_accuracy: Value is the accuracy reached at
	// validation Epoch. The ingester also copies it into the matching
	// ValidationEnd's Value.
	Accuracy Kind = "accuracy"
	// TrainSamples and EvalSamples are MLLOG's train_samples and
	// eval_samples: Count is the size of the training or evaluation set,
	// the numberof(train set) of the throughput formula (Table 8).
	TrainSamples Kind = "train_samples"
	EvalSamples  Kind = "eval_samples"
)
