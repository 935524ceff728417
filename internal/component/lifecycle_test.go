package component

import (
	"context"
	"errors"
	"testing"
	"time"
)

// spec is a description whose defaults fill in Name and that cannot be
// renamed in place.
type spec struct{ Name, Invalid string }

func (s spec) Validate() error {
	if s.Invalid != "" {
		return errors.New(s.Invalid)
	}
	return nil
}

func (s spec) WithDefaults() spec {
	if s.Name == "" {
		s.Name = "default"
	}
	return s
}

func (s spec) CheckInPlace(st []string) error {
	if len(st) > 0 && st[0] != s.Name {
		return errors.New("renamed")
	}
	return nil
}

func record(_ context.Context, s spec, st *[]string) error {
	*st = append(*st, s.Name)
	return nil
}

func TestCreateAndUpdatePrepareTheSpec(t *testing.T) {
	ctx := context.Background()
	st, err := Create(ctx, time.Second, spec{}, record, func(context.Context, []string) ([]string, error) { return nil, nil })
	if err != nil || len(st) != 1 || st[0] != "default" {
		t.Fatalf("Create = %v, %v; want the spec with its defaults applied", st, err)
	}
	if st, err = Update(ctx, spec{Name: "default"}, st, record); err != nil || len(st) != 2 {
		t.Errorf("Update = %v, %v; want the spec applied in place", st, err)
	}
	if got, err := Update(ctx, spec{Name: "other"}, st, record); err == nil || len(got) != 2 {
		t.Errorf("Update of a new name = %v, %v; want the error and the state unchanged", got, err)
	}
	if got, err := Update(ctx, spec{Invalid: "bad"}, st, record); err == nil || err.Error() != "bad" || len(got) != 2 {
		t.Errorf("Update of an invalid spec = %v, %v; want its error and the state unchanged", got, err)
	}
}
