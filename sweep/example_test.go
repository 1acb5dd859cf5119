package sweep_test

import (
	"fmt"

	"aimeter/sweep"
)

// The regions and points MLPerf Endpoints v1.0 gives Cmin 1 and Cmax 256.
func ExampleAutoPoints() {
	pts, r, err := sweep.AutoPoints(1, 256, 7)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("low", r.Low, "medium", r.Medium, "high", r.High, "margin", r.Margin)
	fmt.Println(pts)
	// Output:
	// low {2 7} medium {8 41} high {42 256} margin {257 282}
	// [1 4 7 18 41 104 256]
}
