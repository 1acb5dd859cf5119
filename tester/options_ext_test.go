package tester_test

import (
	"context"
	"errors"
	"testing"

	"aimeter/tester"
)

func TestTestItemOf(t *testing.T) {
	s := newService(t, backends(t)[0])
	defer s.stop()
	p := s.register(t, 0, "")
	ctx := context.Background()
	id, err := p.client.TestItemOf(ctx, &p.reg.Config)
	if err != nil || id != p.reg.TestID {
		t.Fatalf("test item %q, error %v; want %q", id, err, p.reg.TestID)
	}
	if id, err := p.client.TestItemOf(ctx, nil); err != nil || id != p.reg.TestID {
		t.Fatalf("without a configuration file: test item %q, error %v", id, err)
	}
	other := p.reg.Config
	other.TestID = "T-other"
	var oe *tester.OptionError
	if _, err := p.client.TestItemOf(ctx, &other); !errors.As(err, &oe) || oe.Field != "token" {
		t.Errorf("a configuration file of another item: error %v, want an OptionError of the token", err)
	}
	bad := *p.client
	bad.Token = "amt_wrong"
	var re *tester.RefusedError
	if _, err := bad.TestItemOf(ctx, nil); !errors.As(err, &re) {
		t.Errorf("a wrong token: error %v, want a refusal", err)
	}
}
