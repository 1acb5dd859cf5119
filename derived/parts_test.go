package derived

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/bundle"
	"aimeter/gbt"
	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
	"aimeter/shard"
	"aimeter/telemetry"
)

// Read fails on a malformed part, naming its file, as bundle.Read did when
// it read every part itself; bundle.Read leaves it to the part's accessor.
func TestReadChecksParts(t *testing.T) {
	s := loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly)
	res, err := loadgen.Run(context.Background(), &loadgentest.StagedSUT{}, &loadgentest.QSL{Total: 16}, s, &loadgen.Options{SpinWindow: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		set  func(b *bundle.Bundle)
	}{
		{bundle.GBTTestFile, func(b *bundle.Bundle) { gbt.SetTest(b, &gbt.Test{}) }},
		{bundle.TelemetryFile, func(b *bundle.Bundle) { telemetry.SetLog(b, &telemetry.Log{PeriodNs: 1e9}) }},
		{shard.File, func(b *bundle.Bundle) { shard.Set(b, &shard.Record{Index: 1, Count: 2, Rule: shard.RuleQueryModN}) }},
		{shard.MergeFile, func(b *bundle.Bundle) { shard.MergePart.Set(b, &shard.Merge{Count: 2, Rule: shard.RuleQueryModN}) }},
	} {
		dir := t.TempDir()
		b := &bundle.Bundle{Result: res, Version: "test"}
		c.set(b)
		if err := bundle.Write(dir, b, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(dir); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, c.name), []byte("{"), 0o644); err != nil {
			t.Fatal(err)
		}
		opts := bundle.ReadOptions{SkipVerify: true}
		if _, err := ReadWith(dir, opts); err == nil || !strings.Contains(err.Error(), c.name) {
			t.Errorf("ReadWith of a malformed %s: %v, want an error naming it", c.name, err)
		}
		back, err := bundle.ReadWith(dir, opts)
		if err != nil {
			t.Fatalf("bundle.ReadWith of a malformed %s: %v", c.name, err)
		}
		for _, p := range Parts() {
			if err := p.Check(back); (err != nil) != (p.PartName() == c.name) {
				t.Errorf("a malformed %s: %s's Check says %v", c.name, p.PartName(), err)
			}
		}
	}
}
