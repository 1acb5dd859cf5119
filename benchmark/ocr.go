package benchmark

import (
	"errors"
	"fmt"

	"aimeter/accuracy"
	"aimeter/bundle"
	"aimeter/dataset/ocr"
	"aimeter/loadgen"
)

// OCRTargetHMean is the detection quality target of the ocr-dbnet
// workload (GB/T scenario T13-1) on aimeter's generated word images: an
// H-mean of precision and recall at IoU 0.5 of at least 0.85. Table 13's
// own target (mAP > 0.88) is for ICDAR 2015, which aimeter does not ship;
// PaddleOCR's v4 detector scores about 0.95 on the generated set.
const OCRTargetHMean = 0.85

// ocrScorer scores accuracy-log entries of the ocr-dbnet workload: the
// boxes of each image (its first response) against the set's ground
// truth, by the ICDAR 2015 method at IoU 0.5 (accuracy.OCRDetection),
// over the images the log holds.
func ocrScorer(set *ocr.Set) func([]loadgen.AccuracyEntry) (*bundle.AccuracyCheck, error) {
	return func(entries []loadgen.AccuracyEntry) (*bundle.AccuracyCheck, error) {
		seen := make(map[uint64]bool, len(entries))
		var images []accuracy.OCRImage
		for _, e := range entries {
			if e.QSLIndex >= uint64(set.Len()) {
				return nil, fmt.Errorf("accuracy log entry seq_id %d: qsl_idx %d is outside the data set of %d images", e.SeqID, e.QSLIndex, set.Len())
			}
			if seen[e.QSLIndex] {
				continue
			}
			seen[e.QSLIndex] = true
			boxes, err := ocr.DecodeQuads(e.Data)
			if err != nil {
				return nil, fmt.Errorf("accuracy log entry seq_id %d: %w", e.SeqID, err)
			}
			var im accuracy.OCRImage
			for _, b := range set.Boxes(int(e.QSLIndex)) {
				im.GroundTruths = append(im.GroundTruths, ocrRegion(b))
			}
			for _, b := range boxes {
				im.Detections = append(im.Detections, ocrRegion(b))
			}
			images = append(images, im)
		}
		if len(images) == 0 {
			return nil, errors.New("no responses to score")
		}
		r, err := accuracy.OCRDetection(images, 0.5, 0.5)
		if err != nil {
			return nil, err
		}
		return &bundle.AccuracyCheck{
			Metric: fmt.Sprintf("text detection H-mean at IoU 0.5 (%%; precision %.2f %%, recall %.2f %%)", 100*r.Precision, 100*r.Recall),
			Value:  100 * r.HMean, Target: 100 * OCRTargetHMean, Pass: r.HMean >= OCRTargetHMean,
		}, nil
	}
}

func ocrRegion(q ocr.Quad) accuracy.OCRRegion {
	r := accuracy.OCRRegion{Points: make([][2]float64, len(q))}
	for i, c := range q {
		r.Points[i] = [2]float64{float64(c[0]), float64(c[1])}
	}
	return r
}
