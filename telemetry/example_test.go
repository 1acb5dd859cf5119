package telemetry_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"aimeter/telemetry"
)

// A replayed trace of a machine whose CPU draws 250 W and whose GPU draws
// 150 W, summarised over the first 10 s of the run: 400 W and 4000 J.
func Example() {
	dir, _ := os.MkdirTemp("", "power")
	defer os.RemoveAll(dir)
	trace := "t_ns,node,device,watts\n"
	for s := int64(0); s <= 12; s++ {
		trace += fmt.Sprintf("%d,node-1,cpu,250\n%d,node-1,gpu0,150\n", s*1e9, s*1e9)
	}
	file := filepath.Join(dir, "trace.csv")
	os.WriteFile(file, []byte(trace), 0o644)

	sources, err := telemetry.Open("replay:"+file, telemetry.SpecOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	sampler := telemetry.Start(time.Now(), sources, telemetry.Options{})
	// ... the run goes here ...
	log, _ := sampler.Stop(context.Background())

	s := telemetry.Summarize(log, telemetry.Window{FromNs: 0, ToNs: 10e9})
	fmt.Printf("%d devices, %.0f W average, %.0f W peak, %.0f J by %s, coverage %.0f %%\n",
		s.Devices, *s.AvgW, *s.PeakW, *s.EnergyJ, s.Method, s.Coverage*100)
	// Output: 2 devices, 400 W average, 400 W peak, 4000 J by trapezoid, coverage 100 %
}
