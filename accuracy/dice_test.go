package accuracy

import (
	"strings"
	"testing"
)

func TestDice(t *testing.T) {
	vols := []Volume{
		{[]int{2, 2}, []int{1, 1, 0, 0}, []int{1, 0, 0, 0}}, // 2·1/3
		{[]int{1, 3}, []int{0, 0, 0}, []int{0, 0, 0}},       // both empty: 1
		{[]int{1, 2}, []int{1, 0}, []int{0, 1}},             // no overlap: 0
	}
	got, err := Dice(vols, nil)
	if err != nil || !near(got.MeanDice, (2.0/3+1+0)/3) || !near(got.GlobalDice, 2.0/5) {
		t.Errorf("Dice = %+v, %v; want mean (2/3+1+0)/3 and global 2·1/5", got, err)
	}
	sm, _ := Dice(vols, &KiTS19Smooth)
	if !near(sm.PerVolume[1], 1) || !near(sm.PerVolume[2], 1e-6/(2+1e-6)) || !near(sm.PerVolume[0], (2+1e-6)/(3+1e-6)) {
		t.Errorf("smoothed Dice = %v", sm.PerVolume)
	}
	if _, err := Dice([]Volume{{[]int{2, 2}, []int{1, 1, 0}, []int{1, 0, 0, 0}}}, nil); err == nil || !strings.Contains(err.Error(), "volumes[0]: shape [2 2] has 4 voxels") {
		t.Errorf("a short mask: %v", err)
	}
	if _, err := Dice([]Volume{{[]int{1, 1}, []int{2}, []int{1}}}, nil); err == nil || !strings.Contains(err.Error(), "volumes[0].pred[0] is 2") {
		t.Errorf("a mask value of 2: %v", err)
	}
}
