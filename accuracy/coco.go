package accuracy

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
)

// COCOBox is a ground truth or a detection of the coco-map metric: an
// image, a category and a box [x, y, width, height]. Score is a
// detection's; IsCrowd and Area a ground truth's. Area is the annotation's
// "area", which COCOeval compares with the area range (a nil Area is
// width × height, what COCO's loadRes gives detections).
type COCOBox struct {
	ImageID    int64      `json:"image_id"`
	CategoryID int64      `json:"category_id"`
	BBox       [4]float64 `json:"bbox"`
	Score      float64    `json:"score"`
	IsCrowd    int        `json:"iscrowd"`
	Area       *float64   `json:"area,omitempty"`
}

// area is the box's COCO area: Area when given, else width × height.
func (b COCOBox) area() float64 {
	if b.Area != nil {
		return *b.Area
	}
	return b.BBox[2] * b.BBox[3]
}

// COCOParams are the evaluation parameters; the zero value is COCOeval's
// bbox defaults for the four figures reported.
type COCOParams struct {
	// IoUThresholds; empty means np.linspace(.5, .95, 10).
	IoUThresholds []float64 `json:"iou_thresholds"`
	// RecallThresholds; empty means np.linspace(0, 1, 101).
	RecallThresholds []float64 `json:"recall_thresholds"`
	// MaxDets is the most detections per image and category; 0 means 100.
	MaxDets int `json:"max_dets"`
	// AreaRangeAll is the area range "all"; empty means [0, 1e5²].
	AreaRangeAll []float64 `json:"area_range_all"`
}

// COCOResult holds COCOeval's stats[0], stats[1], stats[2] and stats[8]
// for bounding boxes (0–1; -1 when no category has a ground truth).
type COCOResult struct {
	MAP   float64 `json:"map"`
	AP50  float64 `json:"ap50"`
	AP75  float64 `json:"ap75"`
	AR100 float64 `json:"ar100"`
}

// linspace is np.linspace(start, stop, n): i·step + start, the last
// exactly stop. The product is rounded before the sum, as numpy's array
// operations do: the float64 conversion keeps Go from fusing them into
// one multiply-add (as it does on arm64, where the threshold 0.8 of
// linspace(.5, .95, 10) would become 0.7999999999999999).
func linspace(start, stop float64, n int) []float64 {
	out := make([]float64, n)
	step := (stop - start) / float64(n-1)
	for i := range out {
		out[i] = float64(float64(i)*step) + start
	}
	out[n-1] = stop
	return out
}

// bbIoU is pycocotools' maskApi bbIou of a detection d and a ground truth
// g: intersection over union of the boxes (widths and heights as given,
// no +1), the union of a crowd ground truth being the detection's area.
// As in the C, each area is rounded before the sums (no fused
// multiply-add, which Go would otherwise emit on arm64).
func bbIoU(d, g [4]float64, crowd bool) float64 {
	w := min(d[0]+d[2], g[0]+g[2]) - max(d[0], g[0])
	if w <= 0 {
		return 0
	}
	h := min(d[1]+d[3], g[1]+g[3]) - max(d[1], g[1])
	if h <= 0 {
		return 0
	}
	i := float64(w * h)
	da, ga := float64(d[2]*d[3]), float64(g[2]*g[3])
	u := da + ga - i
	if crowd {
		u = da
	}
	return i / u
}

