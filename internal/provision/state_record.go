package provision

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// StateVersion is the version of the State's encoding (EncodeState). A
// change that is more than a new field (a field renamed, removed or given
// another meaning) raises it, and DecodeState converts the older encodings.
//
// Version 0 is the encoding from before versions were recorded: the State
// itself, with the same field names as version 1.
const StateVersion = 1

// ErrNewerState is returned for a State recorded by a newer provider.
var ErrNewerState = errors.New("the state was recorded by a newer provider")

// stateRecord is the versioned encoding of a State.
type stateRecord struct {
	Version int   `json:"version"`
	State   State `json:"state"`
}

// EncodeState encodes st with its version, for Terraform's private state.
func EncodeState(st State) ([]byte, error) {
	return json.Marshal(stateRecord{Version: StateVersion, State: st})
}

// DecodeState decodes what EncodeState (or an earlier version) wrote. A
// field it does not know is an error, not an empty value: the State says
// what exists, and a component it lost sight of would be left behind.
func DecodeState(b []byte) (State, error) {
	var head struct {
		Version *int            `json:"version"`
		State   json.RawMessage `json:"state"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return State{}, fmt.Errorf("decoding the recorded state: %w", err)
	}
	body := []byte(head.State)
	switch {
	case head.Version == nil:
		body = b // version 0: the State itself
	case *head.Version > StateVersion:
		return State{}, fmt.Errorf("%w (version %d; this provider reads up to %d): upgrade the provider", ErrNewerState, *head.Version, StateVersion)
	}
	var st State
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	if err := d.Decode(&st); err != nil {
		return State{}, fmt.Errorf("decoding the recorded state: %w", err)
	}
	return st, nil
}
