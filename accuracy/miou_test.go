package accuracy

import (
	"strings"
	"testing"
)

func TestMeanIoU(t *testing.T) {
	ignore := 255
	for _, tc := range []struct {
		images   []SegImage
		k        int
		ignore   *int
		miou, pa float64
		reason   string
	}{
		{[]SegImage{{1, 4, []int{0, 0, 1, 1}, []int{0, 1, 1, 1}}}, 2, nil, (0.5 + 2.0/3) / 2, 0.75,
			"class 0: 1 of union 2; class 1: 2 of union 3"},
		{[]SegImage{{1, 4, []int{0, 0, 1, 255}, []int{0, 0, 1, 0}}}, 3, &ignore, 1, 1,
			"the ignored pixel is skipped; class 2 is in neither map and left out"},
		{[]SegImage{{1, 2, []int{0, 0}, []int{0, 0}}, {1, 2, []int{1, 1}, []int{0, 1}}}, 2, nil, (2.0/3 + 0.5) / 2, 0.75,
			"two images pool into one confusion matrix"},
	} {
		got, err := MeanIoU(tc.images, tc.k, tc.ignore)
		if err != nil || !near(got.MIoU, tc.miou) || !near(got.PixelAccuracy, tc.pa) {
			t.Errorf("%s: %+v, %v; want mIoU %v, pixel accuracy %v", tc.reason, got, err, tc.miou, tc.pa)
		}
	}
	if _, err := MeanIoU([]SegImage{{2, 2, []int{0, 0, 0}, []int{0, 0, 0}}}, 2, nil); err == nil || !strings.Contains(err.Error(), "images[0]: 2×2") {
		t.Errorf("a short image: %v", err)
	}
	if _, err := MeanIoU([]SegImage{{1, 2, []int{0, 0}, []int{0, 7}}}, 2, nil); err == nil || !strings.Contains(err.Error(), "images[0].pred[1] is 7") {
		t.Errorf("a class out of range: %v", err)
	}
}
