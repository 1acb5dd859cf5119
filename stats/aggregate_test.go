package stats

import (
	"errors"
	"math"
	"testing"
)

func TestIntervalUnion(t *testing.T) {
	tests := []struct {
		name         string
		starts, ends []int64
		want         int64
		why          string
	}{
		{"none", nil, nil, 0, "empty union"},
		{"single", []int64{3}, []int64{10}, 7, "one interval, length 10-3"},
		{"empty interval", []int64{5}, []int64{5}, 0, "[5,5) is empty"},
		{"reversed interval", []int64{9}, []int64{2}, 0, "end before start counts as empty"},
		{"disjoint", []int64{0, 10}, []int64{5, 12}, 7, "5 + 2, the gap [5,10) is not counted"},
		{"touching", []int64{0, 5}, []int64{5, 7}, 7, "[0,5) and [5,7) meet without overlap"},
		{"overlap", []int64{0, 3}, []int64{5, 8}, 8, "[0,8) covered once: 3 units overlap"},
		{"nested", []int64{0, 2}, []int64{10, 4}, 10, "[2,4) lies inside [0,10)"},
		{"unsorted input", []int64{20, 0, 3}, []int64{25, 5, 8}, 13, "sorted by start: [0,8) and [20,25)"},
		{"identical", []int64{1, 1, 1}, []int64{4, 4, 4}, 3, "duplicates count once"},
		{"chain", []int64{0, 2, 4, 6}, []int64{3, 5, 7, 9}, 9, "each overlaps the next: [0,9)"},
		{"later one swallows", []int64{0, 1}, []int64{2, 100}, 100, "second extends the merged end"},
		{"extends after gap", []int64{0, 50, 10}, []int64{5, 60, 55}, 55, "[10,55) bridges to [50,60): 5 + 50"},
		{"negative coordinates", []int64{-10, -5}, []int64{-4, 0}, 10, "[-10,0)"},
		{"empty between real", []int64{0, 3, 10}, []int64{5, 3, 12}, 7, "the empty [3,3) is ignored"},
		{"ns timestamps", []int64{1_700_000_000_000_000_000, 1_700_000_000_500_000_000}, []int64{1_700_000_001_000_000_000, 1_700_000_002_000_000_000}, 2_000_000_000, "large epoch values, 2 s covered"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := append([]int64(nil), tc.starts...)
			e := append([]int64(nil), tc.ends...)
			if got := IntervalUnion(tc.starts, tc.ends); got != tc.want {
				t.Errorf("IntervalUnion(%v, %v) = %d, want %d (%s)", tc.starts, tc.ends, got, tc.want, tc.why)
			}
			for i := range s {
				if s[i] != tc.starts[i] || e[i] != tc.ends[i] {
					t.Fatal("inputs modified")
				}
			}
		})
	}
}

func TestIntervalUnionLengthMismatch(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic on length mismatch")
		}
	}()
	IntervalUnion([]int64{1, 2}, []int64{3})
}

func TestWeightedGeometricMean(t *testing.T) {
	tests := []struct {
		name    string
		values  []float64
		weights []float64
		want    float64
		why     string
	}{
		{"single", []float64{2.5}, []float64{1}, 2.5, "one value is its own mean"},
		{"all ones", []float64{1, 1, 1}, []float64{0.2, 0.3, 0.5}, 1, "IN-33: SUT equal to reference scores 1 (times alpha)"},
		{"equal weights", []float64{2, 8}, []float64{1, 1}, 4, "sqrt(2*8)"},
		{"unnormalised weights", []float64{2, 8}, []float64{3, 3}, 4, "weights are normalised: 3,3 acts as 0.5,0.5"},
		{"three equal", []float64{1, 3, 9}, []float64{1, 1, 1}, 3, "cube root of 27"},
		{"skewed weights", []float64{4, 1}, []float64{0.5, 0.5}, 2, "4^0.5 * 1^0.5"},
		{"quarter weight", []float64{16, 1}, []float64{0.25, 0.75}, 2, "16^0.25 = 2, 1^0.75 = 1"},
		{"zero weight ignored", []float64{100, 5}, []float64{0, 1}, 5, "IN-33 allows tau = 0: that value drops out"},
		{"same value", []float64{7, 7, 7}, []float64{0.1, 0.6, 0.3}, 7, "mean of a constant is the constant"},
		{"reciprocal pair", []float64{0.5, 2}, []float64{1, 1}, 1, "ln 0.5 + ln 2 = 0"},
		{"tiny and huge", []float64{1e-300, 1e300}, []float64{1, 1}, 1, "logs avoid the product's under/overflow"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := WeightedGeometricMean(tc.values, tc.weights)
			if err != nil {
				t.Fatalf("error %v (%s)", err, tc.why)
			}
			if math.Abs(got-tc.want) > 1e-12*tc.want {
				t.Errorf("WeightedGeometricMean(%v, %v) = %.17g, want %v (%s)", tc.values, tc.weights, got, tc.want, tc.why)
			}
		})
	}
}

func TestWeightedGeometricMeanErrors(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	tests := []struct {
		name    string
		values  []float64
		weights []float64
		why     string
	}{
		{"empty", nil, nil, "no values to average"},
		{"length mismatch", []float64{1, 2}, []float64{1}, "each value needs a weight"},
		{"zero value", []float64{0, 2}, []float64{1, 1}, "ln 0 is -inf: r_s <= 0 rejected (IN-33)"},
		{"negative value", []float64{-1, 2}, []float64{1, 1}, "r_s <= 0 rejected"},
		{"NaN value", []float64{nan}, []float64{1}, "not a number"},
		{"infinite value", []float64{inf}, []float64{1}, "not finite"},
		{"negative weight", []float64{1, 2}, []float64{-0.5, 1.5}, "tau_s < 0 rejected (IN-33)"},
		{"NaN weight", []float64{1}, []float64{nan}, "not a number"},
		{"infinite weight", []float64{1}, []float64{inf}, "not finite"},
		{"all weights zero", []float64{1, 2}, []float64{0, 0}, "sum of tau = 0 rejected (IN-33)"},
		{"zero value with zero weight", []float64{0, 2}, []float64{0, 1}, "values are checked even when their weight is 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := WeightedGeometricMean(tc.values, tc.weights)
			if !errors.Is(err, ErrBadGeometricMeanInput) {
				t.Errorf("WeightedGeometricMean(%v, %v) = %v, %v; want ErrBadGeometricMeanInput (%s)", tc.values, tc.weights, got, err, tc.why)
			}
		})
	}
}
