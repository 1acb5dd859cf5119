package console

import (
	"strings"
	"testing"

	"aimeter/gbt"
)

func TestStreamsVerdict(t *testing.T) {
	probes := make([]gbt.StreamProbe, 4)
	for _, c := range []struct {
		r      gbt.StreamsResult
		linear bool
		want   string
	}{
		{gbt.StreamsResult{MaxStreams: 8, Stop: gbt.StopLimit, Probes: probes, Seconds: 12},
			false, "Maximum video streams: at least 8 at 25 fps (every probe up to StreamsPlan.Search.Limit passed; 4 probes in 12 s)"},
		{gbt.StreamsResult{MaxStreams: 10, FirstFail: 11, Confirmed: true, Probes: probes},
			false, "Maximum video streams: 10 at 25 fps (confirmed by fresh probes: 10 passed, 11 failed; 4 probes in 0 s)"},
		{gbt.StreamsResult{MaxStreams: 8, FirstFail: 11, Confirmed: true, Resolution: 0.5, Probes: probes},
			false, "the exact maximum lies in 8–10, within StreamsPlan.Search.Resolution 0.5;"},
		{gbt.StreamsResult{MaxStreams: 8, FirstFail: 11, Confirmed: true, Stop: gbt.StopBudget, Probes: probes},
			false, "lies in 8–10: refining stopped when the budget ran out"},
		{gbt.StreamsResult{MaxStreams: 3, FirstFail: 4, Probes: probes},
			true, "Maximum video streams: 3 at 25 fps (linear procedure: 3 passed, 4 failed;"},
		{gbt.StreamsResult{MaxStreams: 3, FirstFail: 5, Stop: gbt.StopUnstable, Probes: probes},
			false, "No confirmed maximum at 25 fps: probes at the same count disagree; latest: 3 passed, 5 failed"},
		{gbt.StreamsResult{MaxStreams: 6, Stop: gbt.StopBudget, Probes: probes},
			false, "the budget ran out before any count failed; at least 6 streams passed"},
		{gbt.StreamsResult{MaxStreams: 6, FirstFail: 9, Stop: gbt.StopBudget, Probes: probes},
			false, "the budget ran out before the confirmation; best bracket: 6 passed, 9 failed"},
		{gbt.StreamsResult{FirstFail: 1, Probes: []gbt.StreamProbe{{N: 1, Frames: 10, Lost: 5}}},
			false, "Maximum video streams: 0 at 25 fps: no stream count passed: 1 stream lost 50.0 % of its frames"},
	} {
		if got := StreamsVerdict(c.r, 25, c.linear); !strings.Contains(got, c.want) {
			t.Errorf("StreamsVerdict(%+v) = %q, want it to hold %q", c.r, got, c.want)
		}
	}
}

func TestStreamsProbeVerdict(t *testing.T) {
	if got, want := StreamsProbeVerdict(4, 25, gbt.StreamProbe{OK: true, Frames: 100}), "4 streams at 25 fps: PASS (100 frames, none lost)"; got != want {
		t.Errorf("pass: %q, want %q", got, want)
	}
	if got, want := StreamsProbeVerdict(4, 25, gbt.StreamProbe{Frames: 100, Lost: 3, Failed: 1}), "4 streams at 25 fps: FAIL (3 of 100 frames lost, 1 failed)"; got != want {
		t.Errorf("fail: %q, want %q", got, want)
	}
}