// COCOMap evaluates bounding-box detections as pycocotools' COCOeval
// (iouType "bbox", useCats): images and categories in ascending id order;
// per image and category the detections sorted by descending score
// (stable), the first MaxDets kept, greedily matched at each IoU
// threshold to the best still-free ground truth (crowd ones may match
// again, ignored ones only when nothing else does); per category the
// detections of every image merged by score, precision made monotone from
// the right and read at the recall thresholds (searchsorted, left);
// categories without a ground truth left out. IoU is maskApi's bbIou
// (no +1; a crowd ground truth's union is the detection's area), an IoU
// equal to the threshold matches, and a ground truth is ignored when
// crowd or its area lies outside the area range, as is an unmatched
// detection whose width × height does. map is the mean precision over
// thresholds, recall points and categories, ap50 and ap75 at IoU .5 and
// .75 (-1 when the thresholds lack them, as summarize), ar100 the mean
// final recall. With other MaxDets, map is the mean of that precision
// array (COCOeval's summarize would read maxDets=100 and give -1).
//
// Bad input is an error naming the entry: a ground truth or detection
// on an image or category not listed, a non-finite or negative-sized
// box, a non-finite score or area, parameters out of range.
func COCOMap(images, categories []int64, gts, dets []COCOBox, params COCOParams) (COCOResult, error) {
	iouThrs := params.IoUThresholds
	if len(iouThrs) == 0 {
		iouThrs = linspace(0.5, 0.95, 10)
	}
	recThrs := params.RecallThresholds
	if len(recThrs) == 0 {
		recThrs = linspace(0, 1, 101)
	}
	maxDet := params.MaxDets
	if maxDet == 0 {
		maxDet = 100
	}
	area := []float64{0, 1e5 * 1e5}
	if len(params.AreaRangeAll) == 2 {
		area = params.AreaRangeAll
	} else if len(params.AreaRangeAll) != 0 {
		return COCOResult{}, fmt.Errorf("params.area_range_all has %d values, want 2", len(params.AreaRangeAll))
	}
	if maxDet < 0 {
		return COCOResult{}, fmt.Errorf("params.max_dets is %d, want 1 or more (0: 100)", maxDet)
	}
	for i, x := range iouThrs {
		if err := checkFinite("params.iou_thresholds", i, x); err != nil {
			return COCOResult{}, err
		}
		if x < 0 || x > 1 {
			return COCOResult{}, fmt.Errorf("params.iou_thresholds[%d] is %v, outside [0, 1]", i, x)
		}
	}
	for i, x := range recThrs {
		if err := checkFinite("params.recall_thresholds", i, x); err != nil {
			return COCOResult{}, err
		}
	}
	for i, x := range area {
		if err := checkFinite("params.area_range_all", i, x); err != nil {
			return COCOResult{}, err
		}
	}
	imgs := slices.Compact(slices.Sorted(slices.Values(images)))
	cats := slices.Compact(slices.Sorted(slices.Values(categories)))
	if len(imgs) == 0 || len(cats) == 0 {
		return COCOResult{}, errors.New("no images or no categories")
	}
	type key struct{ img, cat int64 }
	gtBy := map[key][]int{}
	dtBy := map[key][]int{}
	for i, g := range gts {
		if _, ok := slices.BinarySearch(imgs, g.ImageID); !ok {
			return COCOResult{}, fmt.Errorf("ground_truths[%d]: image_id %d is not among the images", i, g.ImageID)
		}
		if _, ok := slices.BinarySearch(cats, g.CategoryID); !ok {
			return COCOResult{}, fmt.Errorf("ground_truths[%d]: category_id %d is not among the categories", i, g.CategoryID)
		}
		if err := checkBox("ground_truths", i, g.BBox); err != nil {
			return COCOResult{}, err
		}
		if g.Area != nil {
			if math.IsNaN(*g.Area) || math.IsInf(*g.Area, 0) {
				return COCOResult{}, fmt.Errorf("ground_truths[%d].area is %v, want a finite number", i, *g.Area)
			}
		}
		gtBy[key{g.ImageID, g.CategoryID}] = append(gtBy[key{g.ImageID, g.CategoryID}], i)
	}
	for i, d := range dets {
		if _, ok := slices.BinarySearch(imgs, d.ImageID); !ok {
			return COCOResult{}, fmt.Errorf("detections[%d]: image_id %d is not among the images", i, d.ImageID)
		}
		if _, ok := slices.BinarySearch(cats, d.CategoryID); !ok {
			return COCOResult{}, fmt.Errorf("detections[%d]: category_id %d is not among the categories", i, d.CategoryID)
		}
		if err := checkBox("detections", i, d.BBox); err != nil {
			return COCOResult{}, err
		}
		if math.IsNaN(d.Score) || math.IsInf(d.Score, 0) {
			return COCOResult{}, fmt.Errorf("detections[%d].score is %v, want a finite number", i, d.Score)
		}
		dtBy[key{d.ImageID, d.CategoryID}] = append(dtBy[key{d.ImageID, d.CategoryID}], i)
	}
	T, R := len(iouThrs), len(recThrs)
	var precSum, recSum, ap50Sum, ap75Sum float64
	var precN, recN, ap50N, ap75N int
	t50, t75 := slices.Index(iouThrs, 0.5), slices.Index(iouThrs, 0.75)
	for _, cat := range cats {
		// Every image's matches, merged by score afterwards.
		type scored struct {
			score   float64
			matched []bool // per threshold
			ignored []bool
		}
		var all []scored
		npig := 0
		for _, img := range imgs {
			gi, di := gtBy[key{img, cat}], dtBy[key{img, cat}]
			if len(gi) == 0 && len(di) == 0 {
				continue
			}
			// Ground truths: the not ignored first (stable).
			ignore := func(j int) bool {
				a := gts[j].area()
				return gts[j].IsCrowd != 0 || a < area[0] || a > area[1]
			}
			gi = slices.Clone(gi)
			slices.SortStableFunc(gi, func(a, b int) int {
				ia, ib := ignore(a), ignore(b)
				switch {
				case ia == ib:
					return 0
				case !ia:
					return -1
				}
				return 1
			})
			for _, j := range gi {
				if !ignore(j) {
					npig++
				}
			}
			di = slices.Clone(di)
			sort.SliceStable(di, func(a, b int) bool { return dets[di[a]].Score > dets[di[b]].Score })
			if len(di) > maxDet {
				di = di[:maxDet]
			}
			ious := make([][]float64, len(di))
			for a, d := range di {
				ious[a] = make([]float64, len(gi))
				for b, g := range gi {
					ious[a][b] = bbIoU(dets[d].BBox, gts[g].BBox, gts[g].IsCrowd != 0)
				}
			}
			start := len(all)
			for _, d := range di {
				all = append(all, scored{score: dets[d].Score, matched: make([]bool, T), ignored: make([]bool, T)})
			}
			for t, thr := range iouThrs {
				gtm := make([]bool, len(gi))
				for a, d := range di {
					best := min(thr, 1-1e-10)
					m := -1
					for b, g := range gi {
						if gtm[b] && gts[g].IsCrowd == 0 {
							continue
						}
						if m > -1 && !ignore(gi[m]) && ignore(g) {
							break
						}
						if ious[a][b] < best {
							continue
						}
						best, m = ious[a][b], b
					}
					if m == -1 {
						// An unmatched detection outside the area range
						// is ignored.
						da := dets[d].BBox[2] * dets[d].BBox[3]
						all[start+a].ignored[t] = da < area[0] || da > area[1]
						continue
					}
					all[start+a].ignored[t] = ignore(gi[m])
					all[start+a].matched[t] = true
					gtm[m] = true
				}
			}
		}
		if npig == 0 {
			continue // no ground truth: precision -1, left out
		}
		sort.SliceStable(all, func(a, b int) bool { return all[a].score > all[b].score })
		for t := range T {
			var tp, fp float64
			rc := make([]float64, 0, len(all))
			pr := make([]float64, 0, len(all))
			for _, s := range all {
				if s.ignored[t] {
					// Neither a true nor a false positive, but still a
					// point of the curve (numpy cumsum keeps its place).
				} else if s.matched[t] {
					tp++
				} else {
					fp++
				}
				rc = append(rc, tp/float64(npig))
				pr = append(pr, tp/(fp+tp+math.Nextafter(1, 2)-1))
			}
			if len(rc) > 0 {
				recSum += rc[len(rc)-1]
			}
			recN++
			for i := len(pr) - 1; i > 0; i-- {
				if pr[i] > pr[i-1] {
					pr[i-1] = pr[i]
				}
			}
			var sum float64
			for _, thr := range recThrs {
				i := sort.SearchFloat64s(rc, thr)
				if i >= len(pr) {
					break
				}
				sum += pr[i]
			}
			precSum += sum
			precN += R
			if t == t50 {
				ap50Sum += sum / float64(R)
				ap50N++
			}
			if t == t75 {
				ap75Sum += sum / float64(R)
				ap75N++
			}
		}
	}
	mean := func(s float64, n int) float64 {
		if n == 0 {
			return -1
		}
		return s / float64(n)
	}
	return COCOResult{MAP: mean(precSum, precN), AP50: mean(ap50Sum, ap50N), AP75: mean(ap75Sum, ap75N), AR100: mean(recSum, recN)}, nil
}

func checkBox(field string, i int, b [4]float64) error {
	for j, x := range b {
		if err := checkFinite(fmt.Sprintf("%s[%d].bbox", field, i), j, x); err != nil {
			return err
		}
	}
	if b[2] < 0 || b[3] < 0 {
		return fmt.Errorf("%s[%d].bbox has a negative width or height: %v", field, i, b)
	}
	return nil
}

// cocoInput is the coco-map metric's JSON input.
type cocoInput struct {
	Images       []int64     `json:"images"`
	Categories   []int64     `json:"categories"`
	GroundTruths []cocoJSBox `json:"ground_truths"`
	Detections   []cocoJSBox `json:"detections"`
	Params       COCOParams  `json:"params"`
}

// cocoJSBox is a COCOBox as read from JSON, where a missing id, score or
// coordinate must be an error rather than a zero.
type cocoJSBox struct {
	ImageID    *int64    `json:"image_id"`
	CategoryID *int64    `json:"category_id"`
	BBox       []float64 `json:"bbox"`
	Score      *float64  `json:"score"`
	IsCrowd    int       `json:"iscrowd"`
	Area       *float64  `json:"area"`
}

// cocoBoxes checks and converts the JSON boxes of field; detections must
// have a score.
func cocoBoxes(field string, in []cocoJSBox, detections bool) ([]COCOBox, error) {
	out := make([]COCOBox, len(in))
	for i, b := range in {
		switch {
		case b.ImageID == nil:
			return nil, fmt.Errorf("%s[%d] has no image_id", field, i)
		case b.CategoryID == nil:
			return nil, fmt.Errorf("%s[%d] has no category_id", field, i)
		case len(b.BBox) != 4:
			return nil, fmt.Errorf("%s[%d].bbox has %d values, want 4 (x, y, width, height)", field, i, len(b.BBox))
		case detections && b.Score == nil:
			return nil, fmt.Errorf("%s[%d] has no score", field, i)
		}
		out[i] = COCOBox{ImageID: *b.ImageID, CategoryID: *b.CategoryID, BBox: [4]float64(b.BBox), IsCrowd: b.IsCrowd, Area: b.Area}
		if b.Score != nil {
			out[i].Score = *b.Score
		}
	}
	return out, nil
}
